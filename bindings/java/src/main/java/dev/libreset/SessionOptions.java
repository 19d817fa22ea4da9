package dev.libreset;

/**
 * reset_session_options: what {@link Model#newSession(SessionOptions)} reserves.  The defaults are the
 * library's (min(model maximum, 4096) tokens, one sequence, no top logprobs).
 */
public final class SessionOptions {
    private int maxContext;
    private int sequences = 1;
    private int topLogprobs;

    /** Tokens per sequence; 0 = min(model maximum, 4096). */
    public SessionOptions maxContext(int maxContext) {
        this.maxContext = maxContext;
        return this;
    }

    /** Parallel sequences 1..8 sharing one prompt. */
    public SessionOptions sequences(int sequences) {
        this.sequences = sequences;
        return this;
    }

    /**
     * (0.4) How many of the most likely tokens each step reports in {@link Step#topLogprobs()}, 0..20
     * (OpenAI's top_logprobs, vLLM's logprobs); 0 = none.  Outside 0..20 the session is refused with
     * {@link Status#INVALID_ARGUMENT}.
     */
    public SessionOptions topLogprobs(int topLogprobs) {
        this.topLogprobs = topLogprobs;
        return this;
    }

    int sequences() {
        return sequences;
    }

    /** A C struct with these values, which the caller deletes. */
    reset_session_options toNative() {
        reset_session_options options = new reset_session_options();
        ResetNative.reset_session_options_init(options);
        options.setMax_context(maxContext);
        options.setSequences(sequences);
        options.setTop_logprobs(topLogprobs);
        return options;
    }
}
