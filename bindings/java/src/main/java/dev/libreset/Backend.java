package dev.libreset;

/** The engine a model runs on (reset_backend). */
public enum Backend {
    AUTO(reset_backend.RESET_BACKEND_AUTO),
    CPU(reset_backend.RESET_BACKEND_CPU),
    CUDA(reset_backend.RESET_BACKEND_CUDA);

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
        throw new IllegalArgumentException("unknown reset_backend " + code);
    }
}
