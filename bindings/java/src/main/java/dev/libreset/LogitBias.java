package dev.libreset;

/**
 * A logit bias crossing into libreset (reset_set_logit_bias, reset_policy_set_logit_bias): Java's parallel
 * arrays become a C array of reset_logit_bias entries for one call.
 */
final class LogitBias {
    private LogitBias() {}

    /** One call that sets a bias from a C array of entries and their count (0 and 0 for none). */
    interface SetCall {
        void call(long entries, long count) throws ResetException;
    }

    /**
     * Runs set with {@code tokens[i]} and {@code biases[i]} as entry i of a C array, freed after the call (the
     * library copies the entries); empty arrays cross as no entries.
     *
     * @throws IllegalArgumentException for arrays of different lengths
     */
    static void set(int[] tokens, float[] biases, SetCall set) throws ResetException {
        if (tokens.length != biases.length) {
            throw new IllegalArgumentException(tokens.length + " tokens but " + biases.length + " biases");
        }
        if (tokens.length == 0) {
            set.call(0, 0);
            return;
        }
        long entries = ResetNative.reset_java_logit_bias_new(tokens, biases);
        if (entries == 0) throw new ResetException(Status.OUT_OF_MEMORY, "no memory for the logit bias");
        try {
            set.call(entries, tokens.length);
        } finally {
            ResetNative.reset_java_logit_bias_free(entries);
        }
    }
}
