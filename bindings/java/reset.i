/*
 * SWIG interface of the Java binding: the low layer, generated at build time
 * (bindings/java/build.sh) into package dev.libreset as package-private
 * classes.  The public API (Model, Session, Policy, Tokenizer, ...) is written
 * by hand on top of it.
 *
 * What the typemaps below decide, and why:
 *  - Text never crosses as a Java String: JNI's String functions speak
 *    "modified UTF-8" (U+0000 as two bytes, supplementary characters as two
 *    3-byte surrogates), which is not the UTF-8 libreset reads and writes.
 *    Every char* crosses as byte[]; Java encodes and decodes with
 *    StandardCharsets.UTF_8.
 *  - Opaque handles (reset_model *, ...) cross as Java longs, and out-handles
 *    (reset_model **) as a long[1] the call fills in: the hand-written
 *    classes own them, so a proxy object per handle would add nothing.
 *  - A call returning a reset_status other than RESET_OK throws the checked
 *    dev.libreset.ResetException, built in C right after the call: the
 *    message comes from reset_last_error(), which is per thread, so it must
 *    be read on the thread that failed, before anything else runs there.
 *  - Structs (options, params, steps, decisions, infos) are SWIG proxies over
 *    C memory that the Java side frees with delete(); they get no finalizer,
 *    so every one is freed at a known point (the leak test counts on it).
 */
%module ResetNative

%{
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reset.h"

/* Throw dev.libreset.ResetException(status, name, message) with the name and
 * message as UTF-8 bytes.  reset_last_error()'s pointer lasts only until the
 * next libreset call on this thread, so the status name is taken first and
 * the message is copied into Java at once.  If the class cannot be found or
 * built, the JNI error that says so stays pending instead. */
static void reset_java_throw(JNIEnv *jenv, reset_status status) {
    const char *name = reset_status_name(status);
    const char *message = reset_last_error();
    jsize message_len = (jsize)strlen(message);
    jbyteArray jmessage = (*jenv)->NewByteArray(jenv, message_len);
    if (!jmessage) return;
    (*jenv)->SetByteArrayRegion(jenv, jmessage, 0, message_len, (const jbyte *)message);
    jsize name_len = (jsize)strlen(name);
    jbyteArray jname = (*jenv)->NewByteArray(jenv, name_len);
    if (!jname) return;
    (*jenv)->SetByteArrayRegion(jenv, jname, 0, name_len, (const jbyte *)name);
    jclass cls = (*jenv)->FindClass(jenv, "dev/libreset/ResetException");
    if (!cls) return;
    jmethodID ctor = (*jenv)->GetMethodID(jenv, cls, "<init>", "(I[B[B)V");
    if (!ctor) return;
    jobject exception = (*jenv)->NewObject(jenv, cls, ctor, (jint)status, jname, jmessage);
    if (exception) (*jenv)->Throw(jenv, (jthrowable)exception);
}

/* A Java byte[] as a NUL-terminated C string in malloc'd memory (the caller
 * frees it).  NULL for a null array, or with an exception pending when
 * memory runs out or, for a string libreset reads up to its NUL (what names
 * it; NULL for one that comes with its length), when it holds a NUL: C would
 * silently read a shorter string (another path, another role). */
static char *reset_java_cstring(JNIEnv *jenv, jbyteArray bytes, const char *what) {
    if (!bytes) return NULL;
    jsize n = (*jenv)->GetArrayLength(jenv, bytes);
    char *out = (char *)malloc((size_t)n + 1);
    if (!out) {
        SWIG_JavaThrowException(jenv, SWIG_JavaOutOfMemoryError, "no memory for a string argument");
        return NULL;
    }
    (*jenv)->GetByteArrayRegion(jenv, bytes, 0, n, (jbyte *)out);
    out[n] = 0;
    if (what && memchr(out, 0, (size_t)n)) {
        free(out);
        char message[128];
        snprintf(message, sizeof message, "%s holds a NUL character (U+0000), which would end it early in C", what);
        SWIG_JavaThrowException(jenv, SWIG_JavaIllegalArgumentException, message);
        return NULL;
    }
    return out;
}

static jbyteArray reset_java_bytes(JNIEnv *jenv, const char *data, size_t n) {
    jbyteArray out = (*jenv)->NewByteArray(jenv, (jsize)n);
    if (out && n) (*jenv)->SetByteArrayRegion(jenv, out, 0, (jsize)n, (const jbyte *)data);
    return out;
}

static void reset_java_free_messages(reset_chat_message *messages, size_t n) {
    if (!messages) return;
    for (size_t i = 0; i < n; i++) {
        free((char *)messages[i].role);
        free((char *)messages[i].content);
    }
    free(messages);
}

/* reset_chat_options.tool_calls_json as set_tool_calls (below) makes it
 * points one entry into its allocation, whose first entry holds the count of
 * messages (the struct keeps none): the entries' bound for set_tool_calls and
 * the destructor. */
static const char **reset_java_tool_calls_base(const reset_chat_options *o) {
    return o->tool_calls_json ? (const char **)o->tool_calls_json - 1 : NULL;
}
static size_t reset_java_tool_calls_count(const reset_chat_options *o) {
    return o->tool_calls_json ? (size_t)(uintptr_t)reset_java_tool_calls_base(o)[0] : 0;
}

/* A conversation from Java: byte[][] {role0, content0, role1, content1, ...}.
 * Copied into C memory because reset_chat_message only points at its text.
 * Returns 0 on success, -1 with a Java exception pending. */
static int reset_java_messages(JNIEnv *jenv, jobjectArray array, reset_chat_message **out, size_t *n_out) {
    *out = NULL;
    *n_out = 0;
    if (!array) return 0;
    jsize n = (*jenv)->GetArrayLength(jenv, array);
    if (n % 2) {
        SWIG_JavaThrowException(jenv, SWIG_JavaIllegalArgumentException, "messages come as role/content pairs");
        return -1;
    }
    size_t count = (size_t)n / 2;
    reset_chat_message *messages = (reset_chat_message *)calloc(count ? count : 1, sizeof *messages);
    if (!messages) {
        SWIG_JavaThrowException(jenv, SWIG_JavaOutOfMemoryError, "no memory for chat messages");
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        jbyteArray role = (jbyteArray)(*jenv)->GetObjectArrayElement(jenv, array, (jsize)(2 * i));
        jbyteArray content = (jbyteArray)(*jenv)->GetObjectArrayElement(jenv, array, (jsize)(2 * i + 1));
        if (!role || !content) {
            SWIG_JavaThrowException(jenv, SWIG_JavaNullPointerException, "a chat message's role or content is null");
            reset_java_free_messages(messages, count);
            return -1;
        }
        /* The role is read up to its NUL, the content by its length.  No JNI
         * call but cleanup may follow a pending exception. */
        messages[i].role = reset_java_cstring(jenv, role, "a chat message's role");
        if (messages[i].role) messages[i].content = reset_java_cstring(jenv, content, NULL);
        if (messages[i].content) messages[i].content_len = (size_t)(*jenv)->GetArrayLength(jenv, content);
        (*jenv)->DeleteLocalRef(jenv, role);
        (*jenv)->DeleteLocalRef(jenv, content);
        if (!messages[i].role || !messages[i].content) {
            reset_java_free_messages(messages, count);
            return -1;
        }
    }
    *out = messages;
    *n_out = count;
    return 0;
}
%}

%include <stdint.i>
%include <typemaps.i>
%include <carrays.i>
/* Enums become int constants (the public API has its own enums), inlined as
 * Java literals rather than read through JNI. */
%include <enumtypeunsafe.swg>
%javaconst(1);
%typemap(javaclassmodifiers) enum SWIGTYPE "final class"

/* Every generated class stays package-private: only the hand-written API is public. */
%pragma(java) moduleclassmodifiers="final class"
%pragma(java) jniclassclassmodifiers="final class"
%typemap(javaclassmodifiers) SWIGTYPE "final class"
%typemap(javafinalize) SWIGTYPE ""
/* The JNI glue is loaded (and libreset before it) the first time any native method is used. */
%pragma(java) jniclasscode=%{
  static {
    Loader.load();
  }
%}

/* ---------------------------------------------------------------- numbers */

/* Seeds and byte counts: a Java long holds the same 64 bits. */
%apply int64_t { uint64_t };
/* size: the bytes reset_save_sequence_to_memory (0.9) needs. */
%apply unsigned long *OUTPUT { size_t *n_ids, size_t *text_len, size_t *out_length, size_t *size };
%apply int *OUTPUT { int32_t *out_id, int32_t *out_token, int32_t *n_active };

/* ---------------------------------------------------------------- statuses */

%typemap(out, throws="ResetException") reset_status %{ $result = (jint)$1; %}
/* "ret" runs after the out-parameters are written back and every argument is
 * released, so a BUFFER_TOO_SMALL exception still leaves the size needed in
 * its long[] and nothing pinned. */
%typemap(ret) reset_status %{
  if ($1 != RESET_OK) reset_java_throw(jenv, $1);
%}

/* ---------------------------------------------------------------- handles */

%define RESET_HANDLE(TYPE)
%typemap(jni) TYPE *, const TYPE * "jlong"
%typemap(jtype) TYPE *, const TYPE * "long"
%typemap(jstype) TYPE *, const TYPE * "long"
%typemap(javain) TYPE *, const TYPE * "$javainput"
%typemap(javaout) TYPE *, const TYPE * { return $jnicall; }
%typemap(in) TYPE *, const TYPE * %{ $1 = ($1_ltype)(intptr_t)$input; %}
%typemap(out) TYPE *, const TYPE * %{ $result = (jlong)(intptr_t)$1; %}
%typemap(jni) TYPE ** "jlongArray"
%typemap(jtype) TYPE ** "long[]"
%typemap(jstype) TYPE ** "long[]"
%typemap(javain) TYPE ** "$javainput"
%typemap(in) TYPE ** (TYPE *handle = NULL) %{
  if (!$input || (*jenv)->GetArrayLength(jenv, $input) < 1) {
    SWIG_JavaThrowException(jenv, SWIG_JavaIllegalArgumentException, "an out-handle needs a long[1]");
    return $null;
  }
  $1 = &handle;
%}
%typemap(argout) TYPE ** %{
  {
    jlong value = (jlong)(intptr_t)handle$argnum;
    (*jenv)->SetLongArrayRegion(jenv, $input, 0, 1, &value);
  }
%}
%enddef

RESET_HANDLE(reset_model)
RESET_HANDLE(reset_session)
RESET_HANDLE(reset_tokenizer)
RESET_HANDLE(reset_policy)
/* A logit bias (0.6; the policy's, 0.7) built in C memory by reset_java_logit_bias_new below. */
RESET_HANDLE(reset_logit_bias)

/* ---------------------------------------------------------------- text */

/* NUL-terminated input (paths, a role, a preset): byte[] without the NUL;
 * one holding a NUL is refused (IllegalArgumentException naming it). */
%typemap(jni) const char * "jbyteArray"
%typemap(jtype) const char * "byte[]"
%typemap(jstype) const char * "byte[]"
%typemap(javain) const char * "$javainput"
%typemap(javaout) const char * { return $jnicall; }
%typemap(in) const char * %{
  $1 = reset_java_cstring(jenv, $input, "$1_name");
  if ((*jenv)->ExceptionCheck(jenv)) return $null;
%}
%typemap(freearg) const char * %{ free((char *)$1); %}
/* Static strings of the library (version, status name, last error). */
%typemap(out) const char * %{ $result = reset_java_bytes(jenv, $1, strlen($1)); %}

/* Text with its byte length, read by the call. */
%apply (const char *STRING, size_t LENGTH) { (const char *text, size_t text_len) };
/* A caller's buffer the call writes into (the snprintf idiom). */
%apply (char *STRING, size_t LENGTH) { (char *buffer, size_t capacity) };

/* A sequence's state in memory (0.9), as byte[].  reset_save_sequence_to_memory
 * writes into C memory of the array's length (a null array asks the size),
 * copied into the array only when the call succeeds: nothing is copied in
 * first, and no array is pinned while the library reads the KV cache.
 * reset_load_sequence_from_memory reads the array's elements, released
 * without copying back.  An empty array crosses as a pointer to nothing
 * read, never as the NULL data the library refuses (INVALID_ARGUMENT): zero
 * bytes are judged as any state too short to be one (FORMAT).  A null array
 * is NULL data (Session refuses it before). */
%typemap(jni) (void *buffer, size_t capacity), (const void *data, size_t size) "jbyteArray"
%typemap(jtype) (void *buffer, size_t capacity), (const void *data, size_t size) "byte[]"
%typemap(jstype) (void *buffer, size_t capacity), (const void *data, size_t size) "byte[]"
%typemap(javain) (void *buffer, size_t capacity), (const void *data, size_t size) "$javainput"
%typemap(in) (void *buffer, size_t capacity) %{
  $1 = NULL;
  $2 = 0;
  if ($input) {
    $2 = (size_t)(*jenv)->GetArrayLength(jenv, $input);
    $1 = calloc($2 ? $2 : 1, 1); /* zeroed: bytes past the state never carry old heap contents into Java */
    if (!$1) {
      SWIG_JavaThrowException(jenv, SWIG_JavaOutOfMemoryError, "no memory for a sequence's state");
      return $null;
    }
  }
%}
/* On success the state fits the array (Session sizes it as the library asked). */
%typemap(argout) (void *buffer, size_t capacity) %{
  if ($1 && result == RESET_OK && $2) (*jenv)->SetByteArrayRegion(jenv, $input, 0, (jsize)$2, (const jbyte *)$1);
%}
%typemap(freearg) (void *buffer, size_t capacity) %{ free($1); %}
%typemap(in) (const void *data, size_t size) %{
  $1 = NULL;
  $2 = 0;
  if ($input) {
    $2 = (size_t)(*jenv)->GetArrayLength(jenv, $input);
    $1 = $2 ? ($1_ltype)(*jenv)->GetByteArrayElements(jenv, $input, NULL) : ($1_ltype)"";
    if (!$1) return $null;
  }
%}
%typemap(freearg) (const void *data, size_t size) %{
  if ($1 && $2) (*jenv)->ReleaseByteArrayElements(jenv, $input, (jbyte *)$1, JNI_ABORT);
%}

/* Fixed char arrays of the info structs: read-only, up to their NUL. */
%typemap(jni) char [ANY] "jbyteArray"
%typemap(jtype) char [ANY] "byte[]"
%typemap(jstype) char [ANY] "byte[]"
%typemap(javaout) char [ANY] { return $jnicall; }
%typemap(out) char [ANY] %{
  {
    const char *end = (const char *)memchr($1, 0, $1_dim0);
    $result = reset_java_bytes(jenv, $1, end ? (size_t)(end - $1) : $1_dim0);
  }
%}

/* Chat messages: byte[][] of role/content pairs. */
%typemap(jni) (const reset_chat_message *messages, size_t n_messages) "jobjectArray"
%typemap(jtype) (const reset_chat_message *messages, size_t n_messages) "byte[][]"
%typemap(jstype) (const reset_chat_message *messages, size_t n_messages) "byte[][]"
%typemap(javain) (const reset_chat_message *messages, size_t n_messages) "$javainput"
%typemap(in) (const reset_chat_message *messages, size_t n_messages)
    (reset_chat_message *copy = NULL, size_t count = 0) %{
  if (reset_java_messages(jenv, $input, &copy, &count) != 0) return $null;
  $1 = copy;
  $2 = count;
%}
%typemap(freearg) (const reset_chat_message *messages, size_t n_messages) %{
  reset_java_free_messages((reset_chat_message *)$1, $2);
%}

/* ---------------------------------------------------------------- arrays */

/* A Java primitive array with its length: read by the call (IN, released
 * without copying back) or written by it (OUT, copied back).  Get*Elements
 * copies rather than pins for as long as the call runs, so a long prefill
 * never holds the garbage collector. */
%define RESET_ARRAY(CTYPE, JNITYPE, JNIARRAY, JTYPE, NAME)
%typemap(jni) (const CTYPE *IN, size_t LENGTH), (CTYPE *OUT, size_t LENGTH) "JNIARRAY"
%typemap(jtype) (const CTYPE *IN, size_t LENGTH), (CTYPE *OUT, size_t LENGTH) "JTYPE[]"
%typemap(jstype) (const CTYPE *IN, size_t LENGTH), (CTYPE *OUT, size_t LENGTH) "JTYPE[]"
%typemap(javain) (const CTYPE *IN, size_t LENGTH), (CTYPE *OUT, size_t LENGTH) "$javainput"
%typemap(in) (const CTYPE *IN, size_t LENGTH), (CTYPE *OUT, size_t LENGTH) %{
  $1 = NULL;
  $2 = 0;
  if ($input) {
    $2 = (size_t)(*jenv)->GetArrayLength(jenv, $input);
    $1 = ($1_ltype)(*jenv)->Get##NAME##ArrayElements(jenv, $input, NULL);
    if (!$1) return $null;
  }
%}
%typemap(freearg) (const CTYPE *IN, size_t LENGTH) %{
  if ($1) (*jenv)->Release##NAME##ArrayElements(jenv, $input, (JNITYPE *)$1, JNI_ABORT);
%}
%typemap(freearg) (CTYPE *OUT, size_t LENGTH) %{
  if ($1) (*jenv)->Release##NAME##ArrayElements(jenv, $input, (JNITYPE *)$1, 0);
%}
%enddef

RESET_ARRAY(int32_t, jint, jintArray, int, Int)
RESET_ARRAY(float, jfloat, jfloatArray, float, Float)

%apply (const int32_t *IN, size_t LENGTH) { (const int32_t *ids, size_t n_ids) };
/* Ids a call writes (the snprintf idiom): reset_tokenize's, reset_tokenizer_step_delimiters' and
 * reset_session_tokens' (0.6); a null array asks for the size. */
%apply (int32_t *OUT, size_t LENGTH) { (int32_t *ids, size_t capacity) };
%apply (const float *IN, size_t LENGTH) { (const float *logits, size_t n_vocab) };
%apply (float *OUT, size_t LENGTH) { (float *out, size_t capacity) };
/* reset_step's copy_top_logprobs (below): a step's ids and logprobs. */
%apply (int32_t *OUT, size_t LENGTH) { (int32_t *tokens, size_t n_tokens) };
%apply (float *OUT, size_t LENGTH) { (float *logprobs, size_t n_logprobs) };
/* reset_java_logit_bias_new (below): a logit bias's ids and values (0.6). */
%apply (const int32_t *IN, size_t LENGTH) { (const int32_t *bias_tokens, size_t n_bias_tokens) };
%apply (const float *IN, size_t LENGTH) { (const float *biases, size_t n_biases) };

/* ---------------------------------------------------------------- structs */

/* Callbacks are not offered to Java; calibration is the C API's and the CLI's. */
%ignore reset_model_options::progress;
%ignore reset_model_options::progress_user_data;
%ignore reset_calibration_options;
%ignore reset_calibration_options_init;
%ignore reset_calibration_result;
%ignore reset_calibration_result_init;
%ignore reset_entropy_percentiles;
%ignore reset_calibrate;
/* The exported reset_X_init_sized (0.3) are not offered to Java: this wrapper is C compiled against
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
%ignore reset_stop_options::strings;
%ignore reset_stop_options::string_count;
%ignore reset_stop_options::ids;
%ignore reset_stop_options::id_count;
%ignore reset_step::text;
/* Read through reset_java_held_text below (0.5): the text it points at is the session's. */
%ignore reset_session_held_text;
/* Read through reset_step's copy_top_logprobs below: Java never holds a reset_token_logprob. */
%ignore reset_step::top_logprobs;
%ignore reset_token_logprob;
%ignore reset_model_info::eos_ids;
%ignore reset_tokenizer_info::eos_ids;
%ignore reset_chat_message;
/* Copies the struct owns (0.11), set by set_tools and set_tool_calls below. */
%ignore reset_chat_options::tools_json;
%ignore reset_chat_options::tool_calls_json;
/* Built by reset_java_logit_bias_new below (0.6): Java never holds a reset_logit_bias. */
%ignore reset_logit_bias;
%immutable reset_model_info::architecture;
%immutable reset_tokenizer_info::kind;
%immutable reset_step::text_len;
%immutable reset_step::top_logprob_count;

/* The header's #define constants would land in a public constants interface
 * (SWIG has no switch for its modifiers) and some, like 1u, are not Java
 * literals: the ones Java needs are an enum instead, read from C at class
 * load so that they are the header's values. */
%ignore RESET_VERSION_MAJOR;
%ignore RESET_VERSION_MINOR;
%ignore RESET_VERSION_PATCH;
%ignore RESET_VERSION_STRING;
%ignore RESET_VERSION_NUMBER;
%ignore RESET_TOKENIZE_PARSE_SPECIAL;
%ignore RESET_TOKENIZE_ADD_BOS;
%ignore RESET_DETOKENIZE_SKIP_SPECIAL;

/* The header's export attribute (__attribute__ on ELF) is not C that SWIG parses. */
#define __attribute__(x)
%include "reset.h"

%javaconst(0);
%inline %{
enum reset_java_constants {
    RESET_JAVA_ABI_MAJOR = RESET_VERSION_MAJOR,
    RESET_JAVA_TOKENIZE_PARSE_SPECIAL = RESET_TOKENIZE_PARSE_SPECIAL,
    RESET_JAVA_TOKENIZE_ADD_BOS = RESET_TOKENIZE_ADD_BOS,
    RESET_JAVA_DETOKENIZE_SKIP_SPECIAL = RESET_DETOKENIZE_SKIP_SPECIAL
};
%}
%javaconst(1);

/* reset_policy_params owns a copy of its preset name (Java has no C string
 * to lend it), freed with the struct.  reset_policy_params_init sets preset
 * to NULL, so it must come before set_preset. */
%extend reset_policy_params {
  void set_preset(const char *preset) {
    free((char *)$self->preset);
    $self->preset = NULL;
    if (preset) {
      size_t n = strlen(preset) + 1;
      char *copy = (char *)malloc(n);
      if (copy) $self->preset = (const char *)memcpy(copy, preset, n);
    }
  }
  ~reset_policy_params() {
    free((char *)$self->preset);
    free($self);
  }
}

/* reset_policy_options owns copies of its delimiter ids, freed with it
 * (reset_policy_create copies them again, so they live only until then). */
%extend reset_policy_options {
  void set_newline_ids(const int32_t *ids, size_t n_ids) {
    free((int32_t *)$self->newline_ids);
    $self->newline_ids = n_ids ? (int32_t *)malloc(n_ids * sizeof *ids) : NULL;
    if ($self->newline_ids) memcpy((int32_t *)$self->newline_ids, ids, n_ids * sizeof *ids);
    $self->n_newline_ids = $self->newline_ids ? n_ids : 0;
  }
  void set_double_newline_ids(const int32_t *ids, size_t n_ids) {
    free((int32_t *)$self->double_newline_ids);
    $self->double_newline_ids = n_ids ? (int32_t *)malloc(n_ids * sizeof *ids) : NULL;
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
 * with it (reset_set_stop copies them again, so they live only until then).
 * add_string appends one string, NUL-terminated (one holding a NUL is
 * refused with an IllegalArgumentException naming stop_string, as every
 * NUL-terminated input is); both return 0, or -1 when memory runs out (what
 * was copied before is still freed with the struct).  reset_stop_options_init
 * sets the arrays to NULL, so it must come first. */
%extend reset_stop_options {
  int add_string(const char *stop_string) {
    const char **strings = (const char **)realloc((void *)$self->strings,
                                                  ($self->string_count + 1) * sizeof *strings);
    if (!strings) return -1;
    $self->strings = strings;
    char *copy = NULL;
    if (stop_string) { /* a NULL entry is kept for the library to refuse */
      size_t n = strlen(stop_string) + 1;
      copy = (char *)malloc(n);
      if (!copy) return -1;
      memcpy(copy, stop_string, n);
    }
    strings[$self->string_count++] = copy;
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

/* reset_chat_options (0.11) owns copies of its tools and of each message's
 * tool calls, freed with it.  set_tool_calls(n_messages, i, json) sets
 * message i's entry, making the array of n_messages entries (NULL each) on
 * first use, its count kept in front of it (reset_java_tool_calls_count,
 * above: each call checks i against it at once, where a scan for an end
 * marker made n calls quadratic).  Both return 0, or -1 when
 * memory runs out or i is not below the array's length (what was copied is
 * still freed with the struct).  A JSON text holding a NUL is refused with an
 * IllegalArgumentException naming it, as every NUL-terminated input is. */
%extend reset_chat_options {
  int set_tools(const char *tools_json) {
    free((char *)$self->tools_json);
    $self->tools_json = NULL;
    if (!tools_json) return 0;
    size_t n = strlen(tools_json) + 1;
    char *copy = (char *)malloc(n);
    if (!copy) return -1;
    $self->tools_json = (const char *)memcpy(copy, tools_json, n);
    return 0;
  }
  int set_tool_calls(size_t n_messages, size_t i, const char *tool_calls_json) {
    if (!$self->tool_calls_json) {
      const char **base = (const char **)calloc(n_messages + 1, sizeof *base);
      if (!base) return -1;
      base[0] = (const char *)(uintptr_t)n_messages;
      $self->tool_calls_json = base + 1;
    }
    if (i >= reset_java_tool_calls_count($self)) return -1;
    const char **calls = (const char **)$self->tool_calls_json;
    free((char *)calls[i]);
    calls[i] = NULL;
    if (!tool_calls_json) return 0;
    size_t n = strlen(tool_calls_json) + 1;
    char *copy = (char *)malloc(n);
    if (!copy) return -1;
    calls[i] = (const char *)memcpy(copy, tool_calls_json, n);
    return 0;
  }
  ~reset_chat_options() {
    free((char *)$self->tools_json);
    for (size_t k = 0; k < reset_java_tool_calls_count($self); k++) free((char *)$self->tool_calls_json[k]);
    free((void *)reset_java_tool_calls_base($self));
    free($self);
  }
}

/* A step's text and top logprobs (0.4) belong to the session until its next
 * call: Java copies the text_len bytes of its text, and the ids and logprobs
 * of its top_logprob_count entries into two arrays of that length, right
 * after the step. */
%extend reset_step {
  void copy_text(char *buffer, size_t capacity) {
    if ($self->text && capacity >= $self->text_len) memcpy(buffer, $self->text, $self->text_len);
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

/* reset_session_held_text (0.5) hands out a pointer into the session, valid
 * until its next call and not NUL-terminated: Java gets the bytes instead,
 * copied into buffer (a byte[]) in the same call.  Its status is the
 * library's (an error throws ResetException with the library's message);
 * text_len[0] is the held text's byte length even when buffer is shorter,
 * and then nothing is copied (Session asks again with a buffer that long:
 * the held text only changes with a step, a prefill or a reset). */
%inline %{
reset_status reset_java_held_text(const reset_session *session, int32_t sequence, char *buffer, size_t capacity,
                                  size_t *text_len) {
    const char *text = NULL;
    size_t n = 0;
    reset_status status = reset_session_held_text(session, sequence, &text, &n);
    *text_len = n;
    if (status == RESET_OK && n && n <= capacity) memcpy(buffer, text, n);
    return status;
}
%}

/* The entries of reset_set_logit_bias (0.6) and reset_policy_set_logit_bias
 * (0.7), in C memory: entry i is {bias_tokens[i], biases[i]}, for i below
 * the shorter array's length (LogitBias passes two of one length).  The
 * library copies them, so reset_java_logit_bias_free frees them right after
 * the call.  0 (NULL) when memory runs out. */
%inline %{
reset_logit_bias *reset_java_logit_bias_new(const int32_t *bias_tokens, size_t n_bias_tokens, const float *biases,
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
void reset_java_logit_bias_free(reset_logit_bias *entries) { free(entries); }
%}

/* reset_decode_step fills an array of steps, one per sequence. */
%array_functions(reset_step, reset_step_array)
