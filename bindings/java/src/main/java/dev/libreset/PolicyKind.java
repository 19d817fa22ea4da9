package dev.libreset;

/** A sampling policy (reset_policy_kind). */
public enum PolicyKind {
    GREEDY(reset_policy_kind.RESET_POLICY_GREEDY),
    FIXED(reset_policy_kind.RESET_POLICY_FIXED),
    RESET(reset_policy_kind.RESET_POLICY_RESET),
    ENTROPY(reset_policy_kind.RESET_POLICY_ENTROPY),
    /** A value this binding does not know, which a newer libreset of the same ABI major may report;
     *  passed to the library it is refused (RESET_ERR_INVALID_ARGUMENT). */
    UNKNOWN(-1);

    private final int code;

    PolicyKind(int code) {
        this.code = code;
    }

    /** The C enum's value. */
    public int code() {
        return code;
    }

    static PolicyKind of(int code) {
        for (PolicyKind value : values()) {
            if (value.code == code) return value;
        }
        return UNKNOWN;
    }
}
