//! Model::session must free the session it created when a later step fails.
//! reset_model_get_info cannot fail on a live model through the public API, so
//! this test binary defines it (and reset_session_free) itself: the linker
//! binds the crate's calls to these definitions, which forward to libreset's
//! through dlsym(RTLD_NEXT), fail on request and count frees.  A binary of its
//! own, so no other test goes through them.
#![cfg(all(target_os = "linux", target_env = "gnu"))]
use reset::{Backend, Model, ModelOptions, Weights};
use reset_sys as sys;
use std::ffi::c_void;
use std::os::raw::c_char;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

static FAIL_INFO: AtomicBool = AtomicBool::new(false);
static SESSIONS_FREED: AtomicUsize = AtomicUsize::new(0);

extern "C" {
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

/// libreset's own definition of `name` (a NUL-terminated symbol name).
unsafe fn next(name: &[u8]) -> *mut c_void {
    const RTLD_NEXT: *mut c_void = -1isize as *mut c_void;
    let symbol = dlsym(RTLD_NEXT, name.as_ptr() as *const c_char);
    assert!(!symbol.is_null(), "dlsym(RTLD_NEXT) found no {}", String::from_utf8_lossy(name));
    symbol
}

#[no_mangle]
pub unsafe extern "C" fn reset_model_get_info(model: *const sys::reset_model, info: *mut sys::reset_model_info)
                                              -> sys::reset_status {
    if FAIL_INFO.load(Ordering::SeqCst) {
        return sys::reset_status_RESET_ERR_INTERNAL;
    }
    type F = unsafe extern "C" fn(*const sys::reset_model, *mut sys::reset_model_info) -> sys::reset_status;
    let real: F = std::mem::transmute(next(b"reset_model_get_info\0"));
    real(model, info)
}

#[no_mangle]
pub unsafe extern "C" fn reset_session_free(session: *mut sys::reset_session) {
    if !session.is_null() {
        SESSIONS_FREED.fetch_add(1, Ordering::SeqCst);
    }
    type F = unsafe extern "C" fn(*mut sys::reset_session);
    let real: F = std::mem::transmute(next(b"reset_session_free\0"));
    real(session)
}

#[test]
fn a_session_is_freed_when_creating_it_fails_after_reset_session_create() {
    let source = PathBuf::from(std::env::var("RESET_SOURCE_DIR").unwrap_or_else(|_| "../../..".into()));
    let options = ModelOptions { weights: Weights::Bf16, backend: Backend::Cpu, ..ModelOptions::default() };
    let model = Model::load(source.join("tests/fixtures/models/qwen3-tied"), &options).expect("fixture model");
    // The overrides are in use: a working session is freed through them.
    drop(model.session(16, 1).unwrap());
    assert_eq!(SESSIONS_FREED.load(Ordering::SeqCst), 1, "reset_session_free was not interposed");

    FAIL_INFO.store(true, Ordering::SeqCst);
    let result = model.session(16, 1);
    FAIL_INFO.store(false, Ordering::SeqCst);
    assert_eq!(result.err().expect("the injected failure").status, sys::reset_status_RESET_ERR_INTERNAL);
    assert_eq!(SESSIONS_FREED.load(Ordering::SeqCst), 2, "the session of the failed Model::session leaked");
}
