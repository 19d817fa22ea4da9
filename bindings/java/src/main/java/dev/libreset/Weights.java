package dev.libreset;

/** How the linear layers are held (reset_weights). */
public enum Weights {
    AUTO(reset_weights.RESET_WEIGHTS_AUTO),
    BF16(reset_weights.RESET_WEIGHTS_BF16),
    NVFP4_W4A16(reset_weights.RESET_WEIGHTS_NVFP4_W4A16),
    NVFP4_W4A4(reset_weights.RESET_WEIGHTS_NVFP4_W4A4),
    /** A value this binding does not know, which a newer libreset of the same ABI major may report;
     *  passed to the library it is refused (RESET_ERR_INVALID_ARGUMENT). */
    UNKNOWN(-1);

    private final int code;

    Weights(int code) {
        this.code = code;
    }

    /** The C enum's value. */
    public int code() {
        return code;
    }

    static Weights of(int code) {
        for (Weights value : values()) {
            if (value.code == code) return value;
        }
        return UNKNOWN;
    }
}
