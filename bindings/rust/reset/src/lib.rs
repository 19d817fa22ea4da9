//! Safe Rust bindings of libreset (`include/reset.h` is the manual).
//!
//! ```no_run
//! let model = reset::Model::load("tests/fixtures/models/qwen3-tied", &reset::ModelOptions::default())?;
//! let mut session = model.session(128, 1)?;
//! session.set_policy(&reset::PolicyParams::greedy())?;
//! session.prefill(&[1, 2, 3])?;
//! for step in session.generate(16) { print!("{}", step?.text); }
//! # Ok::<(), reset::Error>(())
//! ```
//!
//! Ownership: every type owns its handle and frees it in `Drop`.  A
//! [`Session`] borrows its [`Model`], so the model outlives it; a
//! [`TokenizerRef`] borrows the model that carries it.  Strings are copied
//! both ways: nothing this crate returns points into libreset's memory.
//!
//! Threads (the header's contract): a `Model` and a `Tokenizer` are immutable
//! and may be shared, so they are `Send + Sync`.  A `Session` and a `Policy`
//! are used by one thread at a time: `Send` but not `Sync`.  Only
//! cancellation may reach a session from another thread, through the
//! `Send + Sync` [`Canceller`] it hands out.
use reset_sys as sys;
use std::ffi::{CStr, CString};
use std::fmt;
use std::marker::PhantomData;
use std::mem::size_of;
use std::os::raw::c_char;
use std::path::Path;
use std::ptr::{self, NonNull};
use std::cell::Cell;
use std::sync::Arc;

/// The ABI major version these bindings were written for.
pub const ABI_MAJOR: u32 = sys::RESET_VERSION_MAJOR;
/// The oldest minor of [`ABI_MAJOR`] these bindings run on: the one they were written for (minors only
/// append functions and struct fields; 0.2 appended the penalties to reset_policy_params, 0.3 logprob to
/// reset_step and reset_decision, repetition_penalty to reset_policy_params and reset_policy_add_context, 0.4
/// top_logprobs to reset_session_options and reset_step, 0.5 reset_stop_options / reset_set_stop,
/// reset_session_held_text, the end reasons STOP and LENGTH and stop_index to reset_step, 0.6 reset_truncate /
/// reset_truncate_sequence, reset_session_tokens and reset_logit_bias / reset_set_logit_bias, 0.7
/// reset_copy_sequence and reset_policy_set_logit_bias, 0.8 reset_save_sequence / reset_load_sequence, 0.9
/// reset_save_sequence_to_memory / reset_load_sequence_from_memory and reset_session_get_options, 0.10
/// checkpoint_format and kv_cache_scales to reset_model_info, 0.11 tools_json and tool_calls_json to
/// reset_chat_options, 0.12 file_access to reset_model_options).
pub const ABI_MINOR: u32 = 12;

// A header older than ABI_MINOR lacks fields these bindings set: fail the build, not a call.
const _: () = assert!(sys::RESET_VERSION_MINOR >= ABI_MINOR, "reset.h is older than these bindings need");

/// A failed libreset call: the `reset_status` number, its constant name and
/// the library's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub status: u32,
    pub name: String,
    pub message: String,
}

impl Error {
    /// RESET_ERR_IO: a missing or unreadable file.
    pub const IO: u32 = sys::reset_status_RESET_ERR_IO;
    /// RESET_ERR_CANCELLED: [`Session::cancel`] stopped the call.
    pub const CANCELLED: u32 = sys::reset_status_RESET_ERR_CANCELLED;
    /// RESET_ERR_UNSUPPORTED, also used for a library of another ABI major.
    pub const UNSUPPORTED: u32 = sys::reset_status_RESET_ERR_UNSUPPORTED;
    /// RESET_ERR_INVALID_ARGUMENT, also used for text with an interior NUL.
    pub const INVALID_ARGUMENT: u32 = sys::reset_status_RESET_ERR_INVALID_ARGUMENT;
    /// RESET_ERR_OUT_OF_RANGE: a token id or sequence index outside its range.
    pub const OUT_OF_RANGE: u32 = sys::reset_status_RESET_ERR_OUT_OF_RANGE;
    /// RESET_ERR_CONTEXT_OVERFLOW: a sequence would pass the session's max_context.
    pub const CONTEXT_OVERFLOW: u32 = sys::reset_status_RESET_ERR_CONTEXT_OVERFLOW;
    /// RESET_ERR_STATE: a call out of order (decoding before any prefill, say).
    pub const STATE: u32 = sys::reset_status_RESET_ERR_STATE;
    /// RESET_ERR_FORMAT: a malformed file (0.8: not a libreset sequence file, or a damaged one).
    pub const FORMAT: u32 = sys::reset_status_RESET_ERR_FORMAT;
    /// RESET_ERR_SHAPE: shapes that disagree (0.8: a sequence file of another model, weights format or KV cache type).
    pub const SHAPE: u32 = sys::reset_status_RESET_ERR_SHAPE;

    /// The error of a failing call, read right after it on the same thread
    /// (reset_last_error is per thread).
    fn last(status: sys::reset_status) -> Error {
        unsafe {
            Error {
                status,
                name: CStr::from_ptr(sys::reset_status_name(status)).to_string_lossy().into_owned(),
                message: CStr::from_ptr(sys::reset_last_error()).to_string_lossy().into_owned(),
            }
        }
    }

    fn local(status: u32, message: String) -> Error {
        let name = unsafe { CStr::from_ptr(sys::reset_status_name(status)).to_string_lossy().into_owned() };
        Error { status, name, message }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

fn check(status: sys::reset_status) -> Result<()> {
    if status == sys::reset_status_RESET_OK {
        Ok(())
    } else {
        Err(Error::last(status))
    }
}

/// Refuse a libreset of another ABI major: its structs may differ, and
/// calling it would corrupt memory silently.  Refuse an older minor too: it
/// lacks functions or fields these bindings use, and would fail their calls
/// with errors that name no version (a reset_policy_params larger than it
/// knows is a bad struct_size to it).
pub fn check_abi(version: u32) -> Result<()> {
    let (major, minor, patch) = (version / 10000, version / 100 % 100, version % 100);
    if major != ABI_MAJOR {
        let message =
            format!("libreset {major}.{minor}.{patch} has ABI major {major}, but these bindings need {ABI_MAJOR}");
        return Err(Error::local(Error::UNSUPPORTED, message));
    }
    if minor < ABI_MINOR {
        let message = format!(
            "libreset {major}.{minor}.{patch} is older than these bindings need ({ABI_MAJOR}.{ABI_MINOR} or newer): \
             it lacks functions or fields they use"
        );
        return Err(Error::local(Error::UNSUPPORTED, message));
    }
    Ok(())
}

/// Every constructor runs this first, so a mismatched library fails before
/// any struct crosses.  (reset_version is a constant read: no need to cache
/// it, which also keeps the crate within Debian's rustc 1.63.)
fn ensure_abi() -> Result<()> {
    check_abi(unsafe { sys::reset_version() })
}

/// The loaded library's version, e.g. "0.1.0 (cpu)".
pub fn version() -> String {
    unsafe { CStr::from_ptr(sys::reset_version_string()).to_string_lossy().into_owned() }
}

fn c_string(text: &str, what: &str) -> Result<CString> {
    CString::new(text).map_err(|_| Error::local(Error::INVALID_ARGUMENT, format!("{what} holds a NUL byte")))
}

/// A path as the C string the OS uses.  On Unix that is its raw bytes, so a
/// non-UTF-8 name reaches the library as itself (to_string_lossy would turn
/// it into another path, with U+FFFD).
#[cfg(unix)]
fn c_path(path: &Path) -> Result<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Error::local(Error::INVALID_ARGUMENT, "the path holds a NUL byte".to_string()))
}

/// Elsewhere the library takes UTF-8: a path that is not Unicode is refused, never altered.
#[cfg(not(unix))]
fn c_path(path: &Path) -> Result<CString> {
    let text = path.to_str().ok_or_else(|| {
        Error::local(Error::INVALID_ARGUMENT, format!("the path {} is not valid Unicode", path.display()))
    })?;
    c_string(text, "the path")
}

/// The snprintf idiom of reset.h: ask for the size, then fill.
fn read_buffer<T: Default + Clone>(
    mut call: impl FnMut(*mut T, usize, &mut usize) -> sys::reset_status,
) -> Result<Vec<T>> {
    let mut needed = 0usize;
    let mut buffer: Vec<T> = vec![T::default(); 256];
    loop {
        let status = call(buffer.as_mut_ptr(), buffer.len(), &mut needed);
        if status == sys::reset_status_RESET_ERR_BUFFER_TOO_SMALL && needed > buffer.len() {
            buffer.resize(needed, T::default());
            continue;
        }
        check(status)?;
        buffer.truncate(needed);
        return Ok(buffer);
    }
}

fn utf8(bytes: Vec<u8>) -> Result<String> {
    String::from_utf8(bytes).map_err(|e| Error::local(sys::reset_status_RESET_ERR_BAD_UTF8, e.to_string()))
}

// --------------------------------------------------------------------- models

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weights {
    Auto = 0,
    Bf16 = 1,
    Nvfp4W4A16 = 2,
    Nvfp4W4A4 = 3,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Auto = 0,
    Cpu = 1,
    Cuda = 2,
}

/// (0.12) How [`Model::load`] brings the safetensors files into memory (reset_file_access).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileAccess {
    /// Mapped (mmap), the library's default: quick to open, the pages are the page cache's.  A file truncated or
    /// rewritten in place while mapped kills the process with SIGBUS, which no `Error` can report.
    Map = 0,
    /// Read whole into memory the model owns (llama.cpp's --no-mmap): a file changing while it is read is
    /// `Error::IO`, and the files are not read afterwards.  Costs their size in host memory.
    Read = 1,
}

/// reset_model_options; `Default` gives the library's defaults.
#[derive(Clone, Debug)]
pub struct ModelOptions {
    pub weights: Weights,
    pub backend: Backend,
    pub quantize_lm_head: bool,
    pub device: i32,
    pub threads: i32,
    /// (0.12) [`FileAccess::Map`] by default.
    pub file_access: FileAccess,
}

impl Default for ModelOptions {
    fn default() -> Self {
        ModelOptions {
            weights: Weights::Auto,
            backend: Backend::Auto,
            quantize_lm_head: false,
            device: 0,
            threads: 0,
            file_access: FileAccess::Map,
        }
    }
}

/// How a session stores its KV cache (reset_kv_cache).  Both backends round keys and values to it the same way
/// when they are written, so the CPU backend computes with exactly the cache values the CUDA backend reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KvCache {
    /// BF16 keys and values, rounded to nearest even: the library's default.
    Bf16 = 0,
    /// FP8 E4M3, rounded to nearest even, saturating at +-448, scale 1: half the KV bytes of BF16, so on the CUDA
    /// backend a long reasoning context fits in half the cache memory and decodes faster (each step reads half the
    /// bytes).  Sequence files hold half the KV bytes too.  The CPU backend rounds to it but keeps every type in FP32
    /// storage, so it saves no memory there.
    Fp8 = 1,
    /// CPU backend only: FP32, unrounded (the reference without cache rounding); the CUDA backend refuses it with
    /// `Error::UNSUPPORTED`.
    Fp32 = 2,
}

impl KvCache {
    /// From the value the library wrote (reset_session_get_options).
    fn from_raw(raw: sys::reset_kv_cache) -> Result<KvCache> {
        match raw {
            sys::reset_kv_cache_RESET_KV_CACHE_BF16 => Ok(KvCache::Bf16),
            sys::reset_kv_cache_RESET_KV_CACHE_FP8 => Ok(KvCache::Fp8),
            sys::reset_kv_cache_RESET_KV_CACHE_FP32 => Ok(KvCache::Fp32),
            // A newer library's type: guessing one of ours would make a session of it another cache.
            other => {
                let message = format!("KV cache type {other} is unknown to these bindings");
                Err(Error::local(Error::UNSUPPORTED, message))
            }
        }
    }
}

/// The reset_session_options callers set; `Default` gives the library's defaults, [`Session::options`] a session's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionOptions {
    /// Tokens per sequence; 0 = min(model maximum, 4096).
    pub max_context: i32,
    /// Parallel sequences 1..=8 sharing one prompt.
    pub sequences: i32,
    /// The KV cache's element type; [`KvCache::Bf16`] by default.  [`KvCache::Fp8`] halves the KV bytes of a long
    /// reasoning context on the CUDA backend; [`KvCache::Fp32`] is the CPU backend's only (`Error::UNSUPPORTED` on
    /// the CUDA backend).  A sequence file keeps the type it was saved with: [`Session::load_sequence`] refuses
    /// another with `Error::SHAPE`.
    pub kv_cache: KvCache,
    /// 0.4: how many of the most likely tokens each step reports in [`Step::top_logprobs`], 0..=20
    /// (OpenAI's top_logprobs, vLLM's logprobs); 0 = none.
    pub top_logprobs: i32,
    /// CUDA backend (the CPU backend ignores it): launch each kernel of a decode step one by one instead of
    /// replaying the step's CUDA graph (slower; for comparison and debugging).  `false` by default.
    pub eager: bool,
    /// CUDA backend, NVFP4 models (the CPU backend ignores it): prompt chunks of at least this many tokens (up to
    /// 256 per chunk) are prefilled through the GEMM path (weights dequantized to FP16 a slice at a time, then
    /// cuBLAS with FP32 accumulation); shorter chunks run through the decode GEMV, 8 tokens per pass.  0 = the
    /// measured crossover (docs/cuda-engine.md), the default; -1 = never (GEMV path only); below -1 is
    /// `Error::INVALID_ARGUMENT`.  Both paths multiply the same values; they differ in FP32 summation order.
    pub prefill_gemm_tokens: i32,
    /// CUDA backend (the CPU backend ignores it): programmatic dependent launch (GPUs from sm_90 on), which places
    /// each kernel of a step on the GPU while the one before it finishes and hides most of the per-kernel launch
    /// ramp.  Same results either way.  `true` by default: on where the GPU supports it; `false` is plain stream
    /// order, for comparison.
    pub programmatic_launch: bool,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            max_context: 0,
            sequences: 1,
            kv_cache: KvCache::Bf16,
            top_logprobs: 0,
            eager: false,
            prefill_gemm_tokens: 0,
            programmatic_launch: true,
        }
    }
}

/// 0.10: where a model's NVFP4 weights come from (reset_checkpoint_format): [`ModelInfo::checkpoint_format`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckpointFormat {
    /// BF16/F16/F32 tensors: held in BF16, or quantized to NVFP4 on load.
    Unquantized,
    /// An NVIDIA ModelOpt NVFP4 export.
    ModelOpt,
    /// An llm-compressor NVFP4 export (compressed-tensors "nvfp4-pack-quantized").
    CompressedTensors,
    /// A format a newer library of the same ABI major reports, by its number (reading it must not fail).
    Unknown(u32),
}

impl CheckpointFormat {
    fn from_raw(raw: sys::reset_checkpoint_format) -> CheckpointFormat {
        match raw {
            sys::reset_checkpoint_format_RESET_CHECKPOINT_UNQUANTIZED => CheckpointFormat::Unquantized,
            sys::reset_checkpoint_format_RESET_CHECKPOINT_MODELOPT => CheckpointFormat::ModelOpt,
            sys::reset_checkpoint_format_RESET_CHECKPOINT_COMPRESSED_TENSORS => CheckpointFormat::CompressedTensors,
            other => CheckpointFormat::Unknown(other),
        }
    }
}

/// A subset of reset_model_info that callers need most.
#[derive(Clone, Debug)]
pub struct ModelInfo {
    pub architecture: String,
    pub n_layers: i32,
    pub vocab_size: i32,
    pub eos_ids: Vec<i32>,
    pub bos_id: i32,
    pub n_parameters: u64,
    /// 0.10: the checkpoint's NVFP4 format, or [`CheckpointFormat::Unquantized`]: the checkpoint's, not the
    /// weights' (a BF16 checkpoint loaded as NVFP4 is still unquantized).
    pub checkpoint_format: CheckpointFormat,
    /// 0.10: the checkpoint carries calibrated FP8 KV-cache scales (llm-compressor's kv_cache_scheme, ModelOpt's FP8
    /// KV cache), with which a [`KvCache::Fp8`] cache stores e4m3(x / scale); false: scale 1.
    pub kv_cache_scales: bool,
}

/// A loaded model: immutable, shareable by any number of sessions and threads.
pub struct Model {
    raw: NonNull<sys::reset_model>,
}

// reset.h: "A reset_model is immutable after load and may be shared by any
// number of sessions and threads."
unsafe impl Send for Model {}
unsafe impl Sync for Model {}

impl Model {
    /// Load a Hugging Face model directory (reset_model_load).
    pub fn load(path: impl AsRef<Path>, options: &ModelOptions) -> Result<Model> {
        ensure_abi()?;
        let path = c_path(path.as_ref())?;
        let mut raw_options: sys::reset_model_options = unsafe { std::mem::zeroed() };
        unsafe { sys::reset_model_options_init_sized(&mut raw_options, size_of::<sys::reset_model_options>()) };
        raw_options.weights = options.weights as sys::reset_weights;
        raw_options.backend = options.backend as sys::reset_backend;
        raw_options.quantize_lm_head = options.quantize_lm_head as i32;
        raw_options.device = options.device;
        raw_options.threads = options.threads;
        raw_options.file_access = options.file_access as sys::reset_file_access;
        let mut raw = ptr::null_mut();
        check(unsafe { sys::reset_model_load(path.as_ptr(), &raw_options, &mut raw) })?;
        Ok(Model { raw: NonNull::new(raw).expect("reset_model_load succeeded without a model") })
    }

    pub fn info(&self) -> Result<ModelInfo> {
        let mut info: sys::reset_model_info = unsafe { std::mem::zeroed() };
        unsafe { sys::reset_model_info_init_sized(&mut info, size_of::<sys::reset_model_info>()) };
        check(unsafe { sys::reset_model_get_info(self.raw.as_ptr(), &mut info) })?;
        let arch = unsafe { CStr::from_ptr(info.architecture.as_ptr()) };
        Ok(ModelInfo {
            architecture: arch.to_string_lossy().into_owned(),
            n_layers: info.n_layers,
            vocab_size: info.vocab_size,
            eos_ids: info.eos_ids[..info.n_eos.clamp(0, 8) as usize].to_vec(),
            bos_id: info.bos_id,
            n_parameters: info.n_parameters,
            checkpoint_format: CheckpointFormat::from_raw(info.checkpoint_format),
            kv_cache_scales: info.kv_cache_scales != 0,
        })
    }

    /// A session on this model (reset_session_create); 0 for max_context means min(model, 4096).
    pub fn session(&self, max_context: i32, sequences: i32) -> Result<Session<'_>> {
        self.session_with(&SessionOptions { max_context, sequences, ..SessionOptions::default() })
    }

    /// A session with these options (reset_session_create); a `top_logprobs` outside 0..=20 or a
    /// `prefill_gemm_tokens` below -1 is `Error::INVALID_ARGUMENT`, and [`KvCache::Fp32`] on the CUDA backend
    /// `Error::UNSUPPORTED`.
    pub fn session_with(&self, session_options: &SessionOptions) -> Result<Session<'_>> {
        let mut options: sys::reset_session_options = unsafe { std::mem::zeroed() };
        unsafe { sys::reset_session_options_init_sized(&mut options, size_of::<sys::reset_session_options>()) };
        options.max_context = session_options.max_context;
        options.sequences = session_options.sequences;
        options.kv_cache = session_options.kv_cache as sys::reset_kv_cache;
        options.top_logprobs = session_options.top_logprobs;
        options.eager = session_options.eager as i32;
        // Not checked here: the library refuses a value below -1 and names it.
        options.prefill_gemm_tokens = session_options.prefill_gemm_tokens;
        // reset.h: 0 = on where the GPU supports it, -1 = off.
        options.programmatic_launch = if session_options.programmatic_launch { 0 } else { -1 };
        let mut raw = ptr::null_mut();
        check(unsafe { sys::reset_session_create(self.raw.as_ptr(), &options, &mut raw) })?;
        // Owned before anything else can fail: an early return must free it.
        let raw = NonNull::new(raw).expect("reset_session_create succeeded without a session");
        let handle = Arc::new(SessionHandle(raw));
        let vocab = self.info()?.vocab_size as usize;
        Ok(Session {
            handle,
            sequences: session_options.sequences.max(1) as usize,
            vocab,
            _model: PhantomData,
        })
    }

    /// The tokenizer the model directory carries, if any; it lives as long as the model.
    pub fn tokenizer(&self) -> Option<TokenizerRef<'_>> {
        let raw = unsafe { sys::reset_model_tokenizer(self.raw.as_ptr()) };
        NonNull::new(raw as *mut sys::reset_tokenizer).map(|raw| TokenizerRef { raw, _model: PhantomData })
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        unsafe { sys::reset_model_free(self.raw.as_ptr()) }
    }
}

// ------------------------------------------------------------------- policies

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyKind {
    Greedy = 0,
    Fixed = 1,
    /// ReSET: T_high / T_low per token from token and step entropy.
    Reset = 2,
    /// The paper's ablation: ReSET with the step gate off.
    Entropy = 3,
}

/// reset_policy_params.  `Default` gives the library's defaults (greedy;
/// ReSET's t_low and tau0 negative: the model's preset).
#[derive(Clone, Debug)]
pub struct PolicyParams {
    pub kind: PolicyKind,
    pub temperature: f32,
    pub top_k: i32,
    pub top_p: f32,
    pub min_p: f32,
    pub seed: u64,
    pub t_high: f32,
    pub t_low: f32,
    pub tau0: f32,
    pub window: i32,
    pub preset: Option<String>,
    /// Also starts the penalties' token counts afresh.
    pub reset_state: bool,
    /// [-2, 2], 0 = off: a token the sequence has generated c > 0 times in this generation has its
    /// logit lowered to z - frequency_penalty * c - presence_penalty (before temperature and draw).
    pub presence_penalty: f32,
    pub frequency_penalty: f32,
    /// [0.1, 10], 1 = off (0.3): every token of the sequence's context (prompt, earlier turns, generated tokens)
    /// has its logit z divided by it when z > 0, multiplied otherwise, before the two penalties above.
    pub repetition_penalty: f32,
}

impl Default for PolicyParams {
    /// reset_policy_params_init's values (greedy).
    fn default() -> Self {
        let mut raw: sys::reset_policy_params = unsafe { std::mem::zeroed() };
        unsafe { sys::reset_policy_params_init_sized(&mut raw, size_of::<sys::reset_policy_params>()) };
        PolicyParams::from_raw(&raw).expect("reset_policy_params_init writes a kind these bindings know")
    }
}

impl PolicyParams {
    pub fn greedy() -> Self {
        PolicyParams::default()
    }

    /// ReSET with explicit parameters (reset-algorithm.md).
    pub fn reset(t_high: f32, t_low: f32, tau0: f32, window: i32) -> Self {
        PolicyParams { kind: PolicyKind::Reset, t_high, t_low, tau0, window, ..PolicyParams::default() }
    }

    /// The C struct; `preset` must outlive its use.
    fn raw(&self, preset: &Option<CString>) -> sys::reset_policy_params {
        let mut raw: sys::reset_policy_params = unsafe { std::mem::zeroed() };
        unsafe { sys::reset_policy_params_init_sized(&mut raw, size_of::<sys::reset_policy_params>()) };
        raw.kind = self.kind as sys::reset_policy_kind;
        raw.temperature = self.temperature;
        raw.top_k = self.top_k;
        raw.top_p = self.top_p;
        raw.min_p = self.min_p;
        raw.seed = self.seed;
        raw.t_high = self.t_high;
        raw.t_low = self.t_low;
        raw.tau0 = self.tau0;
        raw.window = self.window;
        raw.preset = preset.as_ref().map_or(ptr::null(), |p| p.as_ptr());
        raw.reset_state = self.reset_state as i32;
        raw.presence_penalty = self.presence_penalty;
        raw.frequency_penalty = self.frequency_penalty;
        raw.repetition_penalty = self.repetition_penalty;
        raw
    }

    fn preset(&self) -> Result<Option<CString>> {
        self.preset.as_deref().map(|p| c_string(p, "the preset")).transpose()
    }

    /// From the C struct the library wrote; its preset is not read (the library writes NULL).
    fn from_raw(raw: &sys::reset_policy_params) -> Result<PolicyParams> {
        let kind = match raw.kind {
            sys::reset_policy_kind_RESET_POLICY_GREEDY => PolicyKind::Greedy,
            sys::reset_policy_kind_RESET_POLICY_FIXED => PolicyKind::Fixed,
            sys::reset_policy_kind_RESET_POLICY_RESET => PolicyKind::Reset,
            sys::reset_policy_kind_RESET_POLICY_ENTROPY => PolicyKind::Entropy,
            // A newer library's kind: guessing one of ours would make set_policy of it change the policy.
            other => {
                let message = format!("policy kind {other} is unknown to these bindings");
                return Err(Error::local(Error::UNSUPPORTED, message));
            }
        };
        Ok(PolicyParams {
            kind,
            temperature: raw.temperature,
            top_k: raw.top_k,
            top_p: raw.top_p,
            min_p: raw.min_p,
            seed: raw.seed,
            t_high: raw.t_high,
            t_low: raw.t_low,
            tau0: raw.tau0,
            window: raw.window,
            preset: None,
            reset_state: false,
            presence_penalty: raw.presence_penalty,
            frequency_penalty: raw.frequency_penalty,
            repetition_penalty: raw.repetition_penalty,
        })
    }
}

/// What a policy decided for one token (reset_decision).
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    pub temperature: f32,
    pub entropy: f32,
    pub step_entropy: f32,
    pub global_mean: f32,
    pub threshold: f32,
    pub step_index: i32,
    pub boundary: bool,
    pub uncertain: bool,
    /// 0.3: [`Policy::sample`]'s drawn token's log p under softmax(raw logits), as [`Step::logprob`];
    /// NaN from [`Policy::decide`], which draws nothing.
    pub logprob: f32,
}

/// The standalone ReSET policy, for logits computed by any engine.
pub struct Policy {
    raw: NonNull<sys::reset_policy>,
}

// One thread at a time (reset.h), so it may move between threads but not be shared.
unsafe impl Send for Policy {}

impl Policy {
    /// reset_policy_create with the step delimiter sets (NL: ids of "\n", DNL: ids containing "\n\n").
    pub fn new(
        params: &PolicyParams, newline_ids: &[i32], double_newline_ids: &[i32], sequence: i32,
    ) -> Result<Policy> {
        ensure_abi()?;
        let preset = params.preset()?;
        let raw_params = params.raw(&preset);
        let mut options: sys::reset_policy_options = unsafe { std::mem::zeroed() };
        unsafe { sys::reset_policy_options_init_sized(&mut options, size_of::<sys::reset_policy_options>()) };
        options.newline_ids = newline_ids.as_ptr();
        options.n_newline_ids = newline_ids.len();
        options.double_newline_ids = double_newline_ids.as_ptr();
        options.n_double_newline_ids = double_newline_ids.len();
        options.sequence = sequence;
        let mut raw = ptr::null_mut();
        check(unsafe { sys::reset_policy_create(&raw_params, &options, &mut raw) })?;
        Ok(Policy { raw: NonNull::new(raw).expect("reset_policy_create succeeded without a policy") })
    }

    /// Replace the parameters; the step state and the penalties' token counts are kept unless `reset_state`.
    pub fn set_params(&mut self, params: &PolicyParams) -> Result<()> {
        let preset = params.preset()?;
        check(unsafe { sys::reset_policy_set_params(self.raw.as_ptr(), &params.raw(&preset)) })
    }

    fn decision(d: &sys::reset_decision) -> Decision {
        Decision {
            temperature: d.temperature,
            entropy: d.entropy,
            step_entropy: d.step_entropy,
            global_mean: d.global_mean,
            threshold: d.threshold,
            step_index: d.step_index,
            boundary: d.boundary != 0,
            uncertain: d.uncertain != 0,
            logprob: d.logprob,
        }
    }

    /// Decide the next token's temperature from its raw logits.
    pub fn decide(&mut self, logits: &[f32]) -> Result<Decision> {
        let mut d: sys::reset_decision = unsafe { std::mem::zeroed() };
        unsafe { sys::reset_decision_init_sized(&mut d, size_of::<sys::reset_decision>()) };
        check(unsafe { sys::reset_policy_decide(self.raw.as_ptr(), logits.as_ptr(), logits.len(), &mut d) })?;
        Ok(Self::decision(&d))
    }

    /// Decide, then draw the token as a session would; accept it (or another) after.
    pub fn sample(&mut self, logits: &[f32]) -> Result<(i32, Decision)> {
        let mut d: sys::reset_decision = unsafe { std::mem::zeroed() };
        unsafe { sys::reset_decision_init_sized(&mut d, size_of::<sys::reset_decision>()) };
        let mut token = -1;
        check(unsafe {
            sys::reset_policy_sample(self.raw.as_ptr(), logits.as_ptr(), logits.len(), &mut token, &mut d)
        })?;
        Ok((token, Self::decision(&d)))
    }

    pub fn accept(&mut self, token: i32) -> Result<()> {
        check(unsafe { sys::reset_policy_accept(self.raw.as_ptr(), token) })
    }

    /// Record context tokens the policy did not accept itself (the prompt, a user's turn), as a session does
    /// at every prefill: only the repetition penalty lowers them.  A negative id is `Error::OUT_OF_RANGE`,
    /// and nothing is recorded.
    pub fn add_context(&mut self, ids: &[i32]) -> Result<()> {
        check(unsafe { sys::reset_policy_add_context(self.raw.as_ptr(), ids.as_ptr(), ids.len()) })
    }

    /// Start a new sequence: forget the step state, the accepted tokens, the penalties' counts and the
    /// context tokens.
    pub fn reset(&mut self) -> Result<()> {
        check(unsafe { sys::reset_policy_reset(self.raw.as_ptr()) })
    }

    /// 0.7: set the logit bias of [`sample`](Policy::sample) from its next call on (reset_policy_set_logit_bias), as
    /// [`Session::set_logit_bias`] does a session's: `(token, bias)` pairs, at most [`MAX_LOGIT_BIAS`], each finite in
    /// [-100, 100] or `f32::NEG_INFINITY` to ban the token; they replace the bias in force, and none removes it.  A
    /// listed token's logit z becomes z + bias after the penalties and before the temperature, the truncation and the
    /// draw, greedy included; [`decide`](Policy::decide), the entropy, the ReSET decision and [`Decision::logprob`]
    /// still see the raw logits.  The bias stays through [`set_params`](Policy::set_params) and
    /// [`reset`](Policy::reset).  The policy knows no vocabulary, so [`sample`](Policy::sample) is
    /// `Error::OUT_OF_RANGE` for logits too short to hold a listed token, and `Error::INVALID_ARGUMENT` for logits
    /// whose every unbanned entry is -inf.  Refused biases are [`Session::set_logit_bias`]'s errors (a negative token
    /// `Error::OUT_OF_RANGE`) and leave the bias in force as it was.
    pub fn set_logit_bias(&mut self, bias: &[(i32, f32)]) -> Result<()> {
        let entries = logit_bias_entries(bias);
        check(unsafe { sys::reset_policy_set_logit_bias(self.raw.as_ptr(), entries.as_ptr(), entries.len()) })
    }

    /// 0.7: remove the logit bias (reset_policy_set_logit_bias with count 0): [`sample`](Policy::sample) biases no
    /// logit.
    pub fn clear_logit_bias(&mut self) -> Result<()> {
        check(unsafe { sys::reset_policy_set_logit_bias(self.raw.as_ptr(), ptr::null(), 0) })
    }
}

impl Drop for Policy {
    fn drop(&mut self) {
        unsafe { sys::reset_policy_free(self.raw.as_ptr()) }
    }
}

// ------------------------------------------------------------------- sessions

/// 0.5: the stop conditions of [`Session::set_stop`] (reset_stop_options); `Default` is none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StopOptions {
    /// Stop strings (up to 16, each 1..=256 bytes of UTF-8): a sequence ends ([`EndReason::Stop`]) at the first
    /// token after which its generated text contains one, matched on the text however it was split into tokens.
    /// The text before the string is reported, the string too with `include_stop_string`; text that may begin
    /// one is held back until later tokens decide.  The model needs a tokenizer.
    pub strings: Vec<String>,
    /// Stop ids (up to 256, in the vocabulary): a sequence that draws one ends ([`EndReason::Stop`]) as on an
    /// end-of-generation id.
    pub ids: Vec<i32>,
    /// The most tokens a sequence generates after each prefill of it: the step that draws the max_tokens-th
    /// ends it ([`EndReason::Length`]) unless that token ends it otherwise.  0 = no limit.
    pub max_tokens: i32,
    /// A matched stop string is reported as part of the text.
    pub include_stop_string: bool,
    /// An end-of-generation id does not end a sequence: it is reported and enters the context like any other
    /// token (vLLM's ignore_eos, llama.cpp's --ignore-eos), so a benchmark decodes as many tokens as it asks for.
    /// Stop ids, stop strings and `max_tokens` still end it.
    pub ignore_eos: bool,
}

/// 0.5: why a sequence stopped (reset_end_reason).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// Still generating.
    None,
    /// It produced an end-of-generation id (that token is reported); never with [`StopOptions::ignore_eos`].
    Eos,
    /// It had ended in an earlier step: the token is -1.
    Finished,
    /// It produced a stop string or a stop id of [`Session::set_stop`]; [`Step::stop_index`] says which.
    Stop,
    /// It generated [`StopOptions::max_tokens`] tokens.
    Length,
    /// A reason a newer library of the same ABI major reports, by its number (reading it must not fail).
    Unknown(u32),
}

impl EndReason {
    fn from_raw(raw: sys::reset_end_reason) -> EndReason {
        match raw {
            sys::reset_end_reason_RESET_END_NONE => EndReason::None,
            sys::reset_end_reason_RESET_END_EOS => EndReason::Eos,
            sys::reset_end_reason_RESET_END_FINISHED => EndReason::Finished,
            sys::reset_end_reason_RESET_END_STOP => EndReason::Stop,
            sys::reset_end_reason_RESET_END_LENGTH => EndReason::Length,
            other => EndReason::Unknown(other),
        }
    }
}

/// 0.6: the most entries one [`Session::set_logit_bias`] or [`Policy::set_logit_bias`] takes (RESET_MAX_LOGIT_BIAS).
pub const MAX_LOGIT_BIAS: usize = sys::RESET_MAX_LOGIT_BIAS as usize;

/// `(token, bias)` pairs as reset_logit_bias entries: a tuple's layout is Rust's to choose, so they are copied (and
/// the library copies them in turn).
fn logit_bias_entries(bias: &[(i32, f32)]) -> Vec<sys::reset_logit_bias> {
    bias.iter().map(|&(token, bias)| sys::reset_logit_bias { token, bias }).collect()
}

/// 0.4: one of a step's most likely tokens (reset_token_logprob).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TokenLogprob {
    pub token: i32,
    /// log p(token), natural log, of softmax(raw logits), as [`Step::logprob`] (-inf for a logit of -inf).
    pub logprob: f32,
}

/// What one decode step produced for one sequence, with the sampler's signals.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub sequence: i32,
    /// -1 when the sequence had ended in an earlier step.
    pub token: i32,
    pub end: bool,
    pub entropy: f32,
    pub step_entropy: f32,
    pub global_mean: f32,
    pub threshold: f32,
    pub temperature: f32,
    pub step_index: i32,
    pub boundary: bool,
    pub uncertain: bool,
    /// Complete UTF-8 (the library never splits a character), copied.
    pub text: String,
    /// 0.3: log p(token), natural log, of softmax(raw logits): the model's own probability of the token,
    /// before the temperature, the truncation and the penalties (vLLM's raw logprobs); NaN when there is no token.
    pub logprob: f32,
    /// 0.4: the session's `top_logprobs` most likely tokens of the same raw softmax, most likely first (ties in id
    /// order), copied; where the chosen token is among them, its entry's logprob equals `logprob` exactly.  Empty
    /// when the session asked for none or there is no token.
    pub top_logprobs: Vec<TokenLogprob>,
    /// 0.5: why the sequence ended ([`EndReason::None`] while it generates).
    pub end_reason: EndReason,
    /// 0.5: with [`EndReason::Stop`], the index of the stop string matched in [`StopOptions::strings`], or -1 for a
    /// stop id; else -1.
    pub stop_index: i32,
}

/// The C session, shared by a Session and its Cancellers; the last one frees
/// it.  A Canceller may outlive the Model: reset.h keeps a model alive until
/// its last session is freed.
struct SessionHandle(NonNull<sys::reset_session>);

// Only reset_session_cancel is reached through a shared SessionHandle from
// other threads (Canceller); everything else goes through the !Sync Session.
unsafe impl Send for SessionHandle {}
unsafe impl Sync for SessionHandle {}

impl Drop for SessionHandle {
    fn drop(&mut self) {
        unsafe { sys::reset_session_free(self.0.as_ptr()) }
    }
}

/// A decoding session: KV cache and sampler state on a model it borrows.
pub struct Session<'m> {
    handle: Arc<SessionHandle>,
    sequences: usize,
    vocab: usize,
    _model: PhantomData<(&'m Model, Cell<()>)>,
}

// One thread at a time (reset.h): movable to another thread, never shared.
// (The Cell in its PhantomData keeps it !Sync; Arc<SessionHandle> alone would be Sync.)
unsafe impl Send for Session<'_> {}

impl<'m> Session<'m> {
    fn raw(&self) -> *mut sys::reset_session {
        self.handle.0.as_ptr()
    }

    pub fn set_policy(&mut self, params: &PolicyParams) -> Result<()> {
        let preset = params.preset()?;
        check(unsafe { sys::reset_set_policy(self.raw(), &params.raw(&preset)) })
    }

    /// The policy in force (reset_session_get_policy): the model's own sampling (generation_config.json)
    /// until [`set_policy`](Session::set_policy), then the last one set.  t_low and tau0 come resolved (a
    /// preset's values), preset is None and reset_state false, so set_policy of what it returns changes
    /// nothing: one setting over the model's own sampling is get, change that field, set.
    pub fn policy(&self) -> Result<PolicyParams> {
        let mut raw: sys::reset_policy_params = unsafe { std::mem::zeroed() };
        unsafe { sys::reset_policy_params_init_sized(&mut raw, size_of::<sys::reset_policy_params>()) };
        check(unsafe { sys::reset_session_get_policy(self.raw(), &mut raw) })?;
        PolicyParams::from_raw(&raw)
    }

    /// Set the stop conditions of every sequence, from the next step on (reset_set_stop): they replace the ones in
    /// force and stay through [`reset`](Session::reset) and [`set_policy`](Session::set_policy).  On an error the
    /// conditions are unchanged: an empty string, one over 256 bytes, more than 16 strings or 256 ids, a negative
    /// max_tokens are `Error::INVALID_ARGUMENT` (as is a string holding a NUL, refused here), an id outside the
    /// vocabulary `Error::OUT_OF_RANGE`, strings on a model without a tokenizer `Error::UNSUPPORTED`.
    pub fn set_stop(&mut self, stop: &StopOptions) -> Result<()> {
        let strings = stop
            .strings
            .iter()
            .enumerate()
            .map(|(i, s)| c_string(s, &format!("stop string {i}")))
            .collect::<Result<Vec<_>>>()?;
        let pointers: Vec<*const c_char> = strings.iter().map(|s| s.as_ptr()).collect();
        let mut options: sys::reset_stop_options = unsafe { std::mem::zeroed() };
        unsafe { sys::reset_stop_options_init_sized(&mut options, size_of::<sys::reset_stop_options>()) };
        options.strings = pointers.as_ptr();
        options.string_count = pointers.len();
        options.ids = stop.ids.as_ptr();
        options.id_count = stop.ids.len();
        options.max_tokens = stop.max_tokens;
        options.include_stop_string = stop.include_stop_string as i32;
        options.ignore_eos = stop.ignore_eos as i32;
        // The session copies the strings and ids: `strings` and `pointers` need only outlive the call.
        check(unsafe { sys::reset_set_stop(self.raw(), &options) })
    }

    /// Remove every stop condition (reset_set_stop with NULL): sequences end only on end-of-generation ids.
    pub fn clear_stop(&mut self) -> Result<()> {
        check(unsafe { sys::reset_set_stop(self.raw(), ptr::null()) })
    }

    /// 0.6: set the logit bias of every sequence, from the next step on (reset_set_logit_bias), as OpenAI's and vLLM's
    /// logit_bias: `(token, bias)` pairs, at most [`MAX_LOGIT_BIAS`].  They replace the bias in force; none removes it,
    /// as [`clear_logit_bias`](Session::clear_logit_bias) does.  A listed token's logit z becomes z + bias (one f32
    /// addition) after the repetition penalties and before the temperature, the truncation and the draw, greedy
    /// included.  A bias is finite in [-100, 100], or `f32::NEG_INFINITY` to ban the token (OpenAI's -100 makes one
    /// all but impossible, +100 all but certain).  [`Step::logprob`], [`Step::top_logprobs`], the entropy and the
    /// ReSET decision still see the raw logits, as [`logits`](Session::logits) gives them.  The bias stays through
    /// [`reset`](Session::reset), [`truncate`](Session::truncate) and [`set_policy`](Session::set_policy).  On an
    /// error the bias in force is unchanged: a bias that is NaN, +inf or outside [-100, 100] and not -inf, a token
    /// listed twice, more than [`MAX_LOGIT_BIAS`] pairs, every token of the vocabulary banned are
    /// `Error::INVALID_ARGUMENT`, a token outside the vocabulary `Error::OUT_OF_RANGE`.
    pub fn set_logit_bias(&mut self, bias: &[(i32, f32)]) -> Result<()> {
        let entries = logit_bias_entries(bias);
        check(unsafe { sys::reset_set_logit_bias(self.raw(), entries.as_ptr(), entries.len()) })
    }

    /// 0.6: remove the logit bias (reset_set_logit_bias with count 0): no logit is biased from the next step on.
    pub fn clear_logit_bias(&mut self) -> Result<()> {
        check(unsafe { sys::reset_set_logit_bias(self.raw(), ptr::null(), 0) })
    }

    /// 0.5: the text `sequence` has generated that no step has reported yet, held back because it may begin a stop
    /// string of [`set_stop`](Session::set_stop) (empty when none; reset_session_held_text).  A caller that ends a
    /// generation itself (its own budget, a user's interrupt) or appends prompt text to it shows this first: the next
    /// prefill of the sequence forgets it, as does [`reset`](Session::reset).  After each step of a sequence still
    /// generating, the texts its steps reported since its last prefill plus this are what they would have reported
    /// without stop strings; a sequence that has ended holds none.  A sequence outside `0..sequences` is
    /// `Error::OUT_OF_RANGE`.
    pub fn held_text(&self, sequence: i32) -> Result<String> {
        let mut text: *const c_char = ptr::null();
        let mut text_len = 0usize;
        check(unsafe { sys::reset_session_held_text(self.raw(), sequence, &mut text, &mut text_len) })?;
        // Owned by the session until its next call and not NUL-terminated: copied now, by its length.
        let bytes = if text_len == 0 || text.is_null() {
            Vec::new()
        } else {
            unsafe { std::slice::from_raw_parts(text as *const u8, text_len) }.to_vec()
        };
        utf8(bytes)
    }

    /// Append prompt tokens to every sequence.
    pub fn prefill(&mut self, ids: &[i32]) -> Result<()> {
        check(unsafe { sys::reset_prefill(self.raw(), ids.as_ptr(), ids.len()) })
    }

    /// Append prompt tokens to one sequence only (reset_prefill_sequence), after
    /// [`prefill`](Session::prefill) gave every sequence the shared prompt: the others are left as
    /// they were, and an ended sequence generates again.
    pub fn prefill_sequence(&mut self, sequence: i32, ids: &[i32]) -> Result<()> {
        check(unsafe { sys::reset_prefill_sequence(self.raw(), sequence, ids.as_ptr(), ids.len()) })
    }

    /// 0.6: keep the first `length` tokens of every sequence and forget the rest (reset_truncate), as llama.cpp's
    /// llama_memory_seq_rm: an application that edits, regenerates or re-renders a conversation cuts back to the
    /// longest prefix the session shares with its new prompt ([`tokens`](Session::tokens) gives what it holds) and
    /// prefills only the rest.  A sequence cut back is then as a new session with this session's policy and stop
    /// conditions holds it after [`prefill`](Session::prefill) of those tokens, but without logits: its sampler
    /// starts over (so a seeded answer regenerated from the same prompt comes out the same), its held text is
    /// dropped, it no longer counts as ended, and [`step`](Session::step) or [`logits`](Session::logits) is
    /// `Error::STATE` until it is prefilled with at least one token.  To regenerate from the very end of a prompt,
    /// cut one token less and prefill that token again.  A sequence that holds exactly `length` tokens is left as
    /// it is, logits included; nothing is computed.  A `length` below 0 or above the tokens a sequence holds is
    /// `Error::OUT_OF_RANGE`, and the session is unchanged on any error.
    pub fn truncate(&mut self, length: i32) -> Result<()> {
        check(unsafe { sys::reset_truncate(self.raw(), length) })
    }

    /// 0.6: [`truncate`](Session::truncate) for one sequence only (reset_truncate_sequence); the others are left
    /// exactly as they were.  It is prefilled again with [`prefill_sequence`](Session::prefill_sequence).  A
    /// sequence outside `0..sequences` is `Error::OUT_OF_RANGE`, as is a `length` outside `0..=len(sequence)`.
    pub fn truncate_sequence(&mut self, sequence: i32, length: i32) -> Result<()> {
        check(unsafe { sys::reset_truncate_sequence(self.raw(), sequence, length) })
    }

    /// 0.7: make sequence `to` a copy of sequence `from` (reset_copy_sequence), as llama.cpp's llama_memory_seq_cp:
    /// branch a reasoning trace to sample several continuations of one state, or give one sequence's conversation
    /// to another.  `to` forgets what it held and takes `from`'s tokens and KV cache, its logits, its sampler's state
    /// (the ReSET step state, the penalties' counts, the count of drawn tokens), its held text, whether it has ended
    /// and its max_tokens count; `from` is left as it is.  From then on `to` continues as `from` would, except that
    /// its draws are keyed by its own index, so a sampled copy explores another continuation.  Nothing is computed
    /// (on the CUDA backend the KV cache is copied on the device).  `from == to` does nothing.  A sequence outside
    /// `0..sequences` is `Error::OUT_OF_RANGE`, and the sequences are unchanged on any error.
    pub fn copy_sequence(&mut self, from: i32, to: i32) -> Result<()> {
        check(unsafe { sys::reset_copy_sequence(self.raw(), from, to) })
    }

    /// 0.8: save `sequence`'s state to the file at `path` (reset_save_sequence), as llama.cpp's
    /// llama_state_seq_save_file: keep a long prompt's prefill across runs, or park a reasoning trace and resume it
    /// elsewhere with [`load_sequence`](Session::load_sequence).  The file holds what
    /// [`copy_sequence`](Session::copy_sequence) copies (the tokens and KV cache, the logits, the sampler's state, the
    /// held text, whether the sequence has ended and its max_tokens count); the policy, the stop conditions and the
    /// logit bias are the session's and are not saved.  It is a safetensors file, written beside `path` and renamed
    /// onto it, so a failed save leaves `path` as it was.  A file that cannot be written is `Error::IO`, a sequence
    /// outside `0..sequences` `Error::OUT_OF_RANGE`, a path holding a NUL `Error::INVALID_ARGUMENT`; the session is
    /// unchanged whatever the outcome.
    pub fn save_sequence(&self, sequence: i32, path: impl AsRef<Path>) -> Result<()> {
        let path = c_path(path.as_ref())?;
        check(unsafe { sys::reset_save_sequence(self.raw(), sequence, path.as_ptr()) })
    }

    /// 0.8: make `sequence` the sequence [`save_sequence`](Session::save_sequence) wrote to the file at `path`
    /// (reset_load_sequence), in this session or another of the same model: it forgets what it held and continues as
    /// the saved one would, except that its draws are keyed by its own index (as after
    /// [`copy_sequence`](Session::copy_sequence)); this session's policy, stop conditions and logit bias apply from
    /// the next step.  The file must come from the same model, loaded with the same weights format, and from a
    /// session with the same KV cache type ([`SessionOptions::kv_cache`]); the backend may differ (the values are
    /// then the other backend's, equal to its tolerances, not bit for bit).  On an error every sequence is left as it
    /// was: a missing or unreadable file is `Error::IO`, one that is not a libreset sequence file or is malformed
    /// `Error::FORMAT`, one of a newer format `Error::UNSUPPORTED`, another model, weights format or KV cache type
    /// `Error::SHAPE`, a sequence longer than max_context `Error::CONTEXT_OVERFLOW`, a sequence outside
    /// `0..sequences` `Error::OUT_OF_RANGE`, a path holding a NUL `Error::INVALID_ARGUMENT`; only a failure while
    /// writing the CUDA device's KV cache stops the session until [`reset`](Session::reset) (`Error::STATE`).
    pub fn load_sequence(&mut self, sequence: i32, path: impl AsRef<Path>) -> Result<()> {
        let path = c_path(path.as_ref())?;
        check(unsafe { sys::reset_load_sequence(self.raw(), sequence, path.as_ptr()) })
    }

    /// 0.9: `sequence`'s state as the bytes [`save_sequence`](Session::save_sequence) would write to its file
    /// (reset_save_sequence_to_memory), as llama.cpp's llama_state_seq_get_data: for an application that keeps states
    /// in its own store or sends them to another process, without a file and its fsync.  The same safetensors image,
    /// holding the same state (the policy, the stop conditions and the logit bias are the session's and are not in
    /// it); [`load_sequence_from_slice`](Session::load_sequence_from_slice), or
    /// [`load_sequence`](Session::load_sequence) of a file holding them, gives it back.  The size is asked first and
    /// the vector allocated once and filled in place.  A sequence outside `0..sequences` is `Error::OUT_OF_RANGE`; the
    /// session is unchanged whatever the outcome.
    pub fn save_sequence_to_vec(&self, sequence: i32) -> Result<Vec<u8>> {
        let mut size = 0usize;
        let mut status =
            unsafe { sys::reset_save_sequence_to_memory(self.raw(), sequence, ptr::null_mut(), 0, &mut size) };
        let mut state: Vec<u8> = Vec::new();
        while status == sys::reset_status_RESET_ERR_BUFFER_TOO_SMALL {
            // size is what the state takes now.  Left uninitialised: the library writes every byte it reports.
            state = Vec::with_capacity(size);
            let capacity = state.capacity();
            status = unsafe {
                sys::reset_save_sequence_to_memory(self.raw(), sequence, state.as_mut_ptr().cast(), capacity, &mut size)
            };
        }
        check(status)?;
        assert!(size <= state.capacity(), "reset_save_sequence_to_memory wrote past its buffer");
        // Safety: on success the library wrote `size` bytes, within the capacity it was given.
        unsafe { state.set_len(size) };
        Ok(state)
    }

    /// 0.9: make `sequence` the sequence whose state [`save_sequence_to_vec`](Session::save_sequence_to_vec) gave
    /// (reset_load_sequence_from_memory), or that a sequence file holds, read into memory:
    /// [`load_sequence`](Session::load_sequence) without the file.  `data` is only read during the call and needs no
    /// alignment.  The same checks, outcome and errors as [`load_sequence`](Session::load_sequence), except that there
    /// is no file (no `Error::IO`) and messages name the bytes `'<memory>'`: bytes that are not a libreset sequence
    /// file, are cut short or malformed are `Error::FORMAT`, another model, weights format or KV cache type
    /// `Error::SHAPE`, a sequence longer than max_context `Error::CONTEXT_OVERFLOW`, a sequence outside
    /// `0..sequences` `Error::OUT_OF_RANGE`, and every sequence is left as it was.
    pub fn load_sequence_from_slice(&mut self, sequence: i32, data: &[u8]) -> Result<()> {
        // An empty slice's pointer is dangling but never NULL: the library reads none of it and answers FORMAT.
        check(unsafe { sys::reset_load_sequence_from_memory(self.raw(), sequence, data.as_ptr().cast(), data.len()) })
    }

    /// 0.9: the options the session was created with (reset_session_get_options): max_context resolved (never 0:
    /// as [`max_context`](Session::max_context) gives it), the rest as given, so
    /// [`Model::session_with`] of them makes a session like this one.  A KV cache type a newer library adds is
    /// `Error::UNSUPPORTED`.
    pub fn options(&self) -> Result<SessionOptions> {
        let mut raw: sys::reset_session_options = unsafe { std::mem::zeroed() };
        unsafe { sys::reset_session_options_init_sized(&mut raw, size_of::<sys::reset_session_options>()) };
        check(unsafe { sys::reset_session_get_options(self.raw(), &mut raw) })?;
        Ok(SessionOptions {
            max_context: raw.max_context,
            sequences: raw.sequences,
            kv_cache: KvCache::from_raw(raw.kv_cache)?,
            top_logprobs: raw.top_logprobs,
            eager: raw.eager != 0,
            prefill_gemm_tokens: raw.prefill_gemm_tokens,
            programmatic_launch: raw.programmatic_launch == 0,
        })
    }

    /// 0.6: the ids of `sequence`'s context in order (reset_session_tokens): every prompt token and every generated
    /// token that entered the context, [`len`](Session::len) of them (an end-of-generation id or stop token that
    /// ended the sequence is not among them).  A sequence outside `0..sequences` is `Error::OUT_OF_RANGE`.
    pub fn tokens(&self, sequence: i32) -> Result<Vec<i32>> {
        read_buffer(|ids, capacity, held| unsafe {
            sys::reset_session_tokens(self.raw(), sequence, ids, capacity, held)
        })
    }

    /// Raw logits of a sequence's last position.
    pub fn logits(&self, sequence: i32) -> Result<Vec<f32>> {
        let mut out = vec![0f32; self.vocab];
        check(unsafe { sys::reset_session_logits(self.raw(), sequence, out.as_mut_ptr(), out.len()) })?;
        Ok(out)
    }

    pub fn len(&self, sequence: i32) -> i32 {
        unsafe { sys::reset_session_length(self.raw(), sequence) }
    }

    /// Tokens each sequence can hold: the session's max_context, 0 resolved to
    /// min(model maximum, 4096).
    pub fn max_context(&self) -> i32 {
        unsafe { sys::reset_session_max_context(self.raw()) }
    }

    /// Forget every token; the policy stays.
    pub fn reset(&mut self) -> Result<()> {
        check(unsafe { sys::reset_session_reset(self.raw()) })
    }

    /// Stop the running (or next) prefill/step with Error::CANCELLED.
    pub fn cancel(&self) -> Result<()> {
        check(unsafe { sys::reset_session_cancel(self.raw()) })
    }

    /// A handle that cancels this session from any thread while it works.
    pub fn canceller(&self) -> Canceller {
        Canceller { handle: Arc::clone(&self.handle) }
    }

    /// One decode step: one Step per sequence.
    pub fn step(&mut self) -> Result<Vec<Step>> {
        let mut raw: Vec<sys::reset_step> = vec![unsafe { std::mem::zeroed() }; self.sequences];
        unsafe { sys::reset_step_init_sized(raw.as_mut_ptr(), raw.len(), size_of::<sys::reset_step>()) };
        check(unsafe { sys::reset_decode_step(self.raw(), raw.as_mut_ptr(), raw.len(), ptr::null_mut()) })?;
        raw.iter()
            .map(|s| {
                // The text and the top logprobs point into the session until its next call: copy them now.
                let bytes = if s.text_len == 0 {
                    Vec::new()
                } else {
                    unsafe { std::slice::from_raw_parts(s.text as *const u8, s.text_len) }.to_vec()
                };
                let top_logprobs = if s.top_logprob_count <= 0 || s.top_logprobs.is_null() {
                    Vec::new() // none asked for, or no token (the pointer is NULL then)
                } else {
                    unsafe { std::slice::from_raw_parts(s.top_logprobs, s.top_logprob_count as usize) }
                        .iter()
                        .map(|e| TokenLogprob { token: e.token, logprob: e.logprob })
                        .collect()
                };
                Ok(Step {
                    sequence: s.sequence,
                    token: s.token,
                    end: s.end_of_generation != 0,
                    entropy: s.entropy,
                    step_entropy: s.step_entropy,
                    global_mean: s.global_mean,
                    threshold: s.threshold,
                    temperature: s.temperature,
                    step_index: s.step_index,
                    boundary: s.boundary != 0,
                    uncertain: s.uncertain != 0,
                    text: utf8(bytes)?,
                    logprob: s.logprob,
                    top_logprobs,
                    end_reason: EndReason::from_raw(s.end_reason),
                    stop_index: s.stop_index,
                })
            })
            .collect()
    }

    /// Stream sequence 0: its steps until it ends or `max_tokens` were made.
    /// An error is yielded once and ends the stream.
    pub fn generate(&mut self, max_tokens: usize) -> Generate<'_, 'm> {
        Generate { session: self, left: max_tokens, done: false }
    }
}

/// The iterator of [`Session::generate`].
pub struct Generate<'s, 'm> {
    session: &'s mut Session<'m>,
    left: usize,
    done: bool,
}

impl Iterator for Generate<'_, '_> {
    type Item = Result<Step>;

    fn next(&mut self) -> Option<Result<Step>> {
        if self.done || self.left == 0 {
            return None;
        }
        self.left -= 1;
        match self.session.step() {
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
            Ok(mut steps) => {
                let step = steps.swap_remove(0);
                self.done = step.end;
                if step.token < 0 { None } else { Some(Ok(step)) }
            }
        }
    }
}

/// Cancels a session from another thread.  reset.h: "only
/// reset_session_cancel may be called on it from any other thread", and it
/// never waits for the work it cancels; this type exposes nothing else, so it is Send + Sync.  It
/// shares ownership of the C session, so it stays valid whatever is dropped first.
#[derive(Clone)]
pub struct Canceller {
    handle: Arc<SessionHandle>,
}

impl Canceller {
    pub fn cancel(&self) -> Result<()> {
        check(unsafe { sys::reset_session_cancel(self.handle.0.as_ptr()) })
    }
}

// ----------------------------------------------------------------- tokenizers

/// One chat message: role ("system", "user", "assistant", "tool"), content and (0.11) an assistant
/// message's tool calls.
#[derive(Clone, Debug)]
pub struct Message<'a> {
    pub role: &'a str,
    pub content: &'a str,
    /// OpenAI's "tool_calls" of an assistant message, as JSON text:
    /// `[{"id", "type": "function", "function": {"name", "arguments"}}]` ("arguments" a JSON string or a
    /// value).  None (or "null", "[]") is none; an OpenAI tool-call message's null content is "".
    pub tool_calls: Option<&'a str>,
}

impl<'a> Message<'a> {
    /// A message without tool calls.
    pub const fn new(role: &'a str, content: &'a str) -> Self {
        Message { role, content, tool_calls: None }
    }

    /// An assistant message with its tool calls (JSON, see [`Message::tool_calls`]).
    pub const fn with_tool_calls(role: &'a str, content: &'a str, tool_calls: &'a str) -> Self {
        Message { role, content, tool_calls: Some(tool_calls) }
    }
}

/// reset_chat_options: template family (0 = the tokenizer's own, recognised), generation prompt, thinking,
/// and (0.11) the tools the model may call.
#[derive(Clone, Debug)]
pub struct ChatOptions {
    pub chat_template: u32,
    pub add_generation_prompt: bool,
    pub enable_thinking: bool,
    /// OpenAI's "tools" as JSON text: `[{"type": "function", "function": {"name", "description",
    /// "parameters"}}]`; None is none.  Qwen3's template shows them to the model; the others refuse tools
    /// and tool calls (UNSUPPORTED).
    pub tools: Option<String>,
}

impl Default for ChatOptions {
    fn default() -> Self {
        ChatOptions { chat_template: 0, add_generation_prompt: true, enable_thinking: true, tools: None }
    }
}

/// The calls shared by an owned [`Tokenizer`] and a model's [`TokenizerRef`].
pub trait Tokenize {
    #[doc(hidden)]
    fn raw_tokenizer(&self) -> *const sys::reset_tokenizer;

    /// Text to ids; `special`: special tokens' text becomes their ids (HF's default).
    fn encode(&self, text: &str, special: bool) -> Result<Vec<i32>> {
        let flags = if special { sys::RESET_TOKENIZE_PARSE_SPECIAL } else { 0 };
        read_buffer(|ids, capacity, needed| unsafe {
            sys::reset_tokenize(self.raw_tokenizer(), text.as_ptr() as *const c_char, text.len(), flags, ids,
                                capacity, needed)
        })
    }

    /// Ids to text (invalid byte sequences become U+FFFD, as in HF).
    fn decode(&self, ids: &[i32], skip_special: bool) -> Result<String> {
        let flags = if skip_special { sys::RESET_DETOKENIZE_SKIP_SPECIAL } else { 0 };
        let bytes = read_buffer(|buffer: *mut u8, capacity, needed| unsafe {
            sys::reset_detokenize(self.raw_tokenizer(), ids.as_ptr(), ids.len(), flags, buffer as *mut c_char,
                                  capacity, needed)
        })?;
        utf8(bytes)
    }

    /// Render a conversation as the model's chat template does, tools and tool calls included
    /// (byte-identical to transformers' `apply_chat_template(messages, tools=...)`).
    fn chat_format(&self, messages: &[Message<'_>], options: &ChatOptions) -> Result<String> {
        let roles = messages.iter().map(|m| c_string(m.role, "a role")).collect::<Result<Vec<_>>>()?;
        let raw: Vec<sys::reset_chat_message> = messages
            .iter()
            .zip(&roles)
            .map(|(m, role)| sys::reset_chat_message {
                role: role.as_ptr(),
                content: m.content.as_ptr() as *const c_char,
                content_len: m.content.len(),
            })
            .collect();
        // The tool JSON crosses NUL-terminated: one C string per message that has calls, and the array
        // of pointers reset_chat_options holds (NULL where a message has none; no array when none has).
        let tools = options.tools.as_deref().map(|t| c_string(t, "the tools")).transpose()?;
        let calls = messages
            .iter()
            .map(|m| m.tool_calls.map(|c| c_string(c, "a message's tool calls")).transpose())
            .collect::<Result<Vec<_>>>()?;
        let call_pointers: Vec<*const c_char> =
            calls.iter().map(|c| c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())).collect();
        let mut raw_options: sys::reset_chat_options = unsafe { std::mem::zeroed() };
        unsafe { sys::reset_chat_options_init_sized(&mut raw_options, size_of::<sys::reset_chat_options>()) };
        raw_options.chat_template = options.chat_template as sys::reset_chat_template;
        raw_options.add_generation_prompt = options.add_generation_prompt as i32;
        raw_options.enable_thinking = options.enable_thinking as i32;
        raw_options.tools_json = tools.as_ref().map_or(std::ptr::null(), |t| t.as_ptr());
        if calls.iter().any(Option::is_some) {
            raw_options.tool_calls_json = call_pointers.as_ptr();
        }
        let bytes = read_buffer(|buffer: *mut u8, capacity, needed| unsafe {
            sys::reset_chat_format(self.raw_tokenizer(), raw.as_ptr(), raw.len(), &raw_options,
                                   buffer as *mut c_char, capacity, needed)
        })?;
        utf8(bytes)
    }
}

/// A tokenizer loaded on its own (tokenizer.json, tokenizer.model or a directory).
pub struct Tokenizer {
    raw: NonNull<sys::reset_tokenizer>,
}

// reset.h: "A reset_tokenizer is immutable: any number of threads may use one at once."
unsafe impl Send for Tokenizer {}
unsafe impl Sync for Tokenizer {}

impl Tokenizer {
    pub fn load(path: impl AsRef<Path>) -> Result<Tokenizer> {
        ensure_abi()?;
        let path = c_path(path.as_ref())?;
        let mut raw = ptr::null_mut();
        check(unsafe { sys::reset_tokenizer_load(path.as_ptr(), &mut raw) })?;
        Ok(Tokenizer { raw: NonNull::new(raw).expect("reset_tokenizer_load succeeded without a tokenizer") })
    }
}

impl Tokenize for Tokenizer {
    fn raw_tokenizer(&self) -> *const sys::reset_tokenizer {
        self.raw.as_ptr()
    }
}

impl Drop for Tokenizer {
    fn drop(&mut self) {
        unsafe { sys::reset_tokenizer_free(self.raw.as_ptr()) }
    }
}

/// A model's own tokenizer: owned by the model, never freed here.
#[derive(Clone, Copy)]
pub struct TokenizerRef<'m> {
    raw: NonNull<sys::reset_tokenizer>,
    _model: PhantomData<&'m Model>,
}

unsafe impl Send for TokenizerRef<'_> {}
unsafe impl Sync for TokenizerRef<'_> {}

impl Tokenize for TokenizerRef<'_> {
    fn raw_tokenizer(&self) -> *const sys::reset_tokenizer {
        self.raw.as_ptr()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoint_formats_map_from_the_headers_values_and_an_unknown_one_keeps_its_number() {
        let known = [
            (sys::reset_checkpoint_format_RESET_CHECKPOINT_UNQUANTIZED, CheckpointFormat::Unquantized),
            (sys::reset_checkpoint_format_RESET_CHECKPOINT_MODELOPT, CheckpointFormat::ModelOpt),
            (sys::reset_checkpoint_format_RESET_CHECKPOINT_COMPRESSED_TENSORS, CheckpointFormat::CompressedTensors),
        ];
        for (raw, format) in known {
            assert_eq!(CheckpointFormat::from_raw(raw), format, "{raw}");
        }
        assert_eq!(CheckpointFormat::from_raw(3), CheckpointFormat::Unknown(3)); // a format a newer library adds
    }
}
