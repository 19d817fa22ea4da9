module libreset.dev/reset

go 1.19
