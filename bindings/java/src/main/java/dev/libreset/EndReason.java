package dev.libreset;

/** Why a sequence stopped (reset_end_reason), as {@link Step#endReason()} reports it. */
public enum EndReason {
    /** Still generating. */
    NONE(reset_end_reason.RESET_END_NONE),
    /** It drew an end-of-generation id (that token is reported); never with {@link StopOptions#ignoreEos}. */
    EOS(reset_end_reason.RESET_END_EOS),
    /** It had already ended in an earlier step: the token is -1. */
    FINISHED(reset_end_reason.RESET_END_FINISHED),
    /** (0.5) It produced a stop string or a stop id of {@link Session#setStop}. */
    STOP(reset_end_reason.RESET_END_STOP),
    /** (0.5) It generated {@link StopOptions#maxTokens} tokens. */
    LENGTH(reset_end_reason.RESET_END_LENGTH),
    /** A value this binding does not know, which a newer libreset of the same ABI major may report. */
    UNKNOWN(-1);

    private final int code;

    EndReason(int code) {
        this.code = code;
    }

    /** The C enum's value. */
    public int code() {
        return code;
    }

    static EndReason of(int code) {
        for (EndReason value : values()) {
            if (value.code == code) return value;
        }
        return UNKNOWN;
    }
}
