/* decode.c — load a model, prefill a prompt of token ids, decode greedily.
 *
 *   decode MODEL_DIR [ID ...]      (default prompt: 1 2 3)
 *
 * Uses only the public C ABI, as any application would.  Prints the model
 * summary, then one line per generated token with its signals, and, when the
 * model has a tokenizer, the streamed text. */
#include <reset.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what) {
    fprintf(stderr, "decode: %s: %s\n", what, reset_last_error());
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL_DIR [TOKEN_ID ...]\n", argv[0]);
        return 2;
    }
    reset_model *model = NULL;
    if (reset_model_load(argv[1], NULL, &model) != RESET_OK) return fail("loading the model");

    reset_model_info info;
    reset_model_info_init(&info);
    reset_model_get_info(model, &info);
    printf("libreset %s: %s, %d layers, hidden %d, vocab %d, %.2f MB of weights\n", reset_version_string(),
           info.architecture, info.n_layers, info.hidden_size, info.vocab_size, info.weight_bytes / 1e6);

    int32_t prompt[256] = {1, 2, 3};
    size_t n_prompt = 3;
    if (argc > 2) {
        n_prompt = 0;
        for (int i = 2; i < argc && n_prompt < 256; ++i) prompt[n_prompt++] = (int32_t)strtol(argv[i], NULL, 10);
    }

    reset_session *session = NULL;
    int status = 0;
    if (reset_session_create(model, NULL, &session) != RESET_OK) status = fail("creating a session");
    if (!status && reset_prefill(session, prompt, n_prompt) != RESET_OK) status = fail("prefill");
    for (int i = 0; !status && i < 16; ++i) {
        reset_step step;
        reset_step_init(&step, 1);
        if (reset_decode_step(session, &step, 1, NULL) != RESET_OK) {
            status = fail("decode step");
            break;
        }
        printf("token %6d  entropy %.3f  temperature %.2f  %.*s\n", step.token, step.entropy, step.temperature,
               (int)step.text_len, step.text);
        if (step.end_of_generation) break;
    }
    reset_session_free(session);
    reset_model_free(model);
    return status;
}
