/*
 * SWIG interface of the Go binding's low layer: package
 * libreset.dev/reset/internal/native, generated at build time by
 * generate.sh (swig -go -cgo -intgosize 64) into native.go and native_wrap.c
 * next to this file, which bindings/go/.gitignore keeps out of git.  It is
 * internal: the public API (package reset) is written by hand on top of it.
 *
 * What the typemaps below decide, and why:
 *  - Opaque handles (reset_model *, ...) cross as uintptr and out-handles
 *    (reset_model **) as *uintptr the call fills in.  The C memory they name
 *    is not Go's, so the garbage collector must not trace it; package reset
 *    owns each one and frees it in Close.  A proxy type per handle would add
 *    nothing but another layer to unwrap.
 *  - Text crosses as Go strings and byte slices, which already are UTF-8
 *    with a length: input text with its byte length points straight at the
 *    Go string for the duration of the call (it holds no Go pointers, so
 *    cgo's rules allow it); a caller's output buffer (the snprintf idiom)
 *    is a []byte the call writes into.  NUL-terminated inputs (a path, a
 *    preset name) are copied into malloc'd memory that SWIG's freearg frees
 *    when the call returns, and the library's own static strings (version,
 *    status name, last error) are copied into Go strings: no C string
 *    outlives a call.
 *  - Id and logit arrays cross as []int32 / []float32 with their length,
 *    and a sequence's state in memory (0.9) as a []byte, lent for the call
 *    as a text buffer is.
 *  - Counts and ids a call writes (size_t *n_ids, int32_t *out_token, ...)
 *    cross as *int / *int32; the call writes a C temporary first, so a nil
 *    Go pointer is allowed where the header allows NULL, and a
 *    BUFFER_TOO_SMALL still reports the size needed.
 *  - Statuses are returned as they are: reset_last_error() is per OS thread,
 *    so package reset reads it with its goroutine locked to the thread that
 *    made the call.
 *  - Structs (options, params, steps, decisions, infos) are SWIG proxies
 *    over C memory, made with New* and freed with Delete* at a known point;
 *    structs that hold pointers (the chat messages and their tools, the
 *    steps' text, the policy's delimiter ids and preset, the stop strings
 *    and ids) keep them
 *    in C memory, because C memory must not keep pointing at Go memory after
 *    a call returns.
 *  - No callbacks: the progress callbacks of loading and calibration are not
 *    offered to Go (calibration is the C API's and the CLI's), so no
 *    runtime/cgo.Handle is needed.
 */
%module native

%{
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "reset.h"
typedef char *reset_go_text;
%}
typedef char *reset_go_text;

/* The wrapper links against libreset; its header and library are found
 * through CGO_CFLAGS / CGO_LDFLAGS, or where the compiler looks. */
%insert(cgo_comment_typedefs) %{
#cgo LDFLAGS: -lreset
%}

%include <stdint.i>

/* ---------------------------------------------------------------- handles */

%define RESET_GO_HANDLE(TYPE)
%typemap(gotype) TYPE *, const TYPE * "uintptr"
%typemap(in) TYPE *, const TYPE * %{ $1 = ($1_ltype)$input; %}
%typemap(out) TYPE *, const TYPE * %{ $result = $1; %}
%typemap(gotype) TYPE ** "*uintptr"
%typemap(in) TYPE ** %{ $1 = ($1_ltype)$input; %}
%enddef

RESET_GO_HANDLE(reset_model)
RESET_GO_HANDLE(reset_session)
RESET_GO_HANDLE(reset_tokenizer)
RESET_GO_HANDLE(reset_policy)
/* A conversation built in C memory by the reset_go_messages_* helpers below. */
RESET_GO_HANDLE(reset_chat_message)
/* A logit bias (0.6; the policy's, 0.7) built in C memory by reset_go_logit_bias_new below. */
RESET_GO_HANDLE(reset_logit_bias)
/* Texts in C memory (0.11: the tools and tool calls of reset_chat_options),
 * built by the reset_go_texts_* helpers below. */
RESET_GO_HANDLE(reset_go_text)

/* ---------------------------------------------------------------- text */

/* Text with its byte length, read by the call: the Go string's own bytes. */
%apply (char *STRING, size_t LENGTH) { (const char *text, size_t text_len) };

/* A caller's buffer the call writes into. */
%typemap(gotype) (char *buffer, size_t capacity) "[]byte"
%typemap(in) (char *buffer, size_t capacity) %{
  $1 = (char *)$input.array;
  $2 = (size_t)$input.len;
%}

/* A sequence's state in memory (0.9), as []byte: reset_save_sequence_to_memory
 * writes into the caller's slice (the snprintf idiom; an empty one asks the
 * size), reset_load_sequence_from_memory reads one for the duration of the
 * call.  An empty slice may have no array at all (nil), and the library
 * refuses NULL data (INVALID_ARGUMENT): zero bytes cross as a pointer to
 * nothing read instead, so that the library judges them as it judges any
 * state too short to be one (FORMAT). */
%typemap(gotype) (void *buffer, size_t capacity), (const void *data, size_t size) "[]byte"
%typemap(in) (void *buffer, size_t capacity) %{
  $1 = ($1_ltype)$input.array;
  $2 = (size_t)$input.len;
%}
%typemap(in) (const void *data, size_t size) %{
  $1 = ($1_ltype)($input.len ? (void *)$input.array : (void *)"");
  $2 = (size_t)$input.len;
%}

/* Fixed char arrays of the info structs: read-only, up to their NUL (a
 * full array has none, so strlen could run past it). */
%typemap(out, fragment="AllocateString") char [ANY] %{
  {
    const char *end = (const char *)memchr($1, 0, $1_dim0);
    $result = Swig_AllocateString($1, end ? (size_t)(end - $1) : (size_t)$1_dim0);
  }
%}

/* ---------------------------------------------------------------- arrays */

%define RESET_GO_ARRAY(CTYPE, GOTYPE)
%typemap(gotype) (const CTYPE *IN, size_t LENGTH), (CTYPE *OUT, size_t LENGTH) "[]GOTYPE"
%typemap(in) (const CTYPE *IN, size_t LENGTH), (CTYPE *OUT, size_t LENGTH) %{
  $1 = ($1_ltype)$input.array;
  $2 = (size_t)$input.len;
%}
%enddef

RESET_GO_ARRAY(int32_t, int32)
RESET_GO_ARRAY(float, float32)

%apply (const int32_t *IN, size_t LENGTH) { (const int32_t *ids, size_t n_ids) };
/* Ids a call writes (the snprintf idiom): reset_tokenize's, reset_tokenizer_step_delimiters' and
 * reset_session_tokens' (0.6). */
%apply (int32_t *OUT, size_t LENGTH) { (int32_t *ids, size_t capacity) };
%apply (const float *IN, size_t LENGTH) { (const float *logits, size_t n_vocab) };
%apply (float *OUT, size_t LENGTH) { (float *out, size_t capacity) };
/* reset_step's copy_top_logprobs (below): a step's ids and logprobs. */
%apply (int32_t *OUT, size_t LENGTH) { (int32_t *tokens, size_t n_tokens) };
%apply (float *OUT, size_t LENGTH) { (float *logprobs, size_t n_logprobs) };
/* reset_go_logit_bias_new (below): a logit bias's ids and values (0.6). */
%apply (const int32_t *IN, size_t LENGTH) { (const int32_t *bias_tokens, size_t n_bias_tokens) };
%apply (const float *IN, size_t LENGTH) { (const float *biases, size_t n_biases) };

/* ---------------------------------------------------------------- out-values */

%define RESET_GO_OUT(CTYPE, GOTYPE, CGOTYPE)
%typemap(gotype) CTYPE *OUT "*GOTYPE"
%typemap(in) CTYPE *OUT (CTYPE temp) %{
  temp = 0;
  $1 = &temp;
%}
%typemap(argout) CTYPE *OUT %{
  if ($input) *$input = (CGOTYPE)temp$argnum;
%}
%enddef

RESET_GO_OUT(size_t, int, intgo)
RESET_GO_OUT(int32_t, int32, int32_t)

/* size: the bytes reset_save_sequence_to_memory (0.9) needs. */
%apply size_t *OUT { size_t *n_ids, size_t *text_len, size_t *out_length, size_t *size };
%apply int32_t *OUT { int32_t *out_id, int32_t *out_token, int32_t *n_active };

/* ---------------------------------------------------------------- structs */

/* Callbacks are not offered to Go; calibration is the C API's and the CLI's. */
%ignore reset_model_options::progress;
%ignore reset_model_options::progress_user_data;
%ignore reset_calibration_options;
%ignore reset_calibration_options_init;
%ignore reset_calibration_result;
%ignore reset_calibration_result_init;
%ignore reset_entropy_percentiles;
%ignore reset_calibrate;
/* The exported reset_X_init_sized (0.3) are not offered to Go: this wrapper is C compiled against
 * reset.h, where each reset_X_init is a macro that calls its _sized function with sizeof the struct
 * SWIG allocates, so wrapping reset_X_init is already the sized call. */
%rename("$ignore", regexmatch$name="^reset_.*_init_sized$") "";
/* Pointer members are set through the owning %extend methods below. */
%ignore reset_policy_params::preset;
%ignore reset_policy_options::newline_ids;
%ignore reset_policy_options::n_newline_ids;
%ignore reset_policy_options::double_newline_ids;
%ignore reset_policy_options::n_double_newline_ids;
/* Set through reset_stop_options's add_string and set_ids below (0.5), so the
 * counts always match what the struct owns. */
/* Pointers into C memory, set by reset_go_chat_options_set_tools (below). */
%ignore reset_chat_options::tools_json;
%ignore reset_chat_options::tool_calls_json;
%ignore reset_stop_options::strings;
%ignore reset_stop_options::string_count;
%ignore reset_stop_options::ids;
%ignore reset_stop_options::id_count;
%ignore reset_step::text;
/* Read through reset_go_held_text below (0.5): the text it points at is the session's. */
%ignore reset_session_held_text;
/* Read through reset_step's copy_top_logprobs below: Go never holds a reset_token_logprob. */
%ignore reset_step::top_logprobs;
%ignore reset_token_logprob;
%ignore reset_model_info::eos_ids;
%ignore reset_tokenizer_info::eos_ids;
%ignore reset_chat_message;
/* Built by reset_go_logit_bias_new below (0.6): Go never holds a reset_logit_bias. */
%ignore reset_logit_bias;
%immutable reset_model_info::architecture;
%immutable reset_tokenizer_info::kind;
%immutable reset_step::text_len;
%immutable reset_step::top_logprob_count;

/* The header's export attribute (__attribute__ on ELF) is not C that SWIG parses. */
#define __attribute__(x)
%include "reset.h"

/* reset_policy_params owns a copy of its preset name (a Go string must not
 * stay pointed at after the call that lent it), freed with the struct.
 * reset_policy_params_init sets preset to NULL, so it comes before
 * set_preset. */
%extend reset_policy_params {
  void set_preset(const char *name) {
    free((char *)$self->preset);
    $self->preset = NULL;
    if (name && *name) {
      size_t n = strlen(name) + 1;
      char *copy = (char *)malloc(n);
      if (copy) $self->preset = (const char *)memcpy(copy, name, n);
    }
  }
  ~reset_policy_params() {
    free((char *)$self->preset);
    free($self);
  }
}

/* reset_policy_options owns copies of its delimiter ids, freed with it
 * (reset_policy_create copies them again, so they only live until then). */
%extend reset_policy_options {
  void set_newline_ids(const int32_t *ids, size_t n_ids) {
    free((int32_t *)$self->newline_ids);
    $self->newline_ids = n_ids ? (const int32_t *)malloc(n_ids * sizeof *ids) : NULL;
    if ($self->newline_ids) memcpy((int32_t *)$self->newline_ids, ids, n_ids * sizeof *ids);
    $self->n_newline_ids = $self->newline_ids ? n_ids : 0;
  }
  void set_double_newline_ids(const int32_t *ids, size_t n_ids) {
    free((int32_t *)$self->double_newline_ids);
    $self->double_newline_ids = n_ids ? (const int32_t *)malloc(n_ids * sizeof *ids) : NULL;
    if ($self->double_newline_ids) memcpy((int32_t *)$self->double_newline_ids, ids, n_ids * sizeof *ids);
    $self->n_double_newline_ids = $self->double_newline_ids ? n_ids : 0;
  }
  ~reset_policy_options() {
    free((int32_t *)$self->newline_ids);
    free((int32_t *)$self->double_newline_ids);
    free($self);
  }
}

/* reset_stop_options (0.5) owns copies of its stop strings and ids, freed
 * with it (reset_set_stop copies them again, so they only live until then):
 * C memory must not point at a Go string or slice once the call that lent it
 * returns.  add_string appends one string, NUL-terminated (package reset
 * refuses one holding a NUL before); both return 0, or -1 when memory runs
 * out (what was copied before is still freed with the struct).
 * reset_stop_options_init sets the arrays to NULL, so it comes first. */
%extend reset_stop_options {
  int add_string(const char *stop_string) {
    const char **strings = (const char **)realloc((void *)$self->strings,
                                                  ($self->string_count + 1) * sizeof *strings);
    if (!strings) return -1;
    $self->strings = strings;
    size_t n = strlen(stop_string) + 1;
    char *copy = (char *)malloc(n);
    if (!copy) return -1;
    strings[$self->string_count++] = (const char *)memcpy(copy, stop_string, n);
    return 0;
  }
  int set_ids(const int32_t *ids, size_t n_ids) {
    free((int32_t *)$self->ids);
    $self->ids = NULL;
    $self->id_count = 0;
    if (!n_ids) return 0;
    int32_t *copy = (int32_t *)malloc(n_ids * sizeof *ids);
    if (!copy) return -1;
    $self->ids = (const int32_t *)memcpy(copy, ids, n_ids * sizeof *ids);
    $self->id_count = n_ids;
    return 0;
  }
  ~reset_stop_options() {
    for (size_t i = 0; i < $self->string_count; i++) free((char *)$self->strings[i]);
    free((void *)$self->strings);
    free((int32_t *)$self->ids);
    free($self);
  }
}

/* A step's text and top logprobs (0.4) belong to the session until its next
 * call: Go copies the text_len bytes of its text, and the ids and logprobs
 * of its top_logprob_count entries into two slices of that length, right
 * after the step. */
%extend reset_step {
  void copy_text(char *buffer, size_t capacity) {
    if ($self->text && $self->text_len && capacity >= $self->text_len) memcpy(buffer, $self->text, $self->text_len);
  }
  void copy_top_logprobs(int32_t *tokens, size_t n_tokens, float *logprobs, size_t n_logprobs) {
    size_t n = $self->top_logprobs && $self->top_logprob_count > 0 ? (size_t)$self->top_logprob_count : 0;
    for (size_t i = 0; i < n && i < n_tokens && i < n_logprobs; i++) {
      tokens[i] = $self->top_logprobs[i].token;
      logprobs[i] = $self->top_logprobs[i].logprob;
    }
  }
}

%extend reset_model_info {
  int32_t eos_id(int32_t i) { return i >= 0 && i < $self->n_eos && i < 8 ? $self->eos_ids[i] : -1; }
}
%extend reset_tokenizer_info {
  int32_t eos_id(int32_t i) { return i >= 0 && i < $self->n_eos && i < 8 ? $self->eos_ids[i] : -1; }
}

%inline %{
/* reset_decode_step fills one step per sequence: an array in C memory,
 * because a step holds a pointer the library writes, which cgo forbids in
 * Go memory.  NULL when memory runs out. */
reset_step *reset_go_steps_new(size_t count) {
    reset_step *steps = (reset_step *)calloc(count ? count : 1, sizeof *steps);
    if (steps) reset_step_init(steps, count);
    return steps;
}
/* The i-th step, borrowed from the array. */
reset_step *reset_go_steps_at(reset_step *steps, size_t i) { return steps + i; }
void reset_go_steps_free(reset_step *steps) { free(steps); }

/* reset_session_held_text (0.5) hands out a pointer into the session, valid
 * until its next call and not NUL-terminated: Go gets the bytes instead,
 * copied into buffer (a []byte) in the same call.  Its status is the
 * library's; *text_len is the held text's byte length even when buffer is
 * shorter, and then nothing is copied (package reset asks again with a
 * buffer that long: the held text only changes with a step, a prefill or a
 * reset). */
reset_status reset_go_held_text(const reset_session *session, int32_t sequence, char *buffer, size_t capacity,
                                size_t *text_len) {
    const char *text = NULL;
    size_t n = 0;
    reset_status status = reset_session_held_text(session, sequence, &text, &n);
    *text_len = n;
    if (status == RESET_OK && n && n <= capacity) memcpy(buffer, text, n);
    return status;
}

/* A conversation for reset_chat_format, in C memory for the same reason:
 * each message points at its role and content.  NULL when memory runs out. */
reset_chat_message *reset_go_messages_new(size_t count) {
    return (reset_chat_message *)calloc(count ? count : 1, sizeof(reset_chat_message));
}
/* Copies role (NUL-terminated) and content (with its length) into message
 * i.  0, or -1 when memory runs out (what was copied is still freed by
 * reset_go_messages_free). */
int reset_go_messages_set(reset_chat_message *messages, size_t i, const char *role,
                          const char *text, size_t text_len) {
    size_t role_len = strlen(role);
    char *role_copy = (char *)malloc(role_len + 1);
    char *content = (char *)malloc(text_len + 1);
    if (role_copy) memcpy(role_copy, role, role_len + 1);
    if (content) {
        if (text_len) memcpy(content, text, text_len);
        content[text_len] = 0;
    }
    messages[i].role = role_copy;
    messages[i].content = content;
    messages[i].content_len = text_len;
    return role_copy && content ? 0 : -1;
}
void reset_go_messages_free(reset_chat_message *messages, size_t count) {
    if (!messages) return;
    for (size_t i = 0; i < count; i++) {
        free((char *)messages[i].role);
        free((char *)messages[i].content);
    }
    free(messages);
}

/* Tool calling (0.11): reset_chat_options points at the tools' JSON and at
 * one tool-call JSON per message, all NUL-terminated and in C memory for the
 * reason above.  An array of count texts, NULL each; NULL when memory runs
 * out. */
reset_go_text *reset_go_texts_new(size_t count) {
    return (reset_go_text *)calloc(count ? count : 1, sizeof(reset_go_text));
}
/* Copies text (with its length) into entry i, NUL-terminated.  0, or -1 when
 * memory runs out. */
int reset_go_texts_set(reset_go_text *texts, size_t i, const char *text, size_t text_len) {
    char *copy = (char *)malloc(text_len + 1);
    if (!copy) return -1;
    if (text_len) memcpy(copy, text, text_len);
    copy[text_len] = 0;
    free(texts[i]);
    texts[i] = copy;
    return 0;
}
void reset_go_texts_free(reset_go_text *texts, size_t count) {
    if (!texts) return;
    for (size_t i = 0; i < count; i++) free(texts[i]);
    free(texts);
}
/* Points options at tools[0] (tools_json) and at tool_calls (tool_calls_json,
 * one entry per message); either array may be NULL, meaning none.  The
 * arrays must outlive every call that reads options. */
void reset_go_chat_options_set_tools(reset_chat_options *options, const reset_go_text *tools,
                                     const reset_go_text *tool_calls) {
    options->tools_json = tools ? tools[0] : NULL;
    options->tool_calls_json = (const char *const *)tool_calls;
}

/* The entries of reset_set_logit_bias (0.6) and reset_policy_set_logit_bias
 * (0.7), in C memory: entry i is {bias_tokens[i], biases[i]}, for i below
 * the shorter slice's length (package reset passes two of one length).  The
 * library copies them, so reset_go_logit_bias_free frees them right after
 * the call.  NULL when memory runs out. */
reset_logit_bias *reset_go_logit_bias_new(const int32_t *bias_tokens, size_t n_bias_tokens, const float *biases,
                                          size_t n_biases) {
    size_t n = n_bias_tokens < n_biases ? n_bias_tokens : n_biases;
    reset_logit_bias *entries = (reset_logit_bias *)calloc(n ? n : 1, sizeof *entries);
    if (!entries) return NULL;
    for (size_t i = 0; i < n; i++) {
        entries[i].token = bias_tokens[i];
        entries[i].bias = biases[i];
    }
    return entries;
}
void reset_go_logit_bias_free(reset_logit_bias *entries) { free(entries); }
%}
