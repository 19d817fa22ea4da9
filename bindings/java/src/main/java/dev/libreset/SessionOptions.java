package dev.libreset;

import java.util.Objects;

/**
 * reset_session_options: what {@link Model#newSession(SessionOptions)} reserves, and what
 * {@link Session#options()} reads back (0.9).  The defaults are the library's (min(model maximum, 4096)
 * tokens, one sequence, a BF16 KV cache, no top logprobs, and the CUDA backend's graph replay, measured
 * GEMM crossover and programmatic launch).
 *
 * <p>Getters share the setters' names, without an argument.
 */
public final class SessionOptions {
    private int maxContext;
    private int sequences = 1;
    private KvCache kvCache = KvCache.BF16;
    private int topLogprobs;
    private boolean eager;
    private int prefillGemmTokens;
    private boolean programmaticLaunch = true;

    /** The values of a C struct the library filled in; the caller still deletes it. */
    static SessionOptions fromNative(reset_session_options options) {
        return new SessionOptions().maxContext(options.getMax_context()).sequences(options.getSequences())
                .kvCache(KvCache.of(options.getKv_cache())).topLogprobs(options.getTop_logprobs())
                .eager(options.getEager() != 0).prefillGemmTokens(options.getPrefill_gemm_tokens())
                .programmaticLaunch(options.getProgrammatic_launch() == 0);
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

    /**
     * CUDA backend (the CPU backend ignores it): with true, each kernel of a decode step is launched one by
     * one instead of replaying the step's CUDA graph (slower; for comparison and debugging).  Default false.
     */
    public SessionOptions eager(boolean eager) {
        this.eager = eager;
        return this;
    }

    /** CUDA backend: whether each kernel of a decode step is launched one by one, without the graph. */
    public boolean eager() {
        return eager;
    }

    /**
     * CUDA backend, NVFP4 models (the CPU backend ignores it): prompt chunks of at least this many tokens (up
     * to 256 per chunk) are prefilled through the GEMM path (weights dequantized to FP16 a slice at a time,
     * then cuBLAS with FP32 accumulation); shorter chunks run through the decode GEMV, 8 tokens per pass.
     * 0 = the measured crossover (docs/cuda-engine.md), the default; -1 = never (GEMV path only); below -1
     * the session is refused with {@link Status#INVALID_ARGUMENT}.  Both paths multiply the same values; they
     * differ in FP32 summation order.
     */
    public SessionOptions prefillGemmTokens(int prefillGemmTokens) {
        // Not checked here: the library refuses a value below -1 and names it.
        this.prefillGemmTokens = prefillGemmTokens;
        return this;
    }

    /** CUDA backend, NVFP4 models: the shortest chunk prefilled through GEMM; 0 = measured, -1 = never. */
    public int prefillGemmTokens() {
        return prefillGemmTokens;
    }

    /**
     * CUDA backend (the CPU backend ignores it): programmatic dependent launch (GPUs from sm_90 on), which
     * places each kernel of a step on the GPU while the one before it finishes and hides most of the
     * per-kernel launch ramp.  Same results either way.  Default true: on where the GPU supports it; false is
     * plain stream order, for comparison.
     */
    public SessionOptions programmaticLaunch(boolean programmaticLaunch) {
        this.programmaticLaunch = programmaticLaunch;
        return this;
    }

    /** CUDA backend: whether programmatic dependent launch is on where the GPU supports it. */
    public boolean programmaticLaunch() {
        return programmaticLaunch;
    }

    /** A C struct with these values, which the caller deletes. */
    reset_session_options toNative() {
        reset_session_options options = new reset_session_options();
        ResetNative.reset_session_options_init(options);
        options.setMax_context(maxContext);
        options.setSequences(sequences);
        options.setKv_cache(kvCache.code());
        options.setTop_logprobs(topLogprobs);
        options.setEager(eager ? 1 : 0);
        options.setPrefill_gemm_tokens(prefillGemmTokens);
        // reset.h: 0 = on where the GPU supports it, -1 = off.
        options.setProgrammatic_launch(programmaticLaunch ? 0 : -1);
        return options;
    }
}
