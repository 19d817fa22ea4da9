/* branch.c — a small search over sampled continuations: several branches
 * sample the next tokens of one answer, the likeliest branch is kept and
 * copied onto the others (reset_copy_sequence, 0.7), and they sample on from
 * it.  The prompt is prefilled once, and no branch is ever prefilled again:
 * a copy takes its source's KV cache, logits and sampler state, and draws
 * with its own key.
 *
 *   branch MODEL_DIR PROMPT [BRANCHES [ROUND_TOKENS]]     (defaults 4 and 16)
 *
 * Each round, every branch samples ROUND_TOKENS tokens at temperature 0.8
 * (top-p 0.95); the branch whose tokens have the highest mean log-probability
 * under the model wins the round.  It stops when the winner's answer ends.
 * The rounds go to stderr, the answer to stdout. */
#include <reset.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxBranches = 8, kMaxText = 1 << 16, kMaxRounds = 64 };

static int fail(const char *what) {
    fprintf(stderr, "branch: %s: %s\n", what, reset_last_error());
    return 1;
}

/* Each branch's answer so far (the steps' text), copied along with the branch. */
static char texts[kMaxBranches][kMaxText];
static size_t text_lengths[kMaxBranches];

static void append(int branch, const char *text, size_t length) {
    size_t room = kMaxText - text_lengths[branch];
    if (length > room) length = room;
    memcpy(texts[branch] + text_lengths[branch], text, length);
    text_lengths[branch] += length;
}

int main(int argc, char **argv) {
    if (argc < 3 || argc > 5) return fprintf(stderr, "usage: %s MODEL_DIR PROMPT [BRANCHES [ROUND_TOKENS]]\n", argv[0]), 2;
    const int branches = argc > 3 ? atoi(argv[3]) : 4, round_tokens = argc > 4 ? atoi(argv[4]) : 16;
    if (branches < 2 || branches > kMaxBranches || round_tokens < 1)
        return fprintf(stderr, "branch: BRANCHES must be 2..%d, ROUND_TOKENS at least 1\n", kMaxBranches), 2;

    reset_model *model = NULL;
    reset_session *session = NULL;
    if (reset_model_load(argv[1], NULL, &model) != RESET_OK) return fail("load");
    const reset_tokenizer *tok = reset_model_tokenizer(model);
    if (!tok) return fail("tokenizer");
    reset_chat_message user = {"user", argv[2], strlen(argv[2])};
    static char prompt[8192];
    static int32_t ids[4096];
    size_t prompt_len = 0, n_ids = 0;
    if (reset_chat_format(tok, &user, 1, NULL, prompt, sizeof prompt, &prompt_len) != RESET_OK) return fail("template");
    if (reset_tokenize(tok, prompt, prompt_len, RESET_TOKENIZE_PARSE_SPECIAL, ids, 4096, &n_ids) != RESET_OK)
        return fail("tokenize");

    reset_session_options options;
    reset_session_options_init(&options);
    options.sequences = branches;
    reset_policy_params policy;
    reset_policy_params_init(&policy);
    policy.kind = RESET_POLICY_FIXED;
    policy.temperature = 0.8f;
    policy.top_p = 0.95f;
    policy.seed = 1;
    int status = 0;
    if (reset_session_create(model, &options, &session) != RESET_OK) status = fail("session");
    else if (reset_set_policy(session, &policy) != RESET_OK) status = fail("policy");
    else if (reset_prefill(session, ids, n_ids) != RESET_OK) status = fail("prefill"); /* once, for every branch */

    reset_step steps[kMaxBranches];
    int winner = 0, done = 0;
    for (int round = 1; !status && !done && round <= kMaxRounds; ++round) {
        double logprob[kMaxBranches] = {0};
        int counted[kMaxBranches] = {0}, ended[kMaxBranches] = {0};
        for (int t = 0; t < round_tokens && !status; ++t) {
            reset_step_init(steps, (size_t)branches);
            int32_t active = 0;
            reset_status s = reset_decode_step(session, steps, (size_t)branches, &active);
            if (s == RESET_ERR_CONTEXT_OVERFLOW) { /* the context is full: the round ends here */
                done = 1;
                break;
            }
            if (s != RESET_OK) {
                status = fail("decode");
                break;
            }
            for (int b = 0; b < branches; ++b) {
                if (steps[b].token < 0) continue; /* ended in an earlier step */
                append(b, steps[b].text, steps[b].text_len);
                logprob[b] += steps[b].logprob;
                counted[b] += 1;
                ended[b] = steps[b].end_of_generation;
            }
            if (active == 0) break;
        }
        if (status) break;
        /* The round's winner: the highest mean log-probability of the tokens it drew (a branch that
         * drew none this round, having ended before it, cannot win). */
        winner = -1;
        for (int b = 0; b < branches; ++b)
            if (counted[b] > 0 && (winner < 0 || logprob[b] / counted[b] > logprob[winner] / counted[winner]))
                winner = b;
        if (winner < 0) break;
        fprintf(stderr, "round %d: branch %d kept (mean log-probability %.3f over %d tokens)%s\n", round, winner,
                logprob[winner] / counted[winner], counted[winner], ended[winner] ? ", its answer ended" : "");
        if (ended[winner]) break;
        for (int b = 0; b < branches && !status; ++b) {
            if (b == winner) continue;
            if (reset_copy_sequence(session, winner, b) != RESET_OK) status = fail("copy");
            memcpy(texts[b], texts[winner], text_lengths[winner]);
            text_lengths[b] = text_lengths[winner];
        }
    }
    if (!status && winner >= 0) printf("%.*s\n", (int)text_lengths[winner], texts[winner]);
    reset_session_free(session);
    reset_model_free(model);
    return status;
}
