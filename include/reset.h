/*
 * reset.h — the whole public C ABI of libreset, and its manual.
 *
 * libreset decodes large reasoning models with NVFP4 weights at batch 1..8
 * with the lowest latency it can, and samples them with ReSET
 * (reasoning-step entropy-based temperature scaling).
 *
 * Read this file top to bottom: every function states its contract, its
 * errors, who owns what, and whether it is thread-safe.
 *
 * General rules (they hold for every function unless its comment says more):
 *
 *  - Errors.  Every fallible call returns a reset_status.  On failure the
 *    human-readable reason is available from reset_last_error() on the same
 *    thread until the next failing call on that thread.  No function aborts,
 *    prints, or lets a C++ exception escape.  A failing call leaves every
 *    object it was given as it was before the call ("nothing is lost").
 *  - Handles.  reset_model, reset_session, reset_tokenizer and reset_policy
 *    are opaque.  Each has a create/free pair; free(NULL) is a no-op.  Every
 *    call validates its handle: NULL gives RESET_ERR_INVALID_ARGUMENT, a
 *    handle that was already freed (or never created by this library) gives
 *    RESET_ERR_INVALID_HANDLE, as long as its address has not been reused by
 *    a newer handle of the same kind.
 *  - Option structs start with `uint32_t struct_size` and are filled with
 *    defaults by their `_init` function.  Fields are only ever appended, so a
 *    caller compiled against an older header keeps working: the library reads
 *    only the first struct_size bytes and uses defaults for the rest.  A
 *    struct_size below 4, above the struct this library knows (for structs
 *    the caller passes in), or ending inside a pointer field (no layout ever
 *    ended there) is RESET_ERR_INVALID_ARGUMENT.
 *  - Each `_init` is a macro (0.3) that calls the exported `_init_sized`
 *    with sizeof the struct as the caller's header declares it, so the
 *    library fills exactly the caller's struct (zeroing any tail it does not
 *    know) and never writes past it when the struct has grown since the
 *    caller was built.  A binding that declares the structs itself calls
 *    `_init_sized` with its own size.  The unsized `_init` symbols stay for
 *    programs built before 0.3: each fills its struct as 0.2 declared it.
 *  - Text is UTF-8 with explicit byte lengths.  Functions that write into a
 *    caller's buffer follow the snprintf idiom: they always report the size
 *    needed, and return RESET_ERR_BUFFER_TOO_SMALL (writing nothing) when the
 *    buffer is short.
 *  - Threads.  A reset_model is immutable after load and may be shared by
 *    any number of sessions and threads.  A reset_session (and a
 *    reset_policy) is used by one thread at a time; only
 *    reset_session_cancel may be called on it from any other thread.
 *    reset_last_error is per thread.  Freeing a handle is not synchronised
 *    with calls on that same handle: free it once no other thread is inside
 *    a call on it (or on a tokenizer it owns), as with free() and fclose().
 *    The one exception is reset_session_cancel against reset_session_free.
 *    reset_model_options.threads bounds every parallel loop of the CPU
 *    backend, loading included.
 */
#ifndef RESET_H
#define RESET_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define RESET_API __declspec(dllexport)
#else
#define RESET_API __attribute__((visibility("default")))
#endif

/* ===================================================================== */
/* Versions                                                               */
/* ===================================================================== */

/* The ABI major version is the library's SONAME (libreset.so.0).  Minor
 * versions only append functions and struct fields (CHANGELOG.md lists
 * them), so a program built against 0.N runs on any 0.M with M >= N. */
#define RESET_VERSION_MAJOR 0
#define RESET_VERSION_MINOR 12
#define RESET_VERSION_PATCH 0
#define RESET_VERSION_STRING "0.12.0"
#define RESET_VERSION_NUMBER (RESET_VERSION_MAJOR * 10000 + RESET_VERSION_MINOR * 100 + RESET_VERSION_PATCH)

/* The version of the library actually loaded, as RESET_VERSION_NUMBER.
 * Bindings refuse a library whose major differs from the one they were
 * written for, or whose minor is older than theirs (it lacks functions or
 * fields they use). */
RESET_API uint32_t reset_version(void);
/* The same as a static string, e.g. "0.1.0 (cuda)". Never NULL, never freed. */
RESET_API const char *reset_version_string(void);

/* ===================================================================== */
/* Status codes and errors                                                */
/* ===================================================================== */

typedef enum reset_status {
    RESET_OK = 0,
    RESET_ERR_INVALID_ARGUMENT = 1,  /* a NULL pointer, a bad struct_size, a parameter out of its range */
    RESET_ERR_INVALID_HANDLE = 2,    /* a handle that was freed or never created by this library */
    RESET_ERR_IO = 3,                /* a file or directory is missing or unreadable */
    RESET_ERR_FORMAT = 4,            /* a file is malformed: JSON, safetensors header, offsets, dtype */
    RESET_ERR_UNSUPPORTED = 5,       /* valid input this version does not support (architecture, quantization) */
    RESET_ERR_SHAPE = 6,             /* a tensor is missing or its shape/dtype disagrees with the config */
    RESET_ERR_OUT_OF_RANGE = 7,      /* a token id outside the vocabulary, a sequence index too large */
    RESET_ERR_CONTEXT_OVERFLOW = 8,  /* the call would grow a sequence past the session's max_context */
    RESET_ERR_OUT_OF_MEMORY = 9,     /* host or device memory could not be allocated */
    RESET_ERR_BAD_UTF8 = 10,         /* input text is not valid UTF-8 (it is rejected, never altered) */
    RESET_ERR_BUFFER_TOO_SMALL = 11, /* the caller's buffer is shorter than the size reported */
    RESET_ERR_CANCELLED = 12,        /* reset_session_cancel stopped the call; the session is as before it */
    RESET_ERR_STATE = 13,            /* the call is not valid now (e.g. decoding before any prefill) */
    RESET_ERR_BACKEND = 14,          /* the requested backend is unavailable or failed (e.g. no CUDA device) */
    RESET_ERR_INTERNAL = 15          /* a bug in libreset; the message says where */
} reset_status;

/* The message of the last failing call on this thread ("" if none).  The
 * pointer stays valid until the next libreset call on this thread. */
RESET_API const char *reset_last_error(void);

/* A short constant name for a status, e.g. "RESET_ERR_FORMAT". Never NULL. */
RESET_API const char *reset_status_name(reset_status status);

/* ===================================================================== */
/* Models                                                                 */
/* ===================================================================== */

typedef struct reset_model reset_model;

/* How the linear layers (attention q/k/v/o and MLP gate/up/down) are held. */
typedef enum reset_weights {
    RESET_WEIGHTS_AUTO = 0,         /* as the checkpoint is: BF16 for a BF16/F16/F32 checkpoint,
                                       NVFP4 W4A16 for an NVFP4 one (reset_checkpoint_format) */
    RESET_WEIGHTS_BF16 = 1,         /* BF16 (F16/F32 checkpoints are rounded to BF16 on load) */
    RESET_WEIGHTS_NVFP4_W4A16 = 2,  /* NVFP4 weights, activations kept in high precision */
    RESET_WEIGHTS_NVFP4_W4A4 = 3    /* NVFP4 weights and activations quantized per 16 on the fly */
} reset_weights;

typedef enum reset_backend {
    RESET_BACKEND_AUTO = 0, /* CUDA if the library was built with it and a device is present, else CPU */
    RESET_BACKEND_CPU = 1,  /* the FP32 reference engine */
    RESET_BACKEND_CUDA = 2  /* the CUDA engine: weights, KV cache, the decode step and the sampler on
                               the GPU (options->device); head_dim 16, 32, 64 or 128.  Loading fails
                               with RESET_ERR_BACKEND (and the reason) when the library was built
                               without CUDA or no device is usable */
} reset_backend;

/* Progress of long work (loading with quantization, calibration): called on
 * the calling thread with the fraction done, 0..1, non-decreasing.  Return 0
 * to go on; anything else stops the work, which then fails with
 * RESET_ERR_CANCELLED and keeps nothing. */
typedef int (*reset_progress_callback)(float fraction, void *user_data);

/* What the activations of NVFP4 W4A16 linears are multiplied by.  The CUDA
   GEMV reads FP16 activations (tensor cores): each activation row is divided by
   a power-of-two scale (exact: 1 when its largest |x| is at most 32768, else the
   smallest power of two that brings it below 32768), rounded to FP16 (nearest
   even), and the scale multiplied back after the sum.
   The CPU reference does the same by default, so both backends multiply the
   same values and differ only in FP32 summation order. */
typedef enum reset_activations {
    RESET_ACTIVATIONS_FP16 = 0, /* the row-scaled FP16 values above (what the CUDA GEMV reads) */
    RESET_ACTIVATIONS_FP32 = 1  /* CPU backend only: FP32, unrounded (nvfp4.md's formula literally;
                                   the reference for tests against FP32 implementations); loading
                                   with it on the CUDA backend (or AUTO finding a device) fails
                                   with RESET_ERR_UNSUPPORTED */
} reset_activations;

/* How reset_model_load brings the safetensors files into memory
   (reset_model_options.file_access, 0.12). */
typedef enum reset_file_access {
    /* Mapped (mmap) and read in place as the OS pages them in: quick to open,
       and the pages are the page cache's, shared with other processes.  The
       catch: a file truncated or rewritten in place while it is mapped makes
       the process die of SIGBUS at the next read of a lost page, which no
       library can turn into an error. */
    RESET_FILE_ACCESS_MAP = 0,
    /* Read whole into memory the model owns (llama.cpp's --no-mmap): a file
       that shrinks or changes while it is read is RESET_ERR_IO, and from then
       on the model no longer reads the files.  Costs the files' size in host
       memory (until the upload, on the CUDA backend); a file larger than the
       memory the host has available is RESET_ERR_OUT_OF_MEMORY before it is
       read, not a process the OOM killer ends. */
    RESET_FILE_ACCESS_READ = 1
} reset_file_access;
/* Either way, the CUDA backend keeps neither the mapping nor the copy once
   the weights are on the device: its models survive the files changing
   after reset_model_load returns. */

typedef struct reset_model_options {
    uint32_t struct_size;
    reset_weights weights;    /* default RESET_WEIGHTS_AUTO */
    reset_backend backend;    /* default RESET_BACKEND_AUTO */
    int32_t quantize_lm_head; /* 1: an NVFP4 lm_head too: a BF16 lm_head (or the tied embeddings)
                                 is quantized on load, from a BF16 checkpoint loaded as NVFP4 or
                                 from an NVFP4 checkpoint that kept it in BF16 (the default of
                                 ModelOpt and llm-compressor).
                                 ~3.5x fewer lm_head bytes per step, at NVFP4's error on the
                                 logits. Needs NVFP4 weights: with BF16 ones the load fails with
                                 RESET_ERR_INVALID_ARGUMENT. Default 0 (BF16) */
    int32_t device;           /* CUDA device ordinal. Default 0 */
    int32_t threads;          /* CPU threads; 0 = all cores. Default 0 */
    reset_progress_callback progress; /* called as layers load; NULL = none. Default NULL */
    void *progress_user_data;         /* handed to progress. Default NULL */
    reset_activations w4a16_activations; /* Default RESET_ACTIVATIONS_FP16. Affects NVFP4 W4A16
                                            linears only (BF16 and W4A4 linears ignore it) */
    reset_file_access file_access; /* (0.12) mapped or read; see reset_file_access.
                                      Default RESET_FILE_ACCESS_MAP */
} reset_model_options;

/* Fill *options with defaults and set struct_size. */
RESET_API void reset_model_options_init(reset_model_options *options);
RESET_API void reset_model_options_init_sized(reset_model_options *options, size_t struct_size);
#define reset_model_options_init(options) reset_model_options_init_sized((options), sizeof(reset_model_options))

/* Load a model from a Hugging Face directory: config.json,
 * model.safetensors or model.safetensors.index.json with its shards,
 * optionally generation_config.json, hf_quant_config.json and a tokenizer.
 * Supported model_type values: "qwen3", "qwen2", "llama".  Checkpoints are
 * BF16/F16/F32, or NVFP4 as reset_checkpoint_format lists; any other
 * quantization (another quant_method, format or scheme) is refused with
 * RESET_ERR_UNSUPPORTED naming it, never loaded approximately.
 *
 * Safetensors files are mapped, not copied (reset_file_access says what
 * that risks and how to read them instead); every header is validated
 * (size, JSON, offsets inside the file and not overlapping, dtype and shape
 * against the config).  options may be NULL for defaults.
 *
 * Errors: RESET_ERR_IO (missing directory or file), RESET_ERR_FORMAT,
 * RESET_ERR_UNSUPPORTED (architecture, quantization feature, FP32 W4A16
 * activations on the CUDA backend),
 * RESET_ERR_SHAPE, RESET_ERR_OUT_OF_MEMORY, RESET_ERR_BACKEND.
 * Ownership: on success *out_model is a new model the caller frees with
 * reset_model_free (after every session made from it).  On failure
 * *out_model is set to NULL.
 * Thread-safety: may be called from any thread. */
RESET_API reset_status reset_model_load(const char *path, const reset_model_options *options,
                                        reset_model **out_model);

/* Free a model. NULL is a no-op.  Freeing a model that still has live
 * sessions is a misuse: the model is kept until its last session is freed,
 * so nothing crashes. */
RESET_API void reset_model_free(reset_model *model);

/* Where a model's NVFP4 weights come from (reset_model_info.checkpoint_format, 0.10). */
typedef enum reset_checkpoint_format {
    RESET_CHECKPOINT_UNQUANTIZED = 0,      /* BF16/F16/F32 tensors: BF16, or NVFP4 quantized on load */
    RESET_CHECKPOINT_MODELOPT = 1,         /* an NVIDIA ModelOpt NVFP4 export (hf_quant_config.json, or
                                              quantization_config with quant_method "modelopt") */
    RESET_CHECKPOINT_COMPRESSED_TENSORS = 2 /* saved by llm-compressor (schemes NVFP4, NVFP4A16):
                                              quant_method "compressed-tensors", format
                                              "nvfp4-pack-quantized"; tensors weight_packed,
                                              weight_scale and the reciprocal weight_global_scale
                                              (and input_global_scale, W4A4's calibrated scale) */
} reset_checkpoint_format;

typedef struct reset_model_info {
    uint32_t struct_size;
    char architecture[32];   /* model_type: "qwen3", "qwen2" or "llama" */
    int32_t n_layers;
    int32_t hidden_size;
    int32_t intermediate_size;
    int32_t n_heads;
    int32_t n_kv_heads;
    int32_t head_dim;
    int32_t vocab_size;
    int32_t max_position_embeddings; /* the longest context; with YaRN rope scaling at least factor x
                                      * original_max_position_embeddings, as vLLM derives it */
    int32_t tied_embeddings;     /* 1 if lm_head shares embed_tokens */
    reset_weights weights;       /* the resolved format (never AUTO) */
    reset_backend backend;       /* the resolved backend (never AUTO) */
    int32_t lm_head_nvfp4;       /* 1 if lm_head is NVFP4 */
    int32_t from_modelopt;       /* 1 if the checkpoint was a ModelOpt NVFP4 export */
    int32_t dynamic_input_scale; /* W4A4 only: 1 = per-token amax scale, 0 = calibrated input_scale */
    int32_t n_bf16_linears;      /* linears kept in BF16 in an NVFP4 model (excluded or not quantizable) */
    uint64_t n_parameters;
    uint64_t weight_bytes;       /* bytes of weights as the backend holds them */
    uint64_t host_bytes;         /* host memory owned by the model (mapped files not counted) */
    uint64_t device_bytes;       /* device memory owned by the model */
    int32_t n_eos;               /* end-of-generation ids from generation_config.json / config.json */
    int32_t eos_ids[8];
    int32_t bos_id;              /* -1 if none */
    reset_checkpoint_format checkpoint_format; /* (0.10) the checkpoint's NVFP4 format, or UNQUANTIZED */
    int32_t kv_cache_scales;     /* (0.10) 1 if the checkpoint carries calibrated FP8 KV-cache scales
                                    (llm-compressor's kv_cache_scheme, ModelOpt's FP8 KV cache): an
                                    RESET_KV_CACHE_FP8 cache stores e4m3(x / scale) with them; 0: scale 1 */
} reset_model_info;

RESET_API void reset_model_info_init(reset_model_info *info);
RESET_API void reset_model_info_init_sized(reset_model_info *info, size_t struct_size);
#define reset_model_info_init(info) reset_model_info_init_sized((info), sizeof(reset_model_info))

/* Describe a model.  info->struct_size must be set (reset_model_info_init).
 * Errors: RESET_ERR_INVALID_ARGUMENT, RESET_ERR_INVALID_HANDLE. */
RESET_API reset_status reset_model_get_info(const reset_model *model, reset_model_info *info);

/* ===================================================================== */
/* Sampling policies                                                      */
/* ===================================================================== */

typedef enum reset_policy_kind {
    RESET_POLICY_GREEDY = 0,  /* argmax of the raw logits (after the penalties below, if any) */
    RESET_POLICY_FIXED = 1,   /* one temperature for every token */
    RESET_POLICY_RESET = 2,   /* ReSET: T_high / T_low chosen per token from token and step entropy */
    RESET_POLICY_ENTROPY = 3  /* the paper's ablation: ReSET with the step gate off (threshold = tau0) */
} reset_policy_kind;

typedef struct reset_policy_params {
    uint32_t struct_size;
    reset_policy_kind kind;   /* default RESET_POLICY_GREEDY */
    float temperature;        /* FIXED: >= 0; <= 1e-6 means greedy. Default 0.6 */
    int32_t top_k;            /* >= 0; 0 = off. Default 0 */
    float top_p;              /* (0, 1]; 1 = off. Default 1 */
    float min_p;              /* [0, 1); 0 = off. Default 0 */
    uint64_t seed;            /* Philox key; draws depend on (seed, sequence, step). Default 0 */
    float t_high;             /* RESET/ENTROPY: temperature at or above the threshold. Default 1.0 */
    float t_low;              /* RESET/ENTROPY: temperature below it; < 0 = the model's preset. Default -1 */
    float tau0;               /* RESET/ENTROPY: token-entropy threshold (nats); < 0 = the model's preset. Default -1 */
    int32_t window;           /* RESET: step-estimator window w, 1..16384. Default 32 */
    const char *preset;       /* name of a model in the paper's table ("Qwen3-8B", ...) whose
                                 T_low/tau0 to use; NULL = recognise the loaded model. Default NULL */
    int32_t reset_state;      /* 1: start a new generation when this policy is applied: clear the ReSET
                                 step state and the penalties' token counts. Default 0 */
    /* Repetition penalties (OpenAI / vLLM semantics), added in 0.2.  A token
     * the sequence has generated c > 0 times in the current generation has
     * its logit lowered to (z - frequency_penalty * c) - presence_penalty
     * before the temperature, the truncation and the draw (greedy included).
     * The entropy H_t and the ReSET decision still see the raw logits
     * (reset-algorithm.md), and prompt tokens are never counted.  The
     * current generation is every token accepted since the session was
     * created or reset, or a policy with reset_state 1 was applied
     * (reset_policy: created, reset, or given reset_state 1).  Qwen3's
     * authors suggest a presence penalty of up to 2 (1.5 for quantized
     * models) against endless repetition; higher values can mix languages.
     * On the CUDA backend the counts live on the device (4 bytes per
     * vocabulary entry and sequence, allocated with the session). */
    float presence_penalty;   /* [-2, 2]; 0 = off. Default 0 */
    float frequency_penalty;  /* [-2, 2]; 0 = off. Default 0 */
    int32_t reserved;         /* 0.3: ignored.  It fills 0.2's tail padding, so the struct_size of a 0.2
                                 caller (who may never have written those bytes) differs from 0.3's */
    /* Added in 0.3: the multiplicative repetition penalty r of Hugging Face
     * (RepetitionPenaltyLogitsProcessor), vLLM and llama.cpp (repeat_penalty,
     * there over the last 64 tokens).  Every token of the sequence's context
     * (its prompt, every earlier turn, every token it generated) has its logit
     * z divided by r when z > 0 and multiplied by r otherwise, before the
     * presence and frequency penalties (vLLM's order).  The context is every
     * token since the session was created or reset; reset_state does not
     * shorten it, as it does not shorten the KV cache.  A standalone policy
     * learns its prompt from reset_policy_add_context.  > 1 discourages
     * repetition (1.05-1.2 are usual; some generation_config.json files set
     * one, and a session's initial policy takes it).  Greedy included; the
     * entropy and the ReSET decision still see the raw logits. */
    float repetition_penalty; /* [0.1, 10]; 1 = off. Default 1 */
} reset_policy_params;

RESET_API void reset_policy_params_init(reset_policy_params *params);
RESET_API void reset_policy_params_init_sized(reset_policy_params *params, size_t struct_size);
#define reset_policy_params_init(params) reset_policy_params_init_sized((params), sizeof(reset_policy_params))

/* ===================================================================== */
/* Sessions                                                               */
/* ===================================================================== */

typedef struct reset_session reset_session;

/* How a session stores its KV cache.  Both backends round keys and values to the
   chosen type the same way when they are written, so the CPU reference computes
   with exactly the cache values the CUDA backend reads (the CPU keeps them in FP32
   storage, rounded). */
typedef enum reset_kv_cache {
    RESET_KV_CACHE_BF16 = 0, /* BF16 keys and values (round to nearest even) */
    RESET_KV_CACHE_FP8 = 1,  /* FP8 E4M3 of x / scale (round to nearest even, saturating at
                                +-448), read as stored * scale: the scale is the checkpoint's
                                calibrated one per layer, K and V (reset_model_info.kv_cache_scales),
                                else 1.  Half the bytes of BF16, so long contexts decode faster and
                                fit in less memory */
    RESET_KV_CACHE_FP32 = 2  /* CPU backend only: FP32, unrounded (the reference without cache
                                rounding); the CUDA backend answers RESET_ERR_UNSUPPORTED */
} reset_kv_cache;

typedef struct reset_session_options {
    uint32_t struct_size;
    int32_t max_context; /* tokens per sequence, >= 1; 0 = min(model maximum, 4096). Default 0 */
    int32_t sequences;   /* parallel sequences 1..8 sharing one prompt. Default 1 */
    reset_kv_cache kv_cache; /* Default RESET_KV_CACHE_BF16 */
    int32_t eager;       /* CUDA backend: 1 = launch each kernel of a decode step one by one
                            instead of replaying the step's CUDA graph (slower; for comparison
                            and debugging). Default 0 */
    int32_t prefill_gemm_tokens; /* CUDA backend, NVFP4 models: prompt chunks of at least this
                            many tokens (up to 256 per chunk) are prefilled through the GEMM path
                            (weights dequantized to FP16 a slice at a time, then cuBLAS with FP32
                            accumulation); shorter chunks run through the decode GEMV, 8 tokens
                            per pass.  0 = the measured crossover (docs/cuda-engine.md);
                            -1 = never (GEMV path only).  Both paths multiply the same values;
                            they differ in FP32 summation order and what it moves (an FP16
                            rounding an ulp apart in W4A16, rarely an E2M1 code in W4A4).
                            Default 0 */
    int32_t programmatic_launch; /* CUDA backend: programmatic dependent launch (GPUs from sm_90
                            on): each kernel of a step is placed on the GPU while the one before
                            it finishes, and the GEMVs fetch their first weights meanwhile, which
                            hides most of the per-kernel launch ramp.  Same results either way.
                            0 = on where the GPU supports it; -1 = off (plain stream order, for
                            comparison).  Default 0 */
    /* Added in 0.4: how many of the most likely tokens each decode step
     * reports with their log-probabilities (reset_step.top_logprobs), as
     * OpenAI's top_logprobs and vLLM's logprobs = N do; 0..20 (the
     * RESET_MAX_TOP_LOGPROBS of both).  Fixed for the session: on the CUDA
     * backend the selection is one more kernel of the step's graph, beside
     * the layers, captured only when this is above 0, so a session that
     * asks for none pays nothing (20 cost a 1k Qwen3-8B step on an H100
     * about 0.7% at batch 1, 0.1% at batch 8).  Default 0 */
    int32_t top_logprobs;
} reset_session_options;

/* The most reset_session_options.top_logprobs allows. */
#define RESET_MAX_TOP_LOGPROBS 20

RESET_API void reset_session_options_init(reset_session_options *options);
RESET_API void reset_session_options_init_sized(reset_session_options *options, size_t struct_size);
#define reset_session_options_init(options) reset_session_options_init_sized((options), sizeof(reset_session_options))

/* Create a session (KV cache, sampler state) on a model.  options may be
 * NULL.  All memory a generation needs is reserved here, so running out of
 * memory is an error now (RESET_ERR_OUT_OF_MEMORY), never mid-generation
 * (a ReSET window above 32 slots reserves its ring at reset_set_policy).
 * The session's initial policy is the model's generation_config.json
 * sampling if it samples (fixed temperature with its top_k/top_p), else
 * greedy; with its repetition_penalty either way, as transformers applies it.
 * Errors: RESET_ERR_INVALID_ARGUMENT (sequences outside 1..8, max_context <
 * 0 or above the model's maximum, a kv_cache that is no reset_kv_cache
 * value, eager not 0 or 1, programmatic_launch not 0 or -1,
 * prefill_gemm_tokens below -1, top_logprobs outside
 * 0..RESET_MAX_TOP_LOGPROBS, a bad struct_size),
 * RESET_ERR_UNSUPPORTED (RESET_KV_CACHE_FP32 on the CUDA backend),
 * RESET_ERR_INVALID_HANDLE, RESET_ERR_OUT_OF_MEMORY.
 * Ownership: the caller frees *out_session with reset_session_free; it keeps
 * its model alive.  Thread-safety: any thread; the model may be shared. */
RESET_API reset_status reset_session_create(reset_model *model, const reset_session_options *options,
                                            reset_session **out_session);

/* Free a session. NULL is a no-op. */
RESET_API void reset_session_free(reset_session *session);

/* Forget every token of every sequence (the KV cache is kept allocated),
 * clear the sampler's step state and drop a reset_session_cancel request no
 * call has consumed.  The policy stays. */
RESET_API reset_status reset_session_reset(reset_session *session);

/* Ask the call running on this session (or, if none runs, the next
 * prefill/decode call) to stop.  It returns RESET_ERR_CANCELLED at the next
 * layer on the CPU backend (a decode step's layer ~20 ms for a Qwen3-8B-shape
 * model on two cores; a prefill's, up to 16 prompt tokens at a time, ~0.3 s);
 * on the CUDA backend at the next step,
 * and a prefill stops between chunks of 256 prompt tokens, the chunk that
 * computes the logits always completing.  Either way the session is left as
 * it was before that call.  A request that arrives
 * after the running call's last check is not lost: that call succeeds and the
 * next prefill/decode call returns RESET_ERR_CANCELLED (a binding that maps a
 * per-call deadline onto this, as Go's context does, must allow for it).  Safe from any thread,
 * even while another thread frees the session (then RESET_ERR_INVALID_HANDLE
 * or RESET_OK, never a use of freed memory); it holds the library's handle
 * lock for an instant, so it is not async-signal-safe: a signal handler
 * should set a flag that a thread turns into this call (as `reset chat`
 * does for Ctrl-C).  reset_session_reset drops a request no call has
 * consumed yet. */
RESET_API reset_status reset_session_cancel(reset_session *session);

/* Append prompt tokens to every active sequence and compute the logits of
 * the last one.  Sequences that hold the same tokens share one computation
 * (parallel samples of one prompt are prefilled once).  May be called again
 * to append (a chat's next turn).
 * Errors: RESET_ERR_OUT_OF_RANGE (an id outside [0, vocab_size)),
 * RESET_ERR_CONTEXT_OVERFLOW, RESET_ERR_CANCELLED,
 * RESET_ERR_INVALID_ARGUMENT (ids NULL with n > 0, n == 0), RESET_ERR_BACKEND.
 * On any error the session is unchanged, except that a device failure once
 * the logits are being computed leaves it refusing work (RESET_ERR_STATE)
 * until reset_session_reset, as a failed decode step does. */
RESET_API reset_status reset_prefill(reset_session *session, const int32_t *ids, size_t n_ids);

/* Append prompt tokens to one sequence only and compute the logits of the
 * last one; the other sequences are left exactly as they were.  This is how
 * parallel samples part ways after the prompt they share: a thinking budget
 * that closes one sample's reasoning with "</think>" while the others go on
 * (`reset eval --think-budget`), or a different question after one shared
 * system prompt.  The sequence must continue a prompt: call reset_prefill
 * first.  A sequence that has ended generates again, as after reset_prefill.
 * Errors: RESET_ERR_OUT_OF_RANGE (sequence outside [0, sequences), an id
 * outside [0, vocab_size)), RESET_ERR_CONTEXT_OVERFLOW,
 * RESET_ERR_INVALID_ARGUMENT (ids NULL, n == 0), RESET_ERR_STATE (no
 * reset_prefill yet, a session stopped by a device failure),
 * RESET_ERR_CANCELLED, RESET_ERR_BACKEND.  On error the session is
 * unchanged, with reset_prefill's one exception (a device failure while the
 * logits are computed). */
RESET_API reset_status reset_prefill_sequence(reset_session *session, int32_t sequence, const int32_t *ids,
                                              size_t n_ids);

/* (0.6) Keep the first `length` tokens of every sequence and forget the
 * rest: llama.cpp's llama_memory_seq_rm and its server's prompt cache.  An
 * application that edits, regenerates or re-renders a conversation (Qwen3's
 * template drops earlier answers' reasoning, so each turn's prompt differs
 * from what the session holds after the last user message) cuts back to the
 * longest prefix the session shares with its new prompt
 * (reset_session_tokens) and prefills only the rest, as `reset chat` does.
 *
 * A sequence cut back is then exactly as a new session (with this session's
 * policy and stop conditions) holds it after reset_prefill of those tokens,
 * but without logits: its sampler starts over (the ReSET step state, the
 * penalties' counts, the count of drawn tokens that keys the draws, so a
 * seeded answer regenerated from the same prompt comes out the same), its
 * held text is dropped, it no longer counts as ended, and it must be
 * prefilled with at least one token before reset_decode_step or
 * reset_session_logits (RESET_ERR_STATE until then).  To regenerate from
 * the very end of a prompt, cut one token less and prefill that token again
 * (reset_session_tokens gives it).  The KV cache keeps positions
 * [0, length); nothing is computed and nothing is freed.  A sequence that
 * holds exactly `length` tokens is left as it is, logits included.
 * Sequences left holding the same tokens share their computation again
 * (parallel samples cut back to their prompt are prefilled once).  Cutting
 * every sequence to 0 is reset_session_reset but for a pending cancel
 * request.
 * Errors: RESET_ERR_OUT_OF_RANGE (length < 0, or more tokens than a sequence
 * holds), RESET_ERR_STATE (a session stopped by a device failure),
 * RESET_ERR_INVALID_ARGUMENT (session NULL), RESET_ERR_INVALID_HANDLE,
 * RESET_ERR_OUT_OF_MEMORY.  On error the session is unchanged. */
RESET_API reset_status reset_truncate(reset_session *session, int32_t length);

/* (0.6) reset_truncate for one sequence; the others are left exactly as they
 * were.  A sequence cut back to 0 tokens is prefilled with
 * reset_prefill_sequence, like any other.
 * Errors: as reset_truncate's, and RESET_ERR_OUT_OF_RANGE for a sequence
 * outside [0, sequences). */
RESET_API reset_status reset_truncate_sequence(reset_session *session, int32_t sequence, int32_t length);

/* (0.7) Make sequence `to` a copy of sequence `from`, which is left as it
 * is: `to` forgets what it held and takes `from`'s context (its tokens and
 * KV cache), its current logits, its sampler's state (the ReSET step state,
 * the penalties' counts, the count of drawn tokens), its streaming text
 * state (held text, an incomplete character's bytes), whether it has ended
 * and its max_tokens count.  From then on `to` continues as `from` would,
 * except that its draws are its own: they are keyed by its index, so a
 * sampled copy explores another continuation of the same state.  That is
 * llama.cpp's llama_memory_seq_cp: branch a reasoning trace at a step to
 * sample several continuations of it (tree search, best-of-n from a
 * prefix), or give one sequence's conversation to another.  The KV copy is
 * on the device for the CUDA backend (length × 2 × layers × KV heads ×
 * head_dim elements; 147 KB per token for Qwen3-8B in BF16), with no
 * forward pass.  Sequences that then hold the same tokens share their
 * computation again (reset_truncate).  from == to does nothing.
 * Errors: RESET_ERR_OUT_OF_RANGE (from or to outside [0, sequences)),
 * RESET_ERR_STATE (a session stopped by a device failure; a copy that fails
 * on the device stops it until reset_session_reset),
 * RESET_ERR_INVALID_ARGUMENT (session NULL), RESET_ERR_INVALID_HANDLE,
 * RESET_ERR_OUT_OF_MEMORY.  On error the session's sequences are unchanged. */
RESET_API reset_status reset_copy_sequence(reset_session *session, int32_t from, int32_t to);

/* (0.8) Save sequence `sequence`'s state to the file at `path`, so that
 * reset_load_sequence can give it to a sequence of this or another session
 * of the same model later, in this process or another: everything
 * reset_copy_sequence copies (its tokens and KV cache, its current logits,
 * its sampler's state, its streaming text state, whether it has ended and
 * its max_tokens count).  That is llama.cpp's llama_state_seq_save_file:
 * keep a long prompt's or a conversation's prefill across runs (`reset
 * generate --prompt-cache`), or park a reasoning trace and resume it
 * elsewhere.  The policy, the stop conditions and the logit bias belong to
 * the session, not to a sequence: they are not saved.
 * The file is a safetensors file (docs/sequence-file.md lists its tensors
 * and metadata): the KV cache in the session's cache type, length × 2 ×
 * layers × KV heads × head_dim elements (147 KB per token for Qwen3-8B in
 * BF16, 1.2 GB at 8k), plus the vocabulary's logits (0.6 MB).  It is
 * written to a new file beside `path`, flushed to disk and renamed onto
 * `path`, so a failing save leaves whatever `path` held as it was.
 * On the CUDA backend a session's first save or load (this function, its
 * memory form, or their load counterparts) reserves 8 MB of page-locked
 * host memory through which the KV cache moves (0.9), kept until the
 * session is freed; where the system refuses it, the copies are slower,
 * not failed.
 * Errors: RESET_ERR_IO (the file cannot be written; the message names it
 * and the system's reason), RESET_ERR_OUT_OF_RANGE (sequence outside [0,
 * sequences)), RESET_ERR_STATE (a session stopped by a device failure),
 * RESET_ERR_INVALID_ARGUMENT (session or path NULL),
 * RESET_ERR_INVALID_HANDLE, RESET_ERR_OUT_OF_MEMORY.  The session is
 * unchanged whatever the outcome. */
RESET_API reset_status reset_save_sequence(const reset_session *session, int32_t sequence, const char *path);

/* (0.8) Make sequence `sequence` the sequence saved in the file at `path`
 * by reset_save_sequence: it forgets what it held and continues as the
 * saved sequence would have, except that its draws are keyed by its own
 * index (as after reset_copy_sequence).  The session's policy, stop
 * conditions and logit bias apply from the next step; a policy whose ReSET
 * window differs from the saved one keeps the most recent entropies, as
 * reset_set_policy does.  Sequences that then hold the same tokens share
 * their computation again (reset_truncate).
 * The file must come from the same model (its architecture, shapes and a
 * fingerprint of its weights), loaded with the same weights format
 * (reset_model_info.weights: the KV cache holds what those weights
 * computed), and from a session with the same KV cache type.  The backend
 * may differ: a sequence saved on the GPU loads on the CPU backend and back,
 * its values then being the other backend's, which agree to the tolerances
 * docs/cuda-engine.md gives, not bit for bit.
 * Errors: RESET_ERR_IO (missing or unreadable), RESET_ERR_FORMAT (not a
 * libreset sequence file, or one whose contents are malformed or
 * inconsistent; the message says what), RESET_ERR_UNSUPPORTED (a file
 * format newer than this library's), RESET_ERR_SHAPE (another model,
 * weights format or KV cache type; the message gives both),
 * RESET_ERR_CONTEXT_OVERFLOW (longer than the session's max_context),
 * RESET_ERR_OUT_OF_RANGE (sequence outside [0, sequences)),
 * RESET_ERR_STATE (a session stopped by a device failure; a failure while
 * writing the device's KV cache stops it until reset_session_reset),
 * RESET_ERR_INVALID_ARGUMENT (session or path NULL),
 * RESET_ERR_INVALID_HANDLE, RESET_ERR_OUT_OF_MEMORY.  On error the
 * session's sequences are unchanged. */
RESET_API reset_status reset_load_sequence(reset_session *session, int32_t sequence, const char *path);

/* (0.9) reset_save_sequence into the caller's memory: the same bytes the
 * file would hold (a safetensors image, docs/sequence-file.md), for an
 * application that keeps states in its own store, sends them to another
 * process, or cannot afford the file's fsync (llama.cpp's
 * llama_state_seq_get_size / _get_data).  Follows the snprintf idiom: always
 * sets *size to the bytes needed, and returns RESET_ERR_BUFFER_TOO_SMALL,
 * writing nothing, when capacity is short (buffer may be NULL with capacity
 * 0 to ask for the size).  The size holds until the sequence next changes.
 * Errors: RESET_ERR_BUFFER_TOO_SMALL, RESET_ERR_OUT_OF_RANGE (sequence
 * outside [0, sequences)), RESET_ERR_STATE (a session stopped by a device
 * failure), RESET_ERR_INVALID_ARGUMENT (session or size NULL, or buffer
 * NULL with capacity above 0), RESET_ERR_INVALID_HANDLE,
 * RESET_ERR_OUT_OF_MEMORY, RESET_ERR_BACKEND (the device failed while its
 * KV cache was read; the buffer's contents are then unspecified).  The
 * session is unchanged whatever the outcome. */
RESET_API reset_status reset_save_sequence_to_memory(const reset_session *session, int32_t sequence, void *buffer,
                                                     size_t capacity, size_t *size);

/* (0.9) reset_load_sequence from `size` bytes at `data` (what
 * reset_save_sequence_to_memory wrote, or a sequence file's contents),
 * which are only read during the call and need no alignment.  The same
 * checks, outcome and errors as reset_load_sequence, except that there is
 * no file (no RESET_ERR_IO) and messages name the bytes '<memory>'. */
RESET_API reset_status reset_load_sequence_from_memory(reset_session *session, int32_t sequence, const void *data,
                                                       size_t size);

/* (0.6) The tokens of sequence `sequence`'s context, in order: every prompt
 * token and every generated token that entered the context
 * (reset_session_length of them; an end-of-generation id or a stop token
 * that ended the sequence is not among them, as reset_stop_options says).
 * Writes up to capacity ids and always sets *n_ids to the number held; if
 * that exceeds capacity, returns RESET_ERR_BUFFER_TOO_SMALL and writes
 * nothing (ids may be NULL with capacity 0 to ask for the size).
 * Errors: RESET_ERR_INVALID_ARGUMENT (session or n_ids NULL), RESET_ERR_OUT_OF_RANGE
 * (sequence), RESET_ERR_BUFFER_TOO_SMALL, RESET_ERR_INVALID_HANDLE. */
RESET_API reset_status reset_session_tokens(const reset_session *session, int32_t sequence, int32_t *ids,
                                            size_t capacity, size_t *n_ids);

/* Copy the logits of sequence `sequence`'s last position (vocab_size
 * floats, the model's raw logits before any temperature) into out.  For a
 * sequence that has ended, the CPU backend gives the logits its
 * end-of-generation token was drawn from; the CUDA backend, which runs a
 * drawn token in the same step, no longer has them and returns
 * RESET_ERR_STATE until the next prefill.
 * Errors: RESET_ERR_STATE (no prefill yet, an ended sequence on the CUDA
 * backend, a sequence cut back by reset_truncate and not prefilled since, a
 * session stopped by a device failure), RESET_ERR_OUT_OF_RANGE,
 * RESET_ERR_BUFFER_TOO_SMALL (capacity < vocab_size). */
RESET_API reset_status reset_session_logits(const reset_session *session, int32_t sequence, float *out,
                                            size_t capacity);

/* Number of tokens sequence `sequence` holds (prompt and generated). -1 on a bad argument. */
RESET_API int32_t reset_session_length(const reset_session *session, int32_t sequence);

/* Tokens each sequence can hold: the session's max_context, 0 resolved to
 * min(model maximum, 4096).  A prefill or decode step that would pass it
 * returns RESET_ERR_CONTEXT_OVERFLOW, so an application that keeps a
 * conversation going (dropping its oldest turns, as `reset chat` does)
 * measures its prompt against this.  -1 for a bad handle. */
RESET_API int32_t reset_session_max_context(const reset_session *session);

/* Device memory the session holds (KV cache, activations, sampler state, in
 * bytes), all reserved at reset_session_create; 0 on the CPU backend or for
 * a bad handle.  The model's weights are reported by reset_model_get_info. */
RESET_API uint64_t reset_session_device_bytes(const reset_session *session);

/* (0.9) The options the session was created with, max_context resolved
 * (never 0; reset_session_max_context), the rest as given: the KV cache
 * type, sequences, top_logprobs and the CUDA backend's settings of a
 * session an application did not create itself.  out->struct_size must be
 * set (reset_session_options_init); only its first struct_size bytes are
 * written.  Errors: RESET_ERR_INVALID_ARGUMENT (out NULL, a bad
 * struct_size), RESET_ERR_INVALID_HANDLE. */
RESET_API reset_status reset_session_get_options(const reset_session *session, reset_session_options *out);

/* Replace the session's policy.  Every parameter is validated; the error
 * names the wrong one.  The ReSET step state and the penalties' token
 * counts are kept unless params->reset_state is 1, so a policy may change
 * between steps.
 * On the CUDA backend a window above the largest one set so far (32 at
 * creation) reserves its device ring here, 4 bytes per slot and sequence,
 * so a decode step never allocates; if that fails, the session and its
 * policy are unchanged.
 * Errors: RESET_ERR_INVALID_ARGUMENT, RESET_ERR_INVALID_HANDLE,
 * RESET_ERR_UNSUPPORTED (ReSET without T_low/tau0 for an unrecognised
 * model), RESET_ERR_OUT_OF_MEMORY. */
RESET_API reset_status reset_set_policy(reset_session *session, const reset_policy_params *params);

/* The policy in force on this session: the initial one (see
 * reset_session_create) or the last reset_set_policy's, written as
 * reset_policy_params: t_low and tau0 resolved (a preset's values when one
 * was named or recognised), preset NULL, reset_state 0, so feeding it back to
 * reset_set_policy changes nothing.  out must be initialised with
 * reset_policy_params_init; the library writes only what fits its
 * struct_size.  A caller's "--top-p 0.9" over the model's own sampling is:
 * get, change top_p, set.
 * Errors: RESET_ERR_INVALID_ARGUMENT (out NULL, a bad struct_size),
 * RESET_ERR_INVALID_HANDLE. */
RESET_API reset_status reset_session_get_policy(const reset_session *session, reset_policy_params *out);

/* Added in 0.5: when a sequence stops before an end-of-generation id, as
 * vLLM's stop, stop_token_ids, max_tokens and include_stop_str_in_output,
 * OpenAI's stop and max_tokens, llama.cpp's antiprompts and n_predict do.
 *
 * A token that ends its sequence on an end-of-generation id, a stop string
 * or a stop id is not run through the model: the sequence's context
 * (reset_session_length) keeps every token before it, so a stop string's
 * tokens but its last stay in the context.  The token that reaches
 * max_tokens is run through the model like any other. */
typedef struct reset_stop_options {
    uint32_t struct_size;
    /* Stop strings.  A sequence ends (RESET_END_STOP) at the first token after
     * which its generated text contains one: the text before the string is
     * reported, the string itself only with include_stop_string, nothing after
     * it.  The match is made on the text, not on tokens, and ends as early as
     * possible: at the first character where any stop string is complete
     * (of several complete there, the longest; of equal ones, the first
     * listed), however the text was split into tokens.  While the generated
     * text ends with the beginning of a stop string, that part is held back
     * (reset_step.text is shorter) until later tokens complete or break the
     * match; held text is reported when the sequence ends otherwise (an
     * end-of-generation id, a stop id, max_tokens), and a caller that ends
     * the generation itself reads it with reset_session_held_text.  Only text
     * generated since the sequence's last prefill is searched, never the
     * prompt, and text already reported is not searched again (a stop string
     * set mid-answer matches from the held text on).  Each is valid UTF-8 of
     * 1..RESET_MAX_STOP_STRING_BYTES bytes, NUL-terminated; the model needs a
     * tokenizer. */
    const char *const *strings;
    size_t string_count;   /* 0..RESET_MAX_STOP_STRINGS. Default 0 */
    /* Stop ids: a sequence that draws one ends (RESET_END_STOP) as on an
     * end-of-generation id; the token's text is reported unless it is a
     * special token's.  Ids in [0, vocab_size). */
    const int32_t *ids;
    size_t id_count;       /* 0..RESET_MAX_STOP_IDS. Default 0 */
    /* The most tokens a sequence generates after each prefill of it: the
     * step that draws the max_tokens-th ends it (RESET_END_LENGTH) unless
     * that token ends it otherwise.  Tokens generated before this call count.
     * 0 = no limit. Default 0 */
    int32_t max_tokens;
    int32_t include_stop_string; /* 1: a matched stop string is reported as part of the text. Default 0 */
    /* 1: an end-of-generation id does not end a sequence: it is reported and
     * enters the context like any other token (vLLM's ignore_eos, llama.cpp's
     * --ignore-eos), so a benchmark decodes as many tokens as it asks for.
     * Stop ids, stop strings and max_tokens still end it. Default 0 */
    int32_t ignore_eos;
} reset_stop_options;

/* The most stop strings, bytes per stop string and stop ids of a session. */
#define RESET_MAX_STOP_STRINGS 16
#define RESET_MAX_STOP_STRING_BYTES 256
#define RESET_MAX_STOP_IDS 256

RESET_API void reset_stop_options_init(reset_stop_options *options);
RESET_API void reset_stop_options_init_sized(reset_stop_options *options, size_t struct_size);
#define reset_stop_options_init(options) reset_stop_options_init_sized((options), sizeof(reset_stop_options))

/* (0.5) Set the stop conditions of every sequence of the session, from the
 * next decode step on; options NULL removes them all.  The session copies
 * the strings and ids.  They stay through reset_session_reset and
 * reset_set_policy.  Errors (the conditions are then unchanged):
 * RESET_ERR_INVALID_ARGUMENT (a NULL array with a count above 0, a NULL or
 * empty string, a string over RESET_MAX_STOP_STRING_BYTES, a count above its
 * limit, max_tokens < 0, include_stop_string or ignore_eos not 0 or 1, a bad
 * struct_size),
 * RESET_ERR_BAD_UTF8, RESET_ERR_OUT_OF_RANGE (a stop id outside the
 * vocabulary), RESET_ERR_UNSUPPORTED (stop strings on a model without a
 * tokenizer), RESET_ERR_INVALID_HANDLE. */
RESET_API reset_status reset_set_stop(reset_session *session, const reset_stop_options *options);

/* (0.6) A bias added to one token's logit (OpenAI's and vLLM's logit_bias,
 * llama.cpp's --logit-bias). */
typedef struct reset_logit_bias {
    int32_t token;  /* an id of the vocabulary */
    float bias;     /* added to the logit: finite in [-100, 100], or -INFINITY to ban the token */
} reset_logit_bias;

#define RESET_MAX_LOGIT_BIAS 1024
#define RESET_MAX_LOGIT_BIAS_VALUE 100.0f

/* (0.6) Set the logit bias of every sequence of the session, from the next
 * decode step on; count 0 removes it.  The session copies the entries.  A
 * listed token's logit z becomes z + bias (one FP32 addition) after the
 * repetition penalties and before the temperature, the truncation and the
 * draw, greedy included; -INFINITY bans a token (OpenAI's -100 makes one all
 * but impossible, +100 all but certain).  As with the penalties, the entropy
 * H_t, the ReSET decision, reset_step.logprob and top_logprobs still see the
 * raw logits.  The same on both backends (on the CUDA backend the bias lives
 * on the device, 4 bytes per vocabulary entry, reserved with the session).
 * It stays through reset_session_reset, reset_truncate and reset_set_policy.
 * Errors (the bias in force is then unchanged): RESET_ERR_INVALID_ARGUMENT
 * (entries NULL with count > 0, count above RESET_MAX_LOGIT_BIAS, a bias
 * that is NaN, +inf or outside [-100, 100] and not -INFINITY, a token listed
 * twice, every token of the vocabulary banned), RESET_ERR_OUT_OF_RANGE (a
 * token outside the vocabulary), RESET_ERR_INVALID_HANDLE, RESET_ERR_BACKEND
 * (the upload to the device failed). */
RESET_API reset_status reset_set_logit_bias(reset_session *session, const reset_logit_bias *entries, size_t count);

/* (0.5) The text `sequence` has generated that no step has reported yet,
 * held back because it may begin a stop string ("" when none).  A caller
 * that ends a generation itself (its own budget, a user's interrupt) or
 * appends prompt text to it (a reasoning budget's "</think>") shows this
 * first: the next prefill of the sequence forgets it, as does
 * reset_session_reset.  *text is owned by the session and valid until the
 * next call on it; it is not NUL-terminated.
 * Errors: RESET_ERR_INVALID_ARGUMENT (text or text_len NULL),
 * RESET_ERR_OUT_OF_RANGE (sequence), RESET_ERR_INVALID_HANDLE. */
RESET_API reset_status reset_session_held_text(const reset_session *session, int32_t sequence, const char **text,
                                               size_t *text_len);

/* Why a sequence stopped. */
typedef enum reset_end_reason {
    RESET_END_NONE = 0,     /* still generating */
    RESET_END_EOS = 1,      /* it produced an end-of-generation id (that token is reported) */
    RESET_END_FINISHED = 2, /* it had already ended in an earlier step: token is -1 */
    RESET_END_STOP = 3,     /* (0.5) it produced a stop string or a stop id (reset_set_stop) */
    RESET_END_LENGTH = 4    /* (0.5) it generated reset_stop_options.max_tokens tokens */
} reset_end_reason;

/* (0.4) One of the most likely tokens of a step, with its log-probability. */
typedef struct reset_token_logprob {
    int32_t token;  /* the id */
    float logprob;  /* log p(token), natural log, of softmax(raw logits), as reset_step.logprob
                       (-inf for a token whose logit is -inf) */
} reset_token_logprob;

/* What one decode step produced for one sequence. */
typedef struct reset_step {
    uint32_t struct_size;     /* set by reset_step_init; the library writes only what fits */
    int32_t sequence;         /* which sequence (0..sequences-1) */
    int32_t token;            /* the chosen id, or -1 if the sequence had ended before */
    int32_t end_of_generation;/* 1 if this sequence is done (it ended in this step or before) */
    reset_end_reason end_reason;
    /* The signals the sampler used for this token (ReSET notation). */
    float entropy;            /* H_t, nats, of softmax(raw logits) */
    float step_entropy;       /* Ĥ, the step estimate (0 for policies without one) */
    float global_mean;        /* H̄, the mean of every earlier entropy */
    float threshold;          /* τ (0 for policies without one) */
    float temperature;        /* the temperature applied (0 = greedy) */
    int32_t step_index;       /* index of the reasoning step the token belongs to (0 first) */
    int32_t boundary;         /* 1 if a step boundary was crossed just before this token */
    int32_t uncertain;        /* 1 if the step was judged uncertain (Ĥ > H̄) */
    /* The token's text as complete UTF-8 (bytes of a split code point are
     * held back until it completes).  Owned by the session, valid until the
     * next call on it; empty when the model has no tokenizer. */
    const char *text;
    size_t text_len;
    /* Added in 0.3: log p(token), natural log, of softmax(raw logits): the
     * model's own probability of the chosen token, before the temperature,
     * the truncation and the penalties (vLLM's default "raw" logprobs; the
     * same distribution H_t is taken over).  Its mean over an answer is the
     * log-likelihood per token, exp(-mean) the answer's perplexity.  NaN
     * when there is no token (token -1). */
    float logprob;
    /* Added in 0.4: the session's top_logprobs most likely tokens of the
     * distribution this token was drawn from (the same raw softmax as
     * logprob), most likely first, ties in id order; the chosen token may or
     * may not be among them, and where it is, its entry's logprob equals
     * logprob bit for bit.  top_logprob_count is
     * min(top_logprobs, vocab_size), or 0 when there is no token or the
     * session asked for none (top_logprobs then NULL).  Owned by the
     * session, valid until the next call on it, as text is.  (The pointer
     * comes first: it starts where 0.3's struct ended, so no 0.4 field lies
     * in 0.3's tail padding.) */
    const reset_token_logprob *top_logprobs;
    int32_t top_logprob_count;
    /* Added in 0.5: with RESET_END_STOP, the index of the stop string matched
     * in reset_stop_options.strings, or -1 for a stop id; else -1.  (It lies
     * where 0.4's struct had tail padding: the size is unchanged, and a 0.4
     * caller's padding receives it.) */
    int32_t stop_index;
} reset_step;

/* Set struct_size of `count` steps and clear them (token -1, logprob NaN, no top_logprobs, stop_index -1). */
RESET_API void reset_step_init(reset_step *steps, size_t count);
RESET_API void reset_step_init_sized(reset_step *steps, size_t count, size_t struct_size);
#define reset_step_init(steps, count) reset_step_init_sized((steps), (count), sizeof(reset_step))

/* One decode step for every sequence: sample a token from each active
 * sequence's current logits under the session's policy, then run it through
 * the model so that the next logits are ready.  A sequence that samples an
 * end-of-generation id ends (it is not run through the model), as does one
 * that meets a stop condition of reset_set_stop.
 *
 * steps must hold `capacity >= sequences` entries initialised with
 * reset_step_init; entry i describes sequence i.  *n_active (may be NULL)
 * receives the number of sequences still generating after this step.
 * Errors: RESET_ERR_STATE (no prefill yet, every sequence has ended, or a
 * sequence cut back by reset_truncate has not been prefilled since),
 * RESET_ERR_CONTEXT_OVERFLOW (a sequence is at max_context),
 * RESET_ERR_CANCELLED, RESET_ERR_BUFFER_TOO_SMALL (capacity < sequences),
 * RESET_ERR_BACKEND (a device failure, or logits the model produced as NaN
 * or +inf, or all -inf).  On error the session is unchanged, with one
 * exception: when the CUDA device fails after the step's graph ran (a launch
 * error, or logits the device sampler rejects), RESET_ERR_BACKEND is
 * returned and every later prefill, decode step and logits call returns
 * RESET_ERR_STATE (after checking its own arguments) until
 * reset_session_reset, because the device state is ahead of the host's;
 * reset_set_policy still works.  A CUDA error that loses the device context
 * (an illegal address, say) cannot be undone by a reset: later calls fail
 * with RESET_ERR_BACKEND, and the session and model must be freed. */
RESET_API reset_status reset_decode_step(reset_session *session, reset_step *steps, size_t capacity,
                                         int32_t *n_active);

/* ===================================================================== */
/* Tokenizers and chat formatting                                         */
/* ===================================================================== */
/* (section owned by the text module) */

/* A tokenizer turns UTF-8 text into token ids and back.  A model carries
 * one (reset_model_tokenizer); one can also be loaded on its own.  Supported:
 * Hugging Face tokenizer.json with a byte-level BPE model (Qwen2/Qwen3,
 * DeepSeek-R1-Distill, Llama 3) and sentencepiece tokenizer.model (Llama 2).
 * Ids, texts and chat renderings are identical to HF tokenizers /
 * sentencepiece / transformers' apply_chat_template (tested differentially).
 * A reset_tokenizer is immutable: any number of threads may use one at once. */

typedef struct reset_tokenizer reset_tokenizer;

/* Flags of reset_tokenize. */
#define RESET_TOKENIZE_PARSE_SPECIAL 1u /* the text of a special/added token (e.g. "<|im_end|>") becomes its id,
                                           as HF does by default; without it special tokens' text is encoded as
                                           plain text (HF's split_special_tokens) */
#define RESET_TOKENIZE_ADD_BOS 2u       /* prepend the BOS id, if the tokenizer has one */
/* Flags of reset_detokenize / reset_token_to_text. */
#define RESET_DETOKENIZE_SKIP_SPECIAL 1u /* leave special tokens (BOS, EOS, <|im_end|>, ...) out */

/* Load a tokenizer.  path: a tokenizer.json, a tokenizer.model, or a model
 * directory (tokenizer.json is preferred, else tokenizer.model).
 * tokenizer_config.json and generation_config.json beside it supply
 * BOS/EOS, extra added tokens and the chat template.  Loading Qwen3's 11 MB
 * tokenizer.json takes well under 300 ms.
 * Errors: RESET_ERR_INVALID_ARGUMENT (NULL), RESET_ERR_IO, RESET_ERR_FORMAT,
 * RESET_ERR_UNSUPPORTED (e.g. a WordPiece model; the message names it).
 * Ownership: the caller frees *out_tokenizer with reset_tokenizer_free; on
 * failure it is set to NULL. */
RESET_API reset_status reset_tokenizer_load(const char *path, reset_tokenizer **out_tokenizer);

/* Free a tokenizer from reset_tokenizer_load.  NULL is a no-op.  A model's
 * own tokenizer (reset_model_tokenizer) belongs to the model: passing it
 * frees nothing and sets the thread's last error (RESET_ERR_INVALID_ARGUMENT). */
RESET_API void reset_tokenizer_free(reset_tokenizer *tokenizer);

/* The chat templates libreset renders (see reset_chat_format). */
typedef enum reset_chat_template {
    RESET_CHAT_TEMPLATE_AUTO = 0,        /* recognise the tokenizer's chat_template */
    RESET_CHAT_TEMPLATE_QWEN3 = 1,       /* Qwen3, thinking on/off */
    RESET_CHAT_TEMPLATE_DEEPSEEK_R1 = 2, /* DeepSeek-R1(-Distill) */
    RESET_CHAT_TEMPLATE_LLAMA3 = 3,      /* Llama 3 instruct */
    RESET_CHAT_TEMPLATE_PLAIN = 4        /* plain completion: the contents, concatenated, nothing added */
} reset_chat_template;

typedef struct reset_tokenizer_info {
    uint32_t struct_size;
    int32_t vocab_size;          /* ids are [0, vocab_size) */
    int32_t bos_id;              /* -1 if none */
    int32_t n_eos;               /* end-of-generation ids (generation_config.json, else eos_token) */
    int32_t eos_ids[8];
    char kind[16];               /* "bpe" or "sentencepiece" */
    reset_chat_template chat_template; /* the recognised template; AUTO if none or not recognised */
    int32_t has_chat_template;   /* 1 if tokenizer_config.json has one (recognised or not) */
} reset_tokenizer_info;

RESET_API void reset_tokenizer_info_init(reset_tokenizer_info *info);
RESET_API void reset_tokenizer_info_init_sized(reset_tokenizer_info *info, size_t struct_size);
#define reset_tokenizer_info_init(info) reset_tokenizer_info_init_sized((info), sizeof(reset_tokenizer_info))

/* Describe a tokenizer.  info->struct_size must be set.
 * Errors: RESET_ERR_INVALID_ARGUMENT, RESET_ERR_INVALID_HANDLE. */
RESET_API reset_status reset_tokenizer_get_info(const reset_tokenizer *tokenizer, reset_tokenizer_info *info);

/* Text to ids.  text: text_len bytes of UTF-8 (need not be NUL-terminated;
 * NULL is allowed when text_len is 0).  flags: RESET_TOKENIZE_*.
 * Writes up to capacity ids to ids and always sets *n_ids to the number
 * needed; if that exceeds capacity, returns RESET_ERR_BUFFER_TOO_SMALL and
 * writes nothing (ids may be NULL with capacity 0 to ask for the size).
 * Errors: RESET_ERR_BAD_UTF8 (invalid input is rejected, never altered; the
 * message gives the byte offset), RESET_ERR_INVALID_ARGUMENT,
 * RESET_ERR_INVALID_HANDLE, RESET_ERR_BUFFER_TOO_SMALL, RESET_ERR_FORMAT (a
 * malformed sentencepiece model that loaded but cannot encode this text). */
RESET_API reset_status reset_tokenize(const reset_tokenizer *tokenizer, const char *text, size_t text_len,
                                      uint32_t flags, int32_t *ids, size_t capacity, size_t *n_ids);

/* Ids to text.  flags: RESET_DETOKENIZE_*.  Writes the UTF-8 text (not
 * NUL-terminated) into buffer and always sets *text_len to its byte length;
 * RESET_ERR_BUFFER_TOO_SMALL (writing nothing) when capacity is short.
 * Byte sequences the ids spell that are not valid UTF-8 (e.g. half of a
 * character) become U+FFFD, as in HF.  decode(encode(s)) == s for every valid
 * s, except that Qwen3's NFC normalizer composes s first, as HF's does.
 * Errors: RESET_ERR_OUT_OF_RANGE (an id outside [0, vocab_size); the message
 * names it), RESET_ERR_INVALID_ARGUMENT, RESET_ERR_INVALID_HANDLE,
 * RESET_ERR_BUFFER_TOO_SMALL. */
RESET_API reset_status reset_detokenize(const reset_tokenizer *tokenizer, const int32_t *ids, size_t n_ids,
                                        uint32_t flags, char *buffer, size_t capacity, size_t *text_len);

/* The raw bytes one token stands for, as reset_detokenize would write them
 * in the middle of a text.  They may be part of a UTF-8 character (byte-level
 * and byte-fallback tokens), so they are not always valid UTF-8 on their own:
 * to stream text, use the session's step text, which never splits a
 * character.  With RESET_DETOKENIZE_SKIP_SPECIAL a special token gives "".
 * Same buffer rule and errors as reset_detokenize. */
RESET_API reset_status reset_token_to_text(const reset_tokenizer *tokenizer, int32_t id, uint32_t flags,
                                           char *buffer, size_t capacity, size_t *text_len);

/* The id of a token given its exact text (special, added or vocabulary
 * token; for byte-level BPE the raw bytes, e.g. " the"), or -1 in *out_id.
 * Errors: RESET_ERR_INVALID_ARGUMENT, RESET_ERR_INVALID_HANDLE. */
RESET_API reset_status reset_token_id(const reset_tokenizer *tokenizer, const char *text, size_t text_len,
                                      int32_t *out_id);

/* ReSET's step delimiters for this vocabulary (reset-algorithm.md): which = 0
 * gives the ids whose text is exactly "\n", which = 1 the ids whose text
 * contains "\n\n"; ascending.  Same buffer rule as reset_tokenize.
 * Errors: RESET_ERR_INVALID_ARGUMENT (which not 0/1), RESET_ERR_INVALID_HANDLE,
 * RESET_ERR_BUFFER_TOO_SMALL. */
RESET_API reset_status reset_tokenizer_step_delimiters(const reset_tokenizer *tokenizer, int32_t which,
                                                       int32_t *ids, size_t capacity, size_t *n_ids);

/* One message of a conversation.  role: NUL-terminated ("system", "user",
 * "assistant", "tool"); content: content_len bytes of UTF-8.  An assistant
 * message may hold "<think>...</think>" reasoning; templates that drop
 * reasoning from history (Qwen3, DeepSeek-R1) do so as the official ones do.
 * A "tool" message's content is the tool's result.  An assistant message's
 * tool calls go in reset_chat_options.tool_calls_json (0.11). */
typedef struct reset_chat_message {
    const char *role;
    const char *content;
    size_t content_len;
} reset_chat_message;

typedef struct reset_chat_options {
    uint32_t struct_size;
    reset_chat_template chat_template; /* default AUTO: the tokenizer's own, recognised */
    int32_t add_generation_prompt;     /* 1: end with the assistant's turn opening. Default 1 */
    int32_t enable_thinking;           /* Qwen3: 0 adds the empty "<think>\n\n</think>\n\n". Default 1 */
    /* (0.11) Tool calling, as OpenAI's chat API and transformers'
     * apply_chat_template(tools=...) take it.  Both are NUL-terminated UTF-8
     * JSON; NULL (the default), "null" and "[]" mean none.
     *   tools_json: OpenAI's "tools", an array of tool objects ({"type":
     *     "function", "function": {"name", "description", "parameters"}});
     *     the template shows each to the model as Python's json.dumps writes
     *     it (transformers' tojson): key order kept, ", " and ": ".
     *   tool_calls_json: NULL, or n_messages entries, each NULL or the
     *     matching assistant message's OpenAI "tool_calls" array
     *     ([{"id", "type": "function", "function": {"name", "arguments"}}],
     *     or {"name", "arguments"} without the "function" wrapper);
     *     "arguments" may be a JSON string (rendered as it is) or a value.
     *     Other roles' entries must be NULL.  An OpenAI tool-call message's
     *     null content is content_len 0.
     * Qwen3's template renders both.  The others do not: DeepSeek-R1's shows
     * no tools list and renders tool calls only for content None, which
     * transformers 5 drops before rendering (its template then fails), and
     * Llama 3's first release and PLAIN have neither; there tools or tool
     * calls are RESET_ERR_UNSUPPORTED.  Tool results are "tool" messages,
     * which every template but PLAIN renders. */
    const char *tools_json;
    const char *const *tool_calls_json;
} reset_chat_options;

RESET_API void reset_chat_options_init(reset_chat_options *options);
RESET_API void reset_chat_options_init_sized(reset_chat_options *options, size_t struct_size);
#define reset_chat_options_init(options) reset_chat_options_init_sized((options), sizeof(reset_chat_options))

/* Render a conversation as the model's chat template does, byte-identical to
 * transformers' apply_chat_template(messages, tokenize=False,
 * add_generation_prompt=..., enable_thinking=...).  libreset does not run
 * Jinja: with chat_template AUTO it recognises the tokenizer's template among
 * the exact official ones it has verified; any other template is
 * RESET_ERR_UNSUPPORTED with a message saying to set options->chat_template
 * to a family explicitly.  The result is text: tokenize it with
 * RESET_TOKENIZE_PARSE_SPECIAL (it already holds BOS where the template has
 * one, so do not add RESET_TOKENIZE_ADD_BOS).  options may be NULL.
 * Same buffer rule as reset_detokenize.
 * Errors: RESET_ERR_UNSUPPORTED (unknown or missing template; tools or
 * tool calls the template does not render), RESET_ERR_BAD_UTF8,
 * RESET_ERR_INVALID_ARGUMENT (NULL role, messages NULL with n_messages > 0,
 * an unknown chat_template value; tools_json or a tool_calls_json entry that
 * is not JSON of the shape above, with the offending part named),
 * RESET_ERR_INVALID_HANDLE, RESET_ERR_BUFFER_TOO_SMALL. */
RESET_API reset_status reset_chat_format(const reset_tokenizer *tokenizer, const reset_chat_message *messages,
                                         size_t n_messages, const reset_chat_options *options, char *buffer,
                                         size_t capacity, size_t *text_len);

/* The tokenizer a model carries (from its directory), or NULL when the
 * directory has none.  Owned by the model: valid while the model handle is,
 * never freed by the caller.  NULL (and the thread's last error set) for a
 * NULL or freed model. */
RESET_API const reset_tokenizer *reset_model_tokenizer(const reset_model *model);

/* ===================================================================== */
/* The standalone ReSET policy                                            */
/* ===================================================================== */
/* (section owned by the sampling module) */

/*
 * A reset_policy is the ReSET sampler without a model: another engine feeds
 * it the raw logits of each generated token and the token it took, and gets
 * back the temperature ReSET chooses and the signals behind it.  Sessions use
 * the very same code, so a policy fed a session's logits and tokens makes the
 * session's decisions.
 *
 * Protocol, per generated token (prompt tokens are never fed):
 *     reset_policy_decide (or reset_policy_sample)  on that token's logits
 *     reset_policy_accept                           with the token taken
 * Deciding again before accepting replaces the earlier decision (the entropy
 * is not counted twice).  Steps are delimited by the NL / DNL id sets (see
 * reset_policy_options).  The policy's ReSET state is about 40 bytes plus
 * 4 bytes per window slot.
 */
typedef struct reset_policy reset_policy;

typedef struct reset_policy_options {
    uint32_t struct_size;
    /* NL: the ids whose decoded text is exactly "\n".  May be NULL when
     * n_newline_ids is 0.  Copied; the caller keeps its array. */
    const int32_t *newline_ids;
    size_t n_newline_ids;
    /* DNL: the ids whose decoded text contains "\n\n" (".\n\n", "\n\n\n", ...). */
    const int32_t *double_newline_ids;
    size_t n_double_newline_ids;
    /* The Philox stream reset_policy_sample draws from: draws depend on
     * (params->seed, sequence, number of accepted tokens).  Give each of a
     * batch's sequences its own.  >= 0.  Default 0 */
    int32_t sequence;
} reset_policy_options;

RESET_API void reset_policy_options_init(reset_policy_options *options);
RESET_API void reset_policy_options_init_sized(reset_policy_options *options, size_t struct_size);
#define reset_policy_options_init(options) reset_policy_options_init_sized((options), sizeof(reset_policy_options))

/* Create a standalone policy from params (see reset_policy_params; for
 * RESET/ENTROPY with t_low or tau0 < 0, params->preset must name a row of the
 * paper's table) and the caller's delimiter sets (options may be NULL: no
 * delimiters, so the whole generation is one step).
 * Errors: RESET_ERR_INVALID_ARGUMENT (the message names the wrong field and
 * its value; a negative delimiter id), RESET_ERR_UNSUPPORTED (ReSET without
 * t_low/tau0 and no preset).
 * Ownership: the caller frees *out_policy with reset_policy_free; on failure
 * *out_policy is NULL.  Thread-safety: any thread. */
RESET_API reset_status reset_policy_create(const reset_policy_params *params, const reset_policy_options *options,
                                           reset_policy **out_policy);

/* The same, for logits coming from `model`: a RESET/ENTROPY policy without
 * t_low/tau0 takes them from the paper's table if the model is recognised
 * (Qwen3-8B/14B/32B, DeepSeek-R1-Distill-Qwen-7B/14B, by their shapes), and
 * the delimiter sets are the options' if they give any, else those of the
 * model's tokenizer (NL: ids decoding to exactly "\n"; DNL: ids whose text
 * contains "\n\n"), exactly as a session of the model uses.  Errors: as
 * reset_policy_create, plus RESET_ERR_INVALID_HANDLE, and
 * RESET_ERR_UNSUPPORTED when the options give no delimiter ids and the model
 * has no tokenizer to take them from.  The policy does not keep the model. */
RESET_API reset_status reset_policy_create_for_model(const reset_model *model, const reset_policy_params *params,
                                                     const reset_policy_options *options,
                                                     reset_policy **out_policy);

/* Free a policy.  NULL is a no-op. */
RESET_API void reset_policy_free(reset_policy *policy);

/* Replace the parameters.  The step state and the penalties' token counts
 * are kept unless params->reset_state is 1; the delimiter sets and the count of accepted
 * tokens are always kept.  A new window keeps the most recent entropies.
 * Errors: as reset_policy_create (the policy is unchanged on error). */
RESET_API reset_status reset_policy_set_params(reset_policy *policy, const reset_policy_params *params);

/* What the policy decided for one token. */
typedef struct reset_decision {
    uint32_t struct_size;  /* set by reset_decision_init; the library writes only what fits */
    float temperature;     /* T applied: T_high or T_low (RESET/ENTROPY), the fixed T, 0 = greedy */
    float entropy;         /* H_t, nats, of softmax(raw logits) over the whole vocabulary */
    float step_entropy;    /* Ĥ, the hybrid step estimate (0 for GREEDY/FIXED) */
    float global_mean;     /* H̄, the mean of every earlier entropy (Ĥ before the first) */
    float threshold;       /* τ: Ĥ in an uncertain step, else tau0 (0 for GREEDY/FIXED) */
    int32_t step_index;    /* the reasoning step this token belongs to, 0 first */
    int32_t boundary;      /* 1 if a step boundary was crossed just before this token */
    int32_t uncertain;     /* 1 if Ĥ > H̄ (RESET only; the ENTROPY ablation never gates) */
    float logprob;         /* 0.3: reset_policy_sample: log p(token) of the drawn token under
                              softmax(raw logits), as reset_step.logprob; reset_policy_decide,
                              which draws nothing: NaN */
} reset_decision;

RESET_API void reset_decision_init(reset_decision *decision);
RESET_API void reset_decision_init_sized(reset_decision *decision, size_t struct_size);
#define reset_decision_init(decision) reset_decision_init_sized((decision), sizeof(reset_decision))

/* Decide the temperature of the next token from its raw logits (n_vocab
 * floats, finite or -inf for a masked token; not modified) and update the
 * ReSET state with its entropy.  out must be initialised with
 * reset_decision_init.
 * Errors: RESET_ERR_INVALID_ARGUMENT (NULL, n_vocab of 0 or above
 * INT32_MAX, a NaN or +inf logit, every logit -inf), RESET_ERR_INVALID_HANDLE.
 * On error the policy is unchanged. */
RESET_API reset_status reset_policy_decide(reset_policy *policy, const float *logits, size_t n_vocab,
                                           reset_decision *out);

/* reset_policy_decide, then draw the token as a session would: softmax of
 * the logits, lowered by the penalties (reset_policy_params) for the tokens
 * accepted in this generation (and, for the repetition penalty, those of
 * reset_policy_add_context too), at the decided temperature, truncated by top-k, then top-p,
 * then min-p, drawn with Philox keyed by (seed, options->sequence, accepted
 * tokens); argmax when the temperature is <= 1e-6.  Top-p without a top-k
 * cut draws rejection-first: the untruncated draw is kept if it survives
 * the truncation, else a second uniform draws among the survivors (the
 * same distribution, a cheaper GPU kernel; docs/reset-policy.md).
 * out may be NULL.
 * The token is not accepted: call reset_policy_accept with it (or with the
 * token the caller took instead).  Errors: as reset_policy_decide; with a
 * logit bias (0.7, reset_policy_set_logit_bias), RESET_ERR_OUT_OF_RANGE for
 * logits that do not reach a listed token and RESET_ERR_INVALID_ARGUMENT
 * when the bias bans every token that is not -inf. */
RESET_API reset_status reset_policy_sample(reset_policy *policy, const float *logits, size_t n_vocab,
                                           int32_t *out_token, reset_decision *out);

/* Record the token the sequence took after the last decision: it feeds the
 * step-boundary test, the draw counter and the penalties' token counts.  Errors: RESET_ERR_INVALID_HANDLE,
 * RESET_ERR_OUT_OF_RANGE (token < 0). */
RESET_API reset_status reset_policy_accept(reset_policy *policy, int32_t token);

/* (0.3) Record tokens of the sequence's context that the policy did not
 * accept itself (its prompt, a user's turn), as a session does at every
 * prefill: the repetition penalty lowers them too.  They count for nothing
 * else (not the boundary test, the draw counter or the other penalties).
 * reset_state keeps them; reset_policy_reset forgets them.
 * Errors: RESET_ERR_INVALID_HANDLE, RESET_ERR_INVALID_ARGUMENT (ids NULL with
 * n > 0), RESET_ERR_OUT_OF_RANGE (an id < 0); on error nothing is recorded. */
RESET_API reset_status reset_policy_add_context(reset_policy *policy, const int32_t *ids, size_t n_ids);

/* Start a new sequence: forget the step state, the accepted tokens, their
 * count, the penalties' token counts and the context tokens.  Parameters and
 * delimiter sets stay. */
RESET_API reset_status reset_policy_reset(reset_policy *policy);

/* (0.7) The logit bias of reset_set_logit_bias, for the standalone policy:
 * from the next reset_policy_sample on, a listed token's logit z becomes
 * z + bias after the penalties and before the temperature, the truncation
 * and the draw (greedy included); -INFINITY bans it; count 0 removes the
 * bias.  reset_policy_decide, the entropy, the ReSET decision and
 * reset_decision.logprob still see the raw logits.  The policy copies the
 * entries; the bias stays through reset_policy_set_params and
 * reset_policy_reset.  A policy made by reset_policy_create_for_model
 * checks tokens against the model's vocabulary now; one made by
 * reset_policy_create knows no vocabulary, so reset_policy_sample refuses
 * logits that do not reach every listed token (RESET_ERR_OUT_OF_RANGE), and
 * logits whose every unbanned entry is -inf (RESET_ERR_INVALID_ARGUMENT).
 * Errors (the bias in force is then unchanged): as reset_set_logit_bias's,
 * RESET_ERR_OUT_OF_RANGE for a negative token or, for a model's policy, one
 * outside its vocabulary. */
RESET_API reset_status reset_policy_set_logit_bias(reset_policy *policy, const reset_logit_bias *entries,
                                                   size_t count);

/* --- Traces ----------------------------------------------------------- */
/*
 * A trace is JSON Lines: one object per generated token, written by the
 * caller (a file, a pipe, a log).  These functions format one line, with its
 * trailing '\n', into buffer (snprintf idiom: *out_length always receives the
 * length without the terminating NUL; RESET_ERR_BUFFER_TOO_SMALL, nothing
 * written, when capacity < length + 1).  Floats are printed with 9
 * significant digits (they round-trip); a non-finite one as null.
 *
 *   {"sequence":0,"token":271,"logprob":-0.214,"entropy":0.83,"step_entropy":0.61,
 *    "global_mean":0.57,"threshold":0.61,"temperature":1,"step_index":3,
 *    "boundary":true,"uncertain":true,"end":false,"text":"\n\n"}
 *
 * reset_decision_to_json writes the same keys, without "end" and "text",
 * with the sequence and token given by the caller (token -1: not known).
 * "logprob" (0.3) is null when there is no token, and left out for a
 * caller's struct from before 0.3, which has no such field.
 * "top_logprobs" (0.4) follows "logprob" when the step carries any:
 * [{"token":271,"logprob":-0.214},{"token":198,"logprob":-1.93}, ...]
 * (a logprob of -inf as null).
 * "end_reason" (0.5) follows "end":true: "eos", "stop", "length" or
 * "finished"; with "stop", "stop_index" follows it (-1 for a stop id).
 */
RESET_API reset_status reset_step_to_json(const reset_step *step, char *buffer, size_t capacity,
                                          size_t *out_length);
RESET_API reset_status reset_decision_to_json(const reset_decision *decision, int32_t sequence, int32_t token,
                                              char *buffer, size_t capacity, size_t *out_length);

/* --- Calibration of tau0 ------------------------------------------------ */
/*
 * The paper's recipe (reset-algorithm.md, "Calibrating τ0"): decode a few
 * held-out problems with the model at a fixed, seeded temperature and take a
 * percentile (the 80th) of the per-token entropies, computed exactly as the
 * policy computes H_t (raw logits, T = 1).
 */
typedef struct reset_calibration_options {
    uint32_t struct_size;
    float temperature;       /* sampling temperature while decoding, > 0. Default 0.6 */
    float top_p;             /* (0, 1]. Default 0.95 (the paper's sampling) */
    uint64_t seed;           /* prompt i is decoded with seed + i. Default 0 */
    int32_t max_new_tokens;  /* per prompt, >= 1. Default 4096 */
    float percentile;        /* [0, 100]: tau0 is this percentile. Default 80 */
    /* 0: entropies of the raw logits (the spec, what the policy compares).
     * 1: "processed scores": entropies of the distribution actually sampled,
     * softmax(z / temperature) truncated by top_p, as the authors' released
     * script measures them.  A different distribution: use only to reproduce
     * that script.  Default 0 */
    int32_t processed_scores;
    reset_progress_callback progress; /* called as tokens are generated; NULL = none. Default NULL */
    void *progress_user_data;         /* handed to progress. Default NULL */
} reset_calibration_options;

RESET_API void reset_calibration_options_init(reset_calibration_options *options);
RESET_API void reset_calibration_options_init_sized(reset_calibration_options *options, size_t struct_size);
#define reset_calibration_options_init(options) \
    reset_calibration_options_init_sized((options), sizeof(reset_calibration_options))

typedef struct reset_calibration_result {
    uint32_t struct_size;        /* set by reset_calibration_result_init */
    float tau0;                  /* the chosen percentile of the entropies (nats) */
    float percentiles[101];      /* percentiles[p] = the p-th percentile, p = 0..100 */
    double mean;                 /* mean entropy */
    uint64_t n_tokens;           /* entropies measured (one per generated token) */
    int32_t n_prompts;           /* prompts decoded */
    int32_t n_finished;          /* prompts that ended with an end-of-generation id */
} reset_calibration_result;

RESET_API void reset_calibration_result_init(reset_calibration_result *result);
RESET_API void reset_calibration_result_init_sized(reset_calibration_result *result, size_t struct_size);
#define reset_calibration_result_init(result) \
    reset_calibration_result_init_sized((result), sizeof(reset_calibration_result))

/* Percentiles are linearly interpolated between order statistics: the p-th
 * of n sorted values x is x[k] + f (x[k+1] - x[k]) with p/100 (n - 1) = k + f
 * (numpy's default).  This call computes the table of any entropies the
 * caller measured.  Errors: RESET_ERR_INVALID_ARGUMENT (n == 0, a non-finite
 * value, percentile outside [0, 100]). */
RESET_API reset_status reset_entropy_percentiles(const float *entropies, size_t n, float percentile,
                                                 reset_calibration_result *out);

/* Decode each prompt (token ids, already chat-formatted) on a fresh
 * single-sequence session of `model` until an end-of-generation id or
 * max_new_tokens (or the model's context), measure each generated token's
 * entropy, and fill *out.  options may be NULL.  The `reset calibrate`
 * command feeds it a JSONL of problems through the tokenizer.
 * Errors: RESET_ERR_INVALID_ARGUMENT, RESET_ERR_INVALID_HANDLE,
 * RESET_ERR_OUT_OF_RANGE (a prompt id outside the vocabulary), any error of
 * reset_session_create / reset_prefill / reset_decode_step.
 * Thread-safety: any thread; the model may be shared. */
RESET_API reset_status reset_calibrate(reset_model *model, const int32_t *const *prompts,
                                       const size_t *prompt_lengths, size_t n_prompts,
                                       const reset_calibration_options *options, reset_calibration_result *out);

#ifdef __cplusplus
}
#endif

#endif /* RESET_H */
