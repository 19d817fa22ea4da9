// Package native is libreset's C ABI (include/reset.h) as SWIG generates it
// from native.i: handles as uintptr, text as Go strings and byte slices,
// arrays as slices, structs as proxies over C memory.  It is generated, not
// committed (bindings/go/.gitignore): run
//
//	go generate ./internal/native        (from bindings/go; needs swig 4)
//
// with RESET_INCLUDE_DIR naming the folder that holds reset.h when it is not
// this source tree's include/.  Package reset is the API to use; this one is
// internal to the module.
package native

//go:generate sh generate.sh
