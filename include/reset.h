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
 *    only the first struct_size bytes and uses defaults for the rest.
 *  - Text is UTF-8 with explicit byte lengths.  Functions that write into a
 *    caller's buffer follow the snprintf idiom: they always report the size
 *    needed, and return RESET_ERR_BUFFER_TOO_SMALL (writing nothing) when the
 *    buffer is short.
 *  - Threads.  A reset_model is immutable after load and may be shared by
 *    any number of sessions and threads.  A reset_session (and a
 *    reset_policy) is used by one thread at a time; only
 *    reset_session_cancel may be called on it from any other thread.
 *    reset_last_error is per thread.
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
 * versions only append functions and struct fields. */
#define RESET_VERSION_MAJOR 0
#define RESET_VERSION_MINOR 1
#define RESET_VERSION_PATCH 0
#define RESET_VERSION_STRING "0.1.0"
#define RESET_VERSION_NUMBER (RESET_VERSION_MAJOR * 10000 + RESET_VERSION_MINOR * 100 + RESET_VERSION_PATCH)

/* The version of the library actually loaded, as RESET_VERSION_NUMBER.
 * Bindings compare its major with the one they were written for and refuse
 * a mismatch. */
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
                                       NVFP4 W4A16 for a ModelOpt NVFP4 checkpoint */
    RESET_WEIGHTS_BF16 = 1,         /* BF16 (F16/F32 checkpoints are rounded to BF16 on load) */
    RESET_WEIGHTS_NVFP4_W4A16 = 2,  /* NVFP4 weights, activations kept in high precision */
    RESET_WEIGHTS_NVFP4_W4A4 = 3    /* NVFP4 weights and activations quantized per 16 on the fly */
} reset_weights;

typedef enum reset_backend {
    RESET_BACKEND_AUTO = 0, /* CUDA if the library was built with it and a device is present, else CPU */
    RESET_BACKEND_CPU = 1,  /* the FP32 reference engine */
    RESET_BACKEND_CUDA = 2
} reset_backend;

typedef struct reset_model_options {
    uint32_t struct_size;
    reset_weights weights;    /* default RESET_WEIGHTS_AUTO */
    reset_backend backend;    /* default RESET_BACKEND_AUTO */
    int32_t quantize_lm_head; /* 1: NVFP4 lm_head too when quantizing on load. Default 0 (BF16) */
    int32_t device;           /* CUDA device ordinal. Default 0 */
    int32_t threads;          /* CPU threads; 0 = all cores. Default 0 */
} reset_model_options;

/* Fill *options with defaults and set struct_size. */
RESET_API void reset_model_options_init(reset_model_options *options);

/* Load a model from a Hugging Face directory: config.json,
 * model.safetensors or model.safetensors.index.json with its shards,
 * optionally generation_config.json, hf_quant_config.json and a tokenizer.
 * Supported model_type values: "qwen3", "qwen2", "llama".
 *
 * Safetensors files are mapped, not copied; every header is validated
 * (size, JSON, offsets inside the file and not overlapping, dtype and shape
 * against the config).  options may be NULL for defaults.
 *
 * Errors: RESET_ERR_IO (missing directory or file), RESET_ERR_FORMAT,
 * RESET_ERR_UNSUPPORTED (architecture, quantization feature),
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
    int32_t max_position_embeddings;
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
} reset_model_info;

RESET_API void reset_model_info_init(reset_model_info *info);

/* Describe a model.  info->struct_size must be set (reset_model_info_init).
 * Errors: RESET_ERR_INVALID_ARGUMENT, RESET_ERR_INVALID_HANDLE. */
RESET_API reset_status reset_model_get_info(const reset_model *model, reset_model_info *info);

/* ===================================================================== */
/* Sampling policies                                                      */
/* ===================================================================== */

typedef enum reset_policy_kind {
    RESET_POLICY_GREEDY = 0,  /* argmax of the raw logits */
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
    int32_t window;           /* RESET: step-estimator window w >= 1. Default 32 */
    const char *preset;       /* name of a model in the paper's table ("Qwen3-8B", ...) whose
                                 T_low/tau0 to use; NULL = recognise the loaded model. Default NULL */
    int32_t reset_state;      /* 1: clear the ReSET step state when this policy is applied. Default 0 */
} reset_policy_params;

RESET_API void reset_policy_params_init(reset_policy_params *params);

/* ===================================================================== */
/* Sessions                                                               */
/* ===================================================================== */

typedef struct reset_session reset_session;

typedef struct reset_session_options {
    uint32_t struct_size;
    int32_t max_context; /* tokens per sequence, >= 1; 0 = min(model maximum, 4096). Default 0 */
    int32_t sequences;   /* parallel sequences 1..8 sharing one prompt. Default 1 */
} reset_session_options;

RESET_API void reset_session_options_init(reset_session_options *options);

/* Create a session (KV cache, sampler state) on a model.  options may be
 * NULL.  All memory a generation needs is reserved here, so running out of
 * memory is an error now (RESET_ERR_OUT_OF_MEMORY), never mid-generation.
 * The session's initial policy is the model's generation_config.json
 * sampling if it samples (fixed temperature with its top_k/top_p), else
 * greedy.
 * Errors: RESET_ERR_INVALID_ARGUMENT (sequences outside 1..8, max_context <
 * 0 or above the model's maximum), RESET_ERR_INVALID_HANDLE,
 * RESET_ERR_OUT_OF_MEMORY.
 * Ownership: the caller frees *out_session with reset_session_free; it keeps
 * its model alive.  Thread-safety: any thread; the model may be shared. */
RESET_API reset_status reset_session_create(reset_model *model, const reset_session_options *options,
                                            reset_session **out_session);

/* Free a session. NULL is a no-op. */
RESET_API void reset_session_free(reset_session *session);

/* Forget every token of every sequence (the KV cache is kept allocated) and
 * clear the sampler's step state.  The policy stays. */
RESET_API reset_status reset_session_reset(reset_session *session);

/* Ask the call running on this session (or, if none runs, the next
 * prefill/decode call) to stop.  It returns RESET_ERR_CANCELLED at the next
 * token boundary and leaves the session as it was before that call.  Safe
 * from any thread, including a signal handler's thread; never blocks. */
RESET_API reset_status reset_session_cancel(reset_session *session);

/* Append prompt tokens to every active sequence and compute the logits of
 * the last one.  Sequences that hold the same tokens share one computation
 * (parallel samples of one prompt are prefilled once).  May be called again
 * to append (a chat's next turn).
 * Errors: RESET_ERR_OUT_OF_RANGE (an id outside [0, vocab_size)),
 * RESET_ERR_CONTEXT_OVERFLOW, RESET_ERR_CANCELLED,
 * RESET_ERR_INVALID_ARGUMENT (ids NULL with n > 0, n == 0).
 * On any error the session is unchanged. */
RESET_API reset_status reset_prefill(reset_session *session, const int32_t *ids, size_t n_ids);

/* Copy the logits of sequence `sequence`'s last position (vocab_size
 * floats, the model's raw logits before any temperature) into out.
 * Errors: RESET_ERR_STATE (no prefill yet), RESET_ERR_OUT_OF_RANGE,
 * RESET_ERR_BUFFER_TOO_SMALL (capacity < vocab_size). */
RESET_API reset_status reset_session_logits(const reset_session *session, int32_t sequence, float *out,
                                            size_t capacity);

/* Number of tokens sequence `sequence` holds (prompt and generated). -1 on a bad argument. */
RESET_API int32_t reset_session_length(const reset_session *session, int32_t sequence);

/* Replace the session's policy.  Every parameter is validated; the error
 * names the wrong one.  The ReSET step state is kept unless
 * params->reset_state is 1, so a policy may change between steps.
 * Errors: RESET_ERR_INVALID_ARGUMENT, RESET_ERR_INVALID_HANDLE,
 * RESET_ERR_UNSUPPORTED (ReSET without T_low/tau0 for an unrecognised
 * model). */
RESET_API reset_status reset_set_policy(reset_session *session, const reset_policy_params *params);

/* Why a sequence stopped. */
typedef enum reset_end_reason {
    RESET_END_NONE = 0,     /* still generating */
    RESET_END_EOS = 1,      /* it produced an end-of-generation id (that token is reported) */
    RESET_END_FINISHED = 2  /* it had already ended in an earlier step: token is -1 */
} reset_end_reason;

/* What one decode step produced for one sequence. */
typedef struct reset_step {
    uint32_t struct_size;     /* set by reset_step_init; the library writes only what fits */
    int32_t sequence;         /* which sequence (0..sequences-1) */
    int32_t token;            /* the chosen id, or -1 if the sequence had ended before */
    int32_t end_of_generation;/* 1 if this sequence is done (token was EOS, or it ended before) */
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
} reset_step;

/* Set struct_size of `count` steps (and clear them). */
RESET_API void reset_step_init(reset_step *steps, size_t count);

/* One decode step for every sequence: sample a token from each active
 * sequence's current logits under the session's policy, then run it through
 * the model so that the next logits are ready.  A sequence that samples an
 * end-of-generation id ends (it is not run through the model).
 *
 * steps must hold `capacity >= sequences` entries initialised with
 * reset_step_init; entry i describes sequence i.  *n_active (may be NULL)
 * receives the number of sequences still generating after this step.
 * Errors: RESET_ERR_STATE (no prefill yet, or every sequence has ended),
 * RESET_ERR_CONTEXT_OVERFLOW (a sequence is at max_context),
 * RESET_ERR_CANCELLED, RESET_ERR_BUFFER_TOO_SMALL (capacity < sequences),
 * RESET_ERR_BACKEND.  On error the session is unchanged. */
RESET_API reset_status reset_decode_step(reset_session *session, reset_step *steps, size_t capacity,
                                         int32_t *n_active);

/* ===================================================================== */
/* Tokenizers and chat formatting                                         */
/* ===================================================================== */
/* (section owned by the text module) */

/* ===================================================================== */
/* The standalone ReSET policy                                            */
/* ===================================================================== */
/* (section owned by the sampling module) */

#ifdef __cplusplus
}
#endif

#endif /* RESET_H */
