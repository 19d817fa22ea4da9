package dev.libreset;

/** reset_status, as reset.h documents each value. */
public enum Status {
    OK(reset_status.RESET_OK, "RESET_OK"),
    INVALID_ARGUMENT(reset_status.RESET_ERR_INVALID_ARGUMENT, "RESET_ERR_INVALID_ARGUMENT"),
    INVALID_HANDLE(reset_status.RESET_ERR_INVALID_HANDLE, "RESET_ERR_INVALID_HANDLE"),
    IO(reset_status.RESET_ERR_IO, "RESET_ERR_IO"),
    FORMAT(reset_status.RESET_ERR_FORMAT, "RESET_ERR_FORMAT"),
    UNSUPPORTED(reset_status.RESET_ERR_UNSUPPORTED, "RESET_ERR_UNSUPPORTED"),
    SHAPE(reset_status.RESET_ERR_SHAPE, "RESET_ERR_SHAPE"),
    OUT_OF_RANGE(reset_status.RESET_ERR_OUT_OF_RANGE, "RESET_ERR_OUT_OF_RANGE"),
    CONTEXT_OVERFLOW(reset_status.RESET_ERR_CONTEXT_OVERFLOW, "RESET_ERR_CONTEXT_OVERFLOW"),
    OUT_OF_MEMORY(reset_status.RESET_ERR_OUT_OF_MEMORY, "RESET_ERR_OUT_OF_MEMORY"),
    BAD_UTF8(reset_status.RESET_ERR_BAD_UTF8, "RESET_ERR_BAD_UTF8"),
    BUFFER_TOO_SMALL(reset_status.RESET_ERR_BUFFER_TOO_SMALL, "RESET_ERR_BUFFER_TOO_SMALL"),
    CANCELLED(reset_status.RESET_ERR_CANCELLED, "RESET_ERR_CANCELLED"),
    STATE(reset_status.RESET_ERR_STATE, "RESET_ERR_STATE"),
    BACKEND(reset_status.RESET_ERR_BACKEND, "RESET_ERR_BACKEND"),
    INTERNAL(reset_status.RESET_ERR_INTERNAL, "RESET_ERR_INTERNAL"),
    /** A code a newer libreset returns that this binding does not know. */
    UNKNOWN(-1, "RESET_ERR_UNKNOWN");

    private final int code;
    private final String cName;

    Status(int code, String cName) {
        this.code = code;
        this.cName = cName;
    }

    /** The numeric reset_status. */
    public int code() {
        return code;
    }

    /** The C constant's name. */
    public String cName() {
        return cName;
    }

    /** The status of a code; {@link #UNKNOWN} when this binding does not know it. */
    public static Status of(int code) {
        for (Status status : values()) {
            if (status.code == code) return status;
        }
        return UNKNOWN;
    }
}
