/*
 * A program built against the 0.2.0 header (tests/abi/reset-0.2.0/reset.h, the
 * header as commit 5f6d335 released it) running on this library: CHANGELOG.md
 * promises that a program built against 0.N runs on any 0.M with M >= N.
 *
 *   older_header SOURCE_DIR
 *
 * Every struct sits in a buffer with guard bytes right after it, as the
 * program's own stack or heap neighbours would: the library must never write
 * past the struct the program was compiled with.  0.3 appended logprob to
 * reset_step and reset_decision, so a library whose reset_step_init or
 * reset_decision_init filled its own, larger struct (as 0.2's did for 0.1
 * programs and reset_policy_params) overwrites the guard: this test fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reset.h"

#if RESET_VERSION_MINOR != 2
#error "older_header.c must be compiled against tests/abi/reset-0.2.0/reset.h"
#endif

#define FAIL(...) do { fprintf(stderr, "FAIL: " __VA_ARGS__); fprintf(stderr, "\n"); exit(1); } while (0)
#define CHECK(call) do { reset_status s_ = (call); \
    if (s_ != RESET_OK) FAIL("%s -> %s: %s", #call, reset_status_name(s_), reset_last_error()); } while (0)

enum { kGuard = 64 };
static const unsigned char kGuardByte = 0xA5;

/* `size` bytes for the struct(s), then kGuard bytes of kGuardByte. */
static unsigned char *guarded(size_t size) {
    unsigned char *p = malloc(size + kGuard);
    if (!p) FAIL("out of memory");
    memset(p, 0x5A, size);
    memset(p + size, kGuardByte, kGuard);
    return p;
}

static void check_guard(const unsigned char *p, size_t size, const char *what) {
    for (size_t i = 0; i < kGuard; ++i)
        if (p[size + i] != kGuardByte) FAIL("%s wrote byte %zu past the caller's %zu-byte struct", what, i, size);
}

/* Each _init of the 0.2 header on a guarded struct: struct_size is the 0.2 size, nothing past it changes. */
#define INIT_ONE(type, init)                                                                       \
    do {                                                                                           \
        unsigned char *p = guarded(sizeof(type));                                                  \
        init((type *)p);                                                                           \
        check_guard(p, sizeof(type), #init);                                                       \
        if (((type *)p)->struct_size != sizeof(type))                                              \
            FAIL("%s set struct_size %u, the program's struct has %zu", #init,                     \
                 (unsigned)((type *)p)->struct_size, sizeof(type));                                \
        free(p);                                                                                   \
    } while (0)

int main(int argc, char **argv) {
    if (argc != 2) FAIL("usage: older_header SOURCE_DIR");
    if (reset_version() < RESET_VERSION_NUMBER) FAIL("the library is older than the header");
    INIT_ONE(reset_model_options, reset_model_options_init);
    INIT_ONE(reset_model_info, reset_model_info_init);
    INIT_ONE(reset_policy_params, reset_policy_params_init);
    INIT_ONE(reset_session_options, reset_session_options_init);
    INIT_ONE(reset_tokenizer_info, reset_tokenizer_info_init);
    INIT_ONE(reset_chat_options, reset_chat_options_init);
    INIT_ONE(reset_policy_options, reset_policy_options_init);
    INIT_ONE(reset_decision, reset_decision_init);
    INIT_ONE(reset_calibration_options, reset_calibration_options_init);
    INIT_ONE(reset_calibration_result, reset_calibration_result_init);

    /* An array of steps, initialised and filled by a two-sequence decode step. */
    enum { kSequences = 2 };
    const size_t steps_size = kSequences * sizeof(reset_step);
    unsigned char *steps_memory = guarded(steps_size);
    reset_step *steps = (reset_step *)steps_memory;
    reset_step_init(steps, kSequences);
    check_guard(steps_memory, steps_size, "reset_step_init");
    for (int i = 0; i < kSequences; ++i)
        if (steps[i].struct_size != sizeof(reset_step) || steps[i].token != -1)
            FAIL("reset_step_init: entry %d has struct_size %u, token %d", i, (unsigned)steps[i].struct_size,
                 steps[i].token);

    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fixtures/models/qwen3-tied", argv[1]);
    reset_model_options mo;
    reset_model_options_init(&mo);
    mo.backend = RESET_BACKEND_CPU;
    mo.threads = 1;
    reset_model *model = NULL;
    CHECK(reset_model_load(path, &mo, &model));
    reset_session_options so;
    reset_session_options_init(&so);
    so.sequences = kSequences;
    reset_session *session = NULL;
    CHECK(reset_session_create(model, &so, &session));
    reset_policy_params pp;
    reset_policy_params_init(&pp);
    pp.kind = RESET_POLICY_FIXED;
    pp.temperature = 1.0f;
    pp.seed = 7;
    pp.presence_penalty = 0.5f; /* a 0.2 field */
    CHECK(reset_set_policy(session, &pp));
    const int32_t prompt[] = {1, 2, 3, 4};
    CHECK(reset_prefill(session, prompt, 4));
    for (int t = 0; t < 4; ++t) {
        int32_t active = 0;
        CHECK(reset_decode_step(session, steps, kSequences, &active));
        check_guard(steps_memory, steps_size, "reset_decode_step");
        for (int i = 0; i < kSequences; ++i)
            if (steps[i].struct_size != sizeof(reset_step) || steps[i].sequence != i)
                FAIL("reset_decode_step: entry %d has struct_size %u, sequence %d", i,
                     (unsigned)steps[i].struct_size, steps[i].sequence);
        if (active == 0) break;
    }
    char line[1024];
    size_t length = 0;
    CHECK(reset_step_to_json(&steps[0], line, sizeof line, &length));
    if (strstr(line, "\"logprob\"")) FAIL("a 0.2 step's trace has a logprob it cannot hold: %s", line);

    /* The standalone policy with a 0.2 decision. */
    unsigned char *decision_memory = guarded(sizeof(reset_decision));
    reset_decision *decision = (reset_decision *)decision_memory;
    reset_decision_init(decision);
    reset_policy *policy = NULL;
    CHECK(reset_policy_create(&pp, NULL, &policy));
    float logits[8] = {0.5f, 1.0f, -2.0f, 0.25f, 3.0f, 0.0f, -1.0f, 2.0f};
    int32_t token = -1;
    CHECK(reset_policy_sample(policy, logits, 8, &token, decision));
    check_guard(decision_memory, sizeof(reset_decision), "reset_policy_sample");
    if (decision->entropy <= 0.0f || token < 0 || token >= 8) FAIL("reset_policy_sample: token %d, H %g", token,
                                                                    decision->entropy);
    reset_policy_free(policy);
    free(decision_memory);

    reset_session_free(session);
    reset_model_free(model);
    free(steps_memory);
    printf("older_header: a 0.2.0 program on libreset %s: every _init, decode step and policy draw stays inside "
           "its structs\n", reset_version_string());
    return 0;
}
