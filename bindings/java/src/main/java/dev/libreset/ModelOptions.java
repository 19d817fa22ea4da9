package dev.libreset;

/** reset_model_options: how to load a model.  The defaults are the library's (AUTO, AUTO, ...). */
public final class ModelOptions {
    private Weights weights = Weights.AUTO;
    private Backend backend = Backend.AUTO;
    private boolean quantizeLmHead;
    private int device;
    private int threads;
    private FileAccess fileAccess = FileAccess.MAP;

    public ModelOptions weights(Weights weights) {
        this.weights = weights;
        return this;
    }

    public ModelOptions backend(Backend backend) {
        this.backend = backend;
        return this;
    }

    /** NVFP4 lm_head too when quantizing on load. */
    public ModelOptions quantizeLmHead(boolean quantizeLmHead) {
        this.quantizeLmHead = quantizeLmHead;
        return this;
    }

    /** The CUDA device ordinal. */
    public ModelOptions device(int device) {
        this.device = device;
        return this;
    }

    /** CPU threads; 0 = all cores. */
    public ModelOptions threads(int threads) {
        this.threads = threads;
        return this;
    }

    /** (0.12) How the safetensors files are brought into memory: mapped (the default) or read. */
    public ModelOptions fileAccess(FileAccess fileAccess) {
        this.fileAccess = fileAccess;
        return this;
    }

    /** A C struct with these values, which the caller deletes. */
    reset_model_options toNative() {
        reset_model_options options = new reset_model_options();
        ResetNative.reset_model_options_init(options);
        options.setWeights(weights.code());
        options.setBackend(backend.code());
        options.setQuantize_lm_head(quantizeLmHead ? 1 : 0);
        options.setDevice(device);
        options.setThreads(threads);
        options.setFile_access(fileAccess.code());
        return options;
    }
}
