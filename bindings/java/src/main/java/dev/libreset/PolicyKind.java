package dev.libreset;

/** A sampling policy (reset_policy_kind). */
public enum PolicyKind {
    GREEDY(reset_policy_kind.RESET_POLICY_GREEDY),
    FIXED(reset_policy_kind.RESET_POLICY_FIXED),
    RESET(reset_policy_kind.RESET_POLICY_RESET),
    ENTROPY(reset_policy_kind.RESET_POLICY_ENTROPY);

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
        throw new IllegalArgumentException("unknown reset_policy_kind " + code);
    }
}
