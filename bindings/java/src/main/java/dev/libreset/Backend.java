package dev.libreset;

/** The engine a model runs on (reset_backend). */
public enum Backend {
    AUTO(reset_backend.RESET_BACKEND_AUTO),
    CPU(reset_backend.RESET_BACKEND_CPU),
    CUDA(reset_backend.RESET_BACKEND_CUDA),
    /** A value this binding does not know, which a newer libreset of the same ABI major may report;
     *  passed to the library it is refused (RESET_ERR_INVALID_ARGUMENT). */
    UNKNOWN(-1);

    private final int code;

    Backend(int code) {
        this.code = code;
    }

    /** The C enum's value. */
    public int code() {
        return code;
    }

    static Backend of(int code) {
        for (Backend value : values()) {
            if (value.code == code) return value;
        }
        return UNKNOWN;
    }
}
