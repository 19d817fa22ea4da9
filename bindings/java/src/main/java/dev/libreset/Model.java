package dev.libreset;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;

/**
 * A loaded model: immutable, and shareable by any number of threads and sessions.
 *
 * <pre>{@code
 * try (Model model = Model.load("tests/fixtures/models/qwen3-tied");
 *      Session session = model.newSession(256, 1)) { ... }
 * }</pre>
 *
 * <p>Memory: the model owns its C handle; {@link #close()} frees it.  libreset keeps a model
 * alive until its last session is freed, so closing a model before its sessions is safe.
 */
public final class Model implements AutoCloseable {
    private volatile long handle;
    private final Cleaner.Cleanable cleanable;
    private final int vocabSize;

    private Model(long raw) throws ResetException {
        this.handle = raw;
        // info() before the Cleaner: if it throws, load() frees raw and no Cleaner frees it again.
        this.vocabSize = info().vocabSize();
        this.cleanable = Handles.CLEANER.register(this, () -> ResetNative.reset_model_free(raw));
    }

    /** Loads a Hugging Face model directory with the library's default options. */
    public static Model load(String path) throws ResetException {
        return load(path, new ModelOptions());
    }

    /**
     * Loads a Hugging Face model directory (reset_model_load).
     *
     * @throws ResetException {@link Status#IO} for a missing directory or file, FORMAT, UNSUPPORTED,
     *     SHAPE, OUT_OF_MEMORY, BACKEND; UNSUPPORTED also when the loaded libreset has another ABI major
     *     or an older minor than this binding's
     */
    public static Model load(String path, ModelOptions options) throws ResetException {
        Reset.ensureAbi();
        byte[] utf8Path = Text.utf8(path);
        reset_model_options raw = options.toNative();
        long[] out = new long[1];
        try {
            ResetNative.reset_model_load(utf8Path, raw, out);
        } finally {
            raw.delete();
        }
        try {
            return new Model(out[0]);
        } catch (Throwable e) { // the constructor registers its Cleaner last, so nothing else frees it
            ResetNative.reset_model_free(out[0]);
            throw e;
        }
    }

    long handle() {
        long h = handle;
        if (h == 0) throw new IllegalStateException("the model is closed");
        return h;
    }

    boolean isOpen() {
        return handle != 0;
    }

    int vocabSize() {
        return vocabSize;
    }

    /** The model's shapes, resolved formats and memory. */
    public ModelInfo info() throws ResetException {
        reset_model_info info = new reset_model_info();
        try {
            ResetNative.reset_model_info_init(info);
            ResetNative.reset_model_get_info(handle(), info);
            int[] eos = new int[info.getN_eos()];
            for (int i = 0; i < eos.length; i++) eos[i] = info.eos_id(i);
            return new ModelInfo(Text.string(info.getArchitecture()), info.getN_layers(), info.getHidden_size(),
                    info.getIntermediate_size(), info.getN_heads(), info.getN_kv_heads(), info.getHead_dim(),
                    info.getVocab_size(), info.getMax_position_embeddings(), info.getTied_embeddings() != 0,
                    Weights.of(info.getWeights()), Backend.of(info.getBackend()), info.getLm_head_nvfp4() != 0,
                    info.getN_parameters(), info.getWeight_bytes(), info.getHost_bytes(), info.getDevice_bytes(),
                    eos, info.getBos_id(), CheckpointFormat.of(info.getCheckpoint_format()),
                    info.getKv_cache_scales() != 0);
        } finally {
            info.delete();
            Reference.reachabilityFence(this); // see Handles
        }
    }

    /**
     * The tokenizer the model directory carries, or null.  It belongs to the model: closing it
     * does nothing, and it fails with IllegalStateException once the model is closed.
     */
    public Tokenizer tokenizer() {
        try {
            long raw = ResetNative.reset_model_tokenizer(handle());
            return raw == 0 ? null : new Tokenizer(raw, this);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Opens a single-sequence session of min(model maximum, 4096) tokens. */
    public Session newSession() throws ResetException {
        return newSession(0, 1);
    }

    /**
     * Opens a session (reset_session_create): its KV cache and sampler state are reserved now.
     *
     * @param maxContext tokens per sequence; 0 = min(model maximum, 4096)
     * @param sequences parallel sequences 1..8 sharing one prompt
     */
    public Session newSession(int maxContext, int sequences) throws ResetException {
        return newSession(new SessionOptions().maxContext(maxContext).sequences(sequences));
    }

    /**
     * Opens a session with these options (reset_session_create).
     *
     * @throws ResetException INVALID_ARGUMENT for an option out of its range (a topLogprobs outside 0..20, a
     *     prefillGemmTokens below -1), UNSUPPORTED for {@link KvCache#FP32} on a CUDA model
     */
    public Session newSession(SessionOptions options) throws ResetException {
        return new Session(this, options);
    }

    /** Frees the model (sessions made from it keep it alive until they close).  Idempotent. */
    @Override
    public void close() {
        handle = 0;
        cleanable.clean();
    }
}
