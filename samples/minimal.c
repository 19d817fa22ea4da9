/* minimal.c — the smallest complete libreset program: load a model, format
 * one user message with its chat template, and stream the answer.
 *
 *   cc minimal.c $(pkg-config --cflags --libs reset) -o minimal
 *   ./minimal MODEL_DIR "What is 2+3?"
 */
#include <reset.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what) {
    fprintf(stderr, "minimal: %s: %s\n", what, reset_last_error());
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 3) return fprintf(stderr, "usage: %s MODEL_DIR PROMPT\n", argv[0]), 2;
    reset_model *model = NULL;
    reset_session *session = NULL;
    if (reset_model_load(argv[1], NULL, &model) != RESET_OK) return fail("load");
    const reset_tokenizer *tok = reset_model_tokenizer(model);
    if (!tok) return fail("tokenizer");

    /* Chat template -> text -> ids (the snprintf idiom: ask the size, then fill). */
    reset_chat_message user = {"user", argv[2], strlen(argv[2])};
    char text[8192];
    size_t text_len = 0, n_ids = 0;
    if (reset_chat_format(tok, &user, 1, NULL, text, sizeof text, &text_len) != RESET_OK) return fail("template");
    int32_t ids[4096];
    if (reset_tokenize(tok, text, text_len, RESET_TOKENIZE_PARSE_SPECIAL, ids, 4096, &n_ids) != RESET_OK)
        return fail("tokenize");

    int status = 0;
    if (reset_session_create(model, NULL, &session) != RESET_OK || reset_prefill(session, ids, n_ids) != RESET_OK)
        status = fail("prefill");
    for (int i = 0; !status && i < 256; ++i) { /* the session's text is complete UTF-8 only */
        reset_step step;
        reset_step_init(&step, 1);
        if (reset_decode_step(session, &step, 1, NULL) != RESET_OK) status = fail("decode");
        else fwrite(step.text, 1, step.text_len, stdout);
        if (status || step.end_of_generation) break;
    }
    printf("\n");
    reset_session_free(session);
    reset_model_free(model);
    return status;
}
