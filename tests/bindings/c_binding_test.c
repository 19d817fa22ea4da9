/*
 * The C side of the cross-language binding tests (tests/bindings/).
 *
 *   c_binding_test ids   SOURCE_DIR OUT_DIR   greedy continuation of qwen3-tied, checked against the
 *                                             fixture's greedy_bf16 and written for the other languages
 *   c_binding_test churn SOURCE_DIR N         N create/free cycles of every handle kind (run under
 *                                             valgrind by ctest, so a leak fails the test)
 *   c_binding_test cancel SOURCE_DIR          cancellation from another thread, and the missing-model status
 *
 * OUT_DIR/prompt.txt and OUT_DIR/expected.txt hold space-separated ids: every
 * binding prefills the first and must decode exactly the second.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reset.h"

#define FAIL(...) do { fprintf(stderr, "FAIL: " __VA_ARGS__); fprintf(stderr, "\n"); exit(1); } while (0)
#define CHECK(call) do { reset_status s_ = (call); \
    if (s_ != RESET_OK) FAIL("%s -> %s: %s", #call, reset_status_name(s_), reset_last_error()); } while (0)

static char model_dir[4096];

/* Read a whole file; the caller frees it. */
static unsigned char *slurp(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) FAIL("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc((size_t)n);
    if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) FAIL("cannot read %s", path);
    fclose(f);
    *size = (size_t)n;
    return data;
}

/* An I32 tensor of a safetensors file: the header is JSON, but the fixture's
 * entries have the fixed form "name":{"dtype":"I32","shape":[n],"data_offsets":[a,b]},
 * so a key search is enough here and keeps the test free of a JSON parser. */
static size_t read_i32_tensor(const unsigned char *file, size_t size, const char *name, int32_t *out,
                              size_t capacity) {
    uint64_t header_len = 0;
    memcpy(&header_len, file, 8); /* little-endian, as safetensors is and the test machines are */
    char *header = malloc(header_len + 1);
    memcpy(header, file + 8, header_len);
    header[header_len] = 0;
    char key[128];
    snprintf(key, sizeof key, "\"%s\":{", name);
    const char *entry = strstr(header, key);
    if (!entry) FAIL("tensor %s not in the fixture", name);
    const char *offsets = strstr(entry, "\"data_offsets\":[");
    if (!offsets || strncmp(strstr(entry, "\"dtype\":\"") + 9, "I32", 3) != 0) FAIL("tensor %s is not I32", name);
    unsigned long long begin = 0, end = 0;
    if (sscanf(offsets, "\"data_offsets\":[%llu,%llu]", &begin, &end) != 2) FAIL("bad offsets of %s", name);
    free(header);
    size_t n = (size_t)(end - begin) / 4;
    if (n > capacity || 8 + header_len + end > size) FAIL("tensor %s does not fit", name);
    memcpy(out, file + 8 + header_len + begin, n * 4);
    return n;
}

static reset_model *load_model(void) {
    reset_model_options options;
    reset_model_options_init(&options);
    options.weights = RESET_WEIGHTS_BF16;
    options.backend = RESET_BACKEND_CPU;
    reset_model *model = NULL;
    CHECK(reset_model_load(model_dir, &options, &model));
    return model;
}

static void write_ids(const char *path, const int32_t *ids, size_t n) {
    FILE *f = fopen(path, "w");
    if (!f) FAIL("cannot write %s", path);
    for (size_t i = 0; i < n; i++) fprintf(f, i ? " %d" : "%d", ids[i]);
    fprintf(f, "\n");
    fclose(f);
}

static int run_ids(const char *out_dir) {
    char path[4200];
    snprintf(path, sizeof path, "%s/reference.safetensors", model_dir);
    size_t size = 0;
    unsigned char *file = slurp(path, &size);
    int32_t prompt[256], greedy[256], got[256];
    size_t n_prompt = read_i32_tensor(file, size, "input_ids", prompt, 256);
    size_t n_greedy = read_i32_tensor(file, size, "greedy_bf16", greedy, 256);
    free(file);

    reset_model *model = load_model();
    reset_session *session = NULL;
    CHECK(reset_session_create(model, NULL, &session));
    /* generation_config.json asks for sampling: greedy must be set explicitly. */
    reset_policy_params params;
    reset_policy_params_init(&params);
    params.kind = RESET_POLICY_GREEDY;
    CHECK(reset_set_policy(session, &params));
    CHECK(reset_prefill(session, prompt, n_prompt));
    size_t n_got = 0;
    while (n_got < n_greedy) {
        reset_step step;
        reset_step_init(&step, 1);
        CHECK(reset_decode_step(session, &step, 1, NULL));
        if (step.token >= 0) got[n_got++] = step.token;
        if (step.end_of_generation) break; /* an EOS ends the continuation, and is part of it */
    }
    reset_session_free(session);
    reset_model_free(model);
    for (size_t i = 0; i < n_got; i++)
        if (got[i] != greedy[i]) FAIL("token %zu: C decoded %d, the fixture's greedy_bf16 has %d", i, got[i], greedy[i]);
    snprintf(path, sizeof path, "%s/prompt.txt", out_dir);
    write_ids(path, prompt, n_prompt);
    snprintf(path, sizeof path, "%s/expected.txt", out_dir);
    write_ids(path, got, n_got);
    printf("C: %zu greedy tokens match the fixture\n", n_got);
    return 0;
}

static int run_churn(int cycles) {
    reset_model *shared = load_model();
    int32_t prompt[3] = {1, 2, 3};
    for (int i = 0; i < cycles; i++) {
        reset_session *session = NULL;
        CHECK(reset_session_create(shared, NULL, &session));
        if (i % 100 == 0) CHECK(reset_prefill(session, prompt, 3));
        reset_session_free(session);

        reset_policy_params params;
        reset_policy_params_init(&params);
        params.kind = RESET_POLICY_RESET;
        params.t_low = 0.3f;
        params.tau0 = 0.6f;
        reset_policy *policy = NULL;
        CHECK(reset_policy_create(&params, NULL, &policy));
        reset_policy_free(policy);

        /* A failing load allocates its message and partial state: it must free them too. */
        reset_model *missing = NULL;
        if (reset_model_load("/nonexistent/model", NULL, &missing) != RESET_ERR_IO) FAIL("missing model");
        if (i % 100 == 0) { /* loads and prefills are slow under valgrind: every 100th cycle still shows a leak */
            reset_model *model = load_model();
            reset_model_free(model);
        }
    }
    reset_model_free(shared);
    printf("C: %d create/free cycles\n", cycles);
    return 0;
}

/* reset_session_reset drops a request no call has consumed, so the busy
 * loop's refill must not run between the cancel and the call that takes it:
 * both hold the lock, and the loop refills only while no cancel was sent. */
struct canceller {
    reset_session *session;
    pthread_mutex_t lock;
    int sent;
};

static void *cancel_later(void *arg) {
    struct canceller *canceller = arg;
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
    pthread_mutex_lock(&canceller->lock);
    reset_session_cancel(canceller->session);
    canceller->sent = 1;
    pthread_mutex_unlock(&canceller->lock);
    return NULL;
}

static int run_cancel(void) {
    reset_model *missing = NULL;
    reset_status status = reset_model_load("/nonexistent/model", NULL, &missing);
    if (status != RESET_ERR_IO || missing != NULL) FAIL("missing model gave %s", reset_status_name(status));

    reset_model *model = load_model();
    reset_session *session = NULL;
    reset_session_options options;
    reset_session_options_init(&options);
    options.max_context = 512;
    CHECK(reset_session_create(model, &options, &session));
    struct canceller canceller = {session, PTHREAD_MUTEX_INITIALIZER, 0};
    pthread_t thread;
    pthread_create(&thread, NULL, cancel_later, &canceller);
    int32_t ids[10] = {3, 3, 3, 3, 3, 3, 3, 3, 3, 3};
    time_t deadline = time(NULL) + 30;
    status = RESET_OK;
    /* Keep the session busy until the cancel lands. */
    while (status == RESET_OK && time(NULL) < deadline) {
        if (reset_session_length(session, 0) > 500) {
            pthread_mutex_lock(&canceller.lock);
            int refill = !canceller.sent;
            if (refill) CHECK(reset_session_reset(session));
            pthread_mutex_unlock(&canceller.lock);
            if (!refill) { status = reset_prefill(session, ids, 1); continue; } /* takes the cancel */
        }
        status = reset_prefill(session, ids, 10);
    }
    pthread_join(thread, NULL);
    if (status != RESET_ERR_CANCELLED) FAIL("cancel gave %s", reset_status_name(status));
    reset_session_free(session);
    reset_model_free(model);
    printf("C: missing model is RESET_ERR_IO, cancel from a thread is RESET_ERR_CANCELLED\n");
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) FAIL("usage: %s ids|churn|cancel SOURCE_DIR [OUT_DIR|N]", argv[0]);
    snprintf(model_dir, sizeof model_dir, "%s/tests/fixtures/models/qwen3-tied", argv[2]);
    if (strcmp(argv[1], "ids") == 0 && argc == 4) return run_ids(argv[3]);
    if (strcmp(argv[1], "churn") == 0 && argc == 4) return run_churn(atoi(argv[3]));
    if (strcmp(argv[1], "cancel") == 0) return run_cancel();
    FAIL("unknown mode %s", argv[1]);
}
