package dev.libreset;

import java.util.Objects;

/**
 * reset_session_options: what {@link Model#newSession(SessionOptions)} reserves, and what
 * {@link Session#options()} reads back (0.9).  The defaults are the library's (min(model maximum, 4096)
 * tokens, one sequence, a BF16 KV cache, no top logprobs).
 *
 * <p>Getters share the setters' names, without an argument.
 */
public final class SessionOptions {
    private int maxContext;
    private int sequences = 1;
    private KvCache kvCache = KvCache.BF16;
    private int topLogprobs;

    /** The values of a C struct the library filled in; the caller still deletes it. */
    static SessionOptions fromNative(reset_session_options options) {
        return new SessionOptions().maxContext(options.getMax_context()).sequences(options.getSequences())
                .kvCache(KvCache.of(options.getKv_cache())).topLogprobs(options.getTop_logprobs());
    }

    /** Tokens per sequence; 0 = min(model maximum, 4096). */
    public SessionOptions maxContext(int maxContext) {
        this.maxContext = maxContext;
        return this;
    }

    /**
     * Tokens per sequence: as set (0 = min(model maximum, 4096)), or, read back from a session, resolved
     * (never 0; {@link Session#maxContext()}).
     */
    public int maxContext() {
        return maxContext;
    }

    /** Parallel sequences 1..8 sharing one prompt. */
    public SessionOptions sequences(int sequences) {
        this.sequences = sequences;
        return this;
    }

    /** Parallel sequences sharing one prompt. */
    public int sequences() {
        return sequences;
    }

    /**
     * How the KV cache is stored; {@link KvCache#BF16} by default.  {@link KvCache#FP8} halves the cache's
     * bytes at long reasoning contexts; {@link KvCache#FP32} is the CPU backend only (a CUDA model refuses
     * the session with {@link Status#UNSUPPORTED}).
     *
     * @throws NullPointerException for null, which names no cache type
     */
    public SessionOptions kvCache(KvCache kvCache) {
        this.kvCache = Objects.requireNonNull(kvCache, "kvCache");
        return this;
    }

    /** How the KV cache is stored ({@link KvCache#UNKNOWN} for a type a newer libreset reports). */
    public KvCache kvCache() {
        return kvCache;
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

    /** (0.4) How many of the most likely tokens each step reports; 0 = none. */
    public int topLogprobs() {
        return topLogprobs;
    }

    /** A C struct with these values, which the caller deletes. */
    reset_session_options toNative() {
        reset_session_options options = new reset_session_options();
        ResetNative.reset_session_options_init(options);
        options.setMax_context(maxContext);
        options.setSequences(sequences);
        options.setKv_cache(kvCache.code());
        options.setTop_logprobs(topLogprobs);
        return options;
    }
}
