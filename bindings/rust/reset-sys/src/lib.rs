//! Raw declarations of libreset's C ABI, generated from `include/reset.h` by
//! the `bindgen` command at build time (see build.rs).  Every function is
//! `unsafe`; the `reset` crate wraps them safely.  The header is the manual.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case, dead_code)]

include!(concat!(env!("OUT_DIR"), "/reset_bindings.rs"));
