package dev.libreset;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;

/**
 * The standalone ReSET policy: the sampler without a model, for logits computed by any engine.
 * Per generated token: {@link #decide} (or {@link #sample}) on its raw logits, then
 * {@link #accept} with the token taken.  A session of a model makes the same decisions.
 *
 * <p>Memory: the policy owns its C handle; {@link #close()} frees it.  Logits and id arrays are
 * copied for the call.  Threads: one thread at a time.
 */
public final class Policy implements AutoCloseable {
    private long handle;
    private final Cleaner.Cleanable cleanable;

    private Policy(long raw) {
        this.handle = raw;
        this.cleanable = Handles.CLEANER.register(this, () -> ResetNative.reset_policy_free(raw));
    }

    /**
     * Creates a policy (reset_policy_create) with its step delimiters.
     *
     * @param newlineIds NL: the ids whose text is exactly "\n"
     * @param doubleNewlineIds DNL: the ids whose text contains "\n\n"
     * @param sequence the Philox stream {@link #sample} draws from, >= 0
     * @throws ResetException INVALID_ARGUMENT naming the wrong field; UNSUPPORTED for ReSET
     *     without t_low/tau0 and no preset
     */
    public static Policy create(PolicyParams params, int[] newlineIds, int[] doubleNewlineIds, int sequence)
            throws ResetException {
        Reset.ensureAbi();
        reset_policy_params p = params.toNative();
        reset_policy_options options = options(newlineIds, doubleNewlineIds, sequence);
        long[] out = new long[1];
        try {
            ResetNative.reset_policy_create(p, options, out);
        } finally {
            options.delete();
            p.delete();
        }
        return new Policy(out[0]);
    }

    /**
     * Creates a policy for logits of model (reset_policy_create_for_model): ReSET's missing
     * t_low/tau0 come from the paper's table if the model is recognised, the delimiters from its
     * tokenizer.  The policy does not keep the model.
     */
    public static Policy forModel(Model model, PolicyParams params) throws ResetException {
        Reset.ensureAbi();
        reset_policy_params p = params.toNative();
        long[] out = new long[1];
        try {
            ResetNative.reset_policy_create_for_model(model.handle(), p, null, out);
        } finally {
            p.delete();
            Reference.reachabilityFence(model); // see Handles
        }
        return new Policy(out[0]);
    }

    private static reset_policy_options options(int[] newlineIds, int[] doubleNewlineIds, int sequence) {
        reset_policy_options options = new reset_policy_options();
        ResetNative.reset_policy_options_init(options);
        if (newlineIds != null) options.set_newline_ids(newlineIds);
        if (doubleNewlineIds != null) options.set_double_newline_ids(doubleNewlineIds);
        options.setSequence(sequence);
        return options;
    }

    private long handle() {
        if (handle == 0) throw new IllegalStateException("the policy is closed");
        return handle;
    }

    /**
     * Replaces the parameters; the step state and the penalties' token counts are kept unless
     * resetState.  Unchanged on error.
     */
    public void setParams(PolicyParams params) throws ResetException {
        reset_policy_params p = params.toNative();
        try {
            ResetNative.reset_policy_set_params(handle(), p);
        } finally {
            p.delete();
            Reference.reachabilityFence(this);
        }
    }

    /** Decides the next token's temperature from its raw logits and updates the ReSET state. */
    public Decision decide(float[] logits) throws ResetException {
        reset_decision d = new reset_decision();
        try {
            ResetNative.reset_decision_init(d);
            ResetNative.reset_policy_decide(handle(), logits, d);
            return Decision.of(d);
        } finally {
            d.delete();
            Reference.reachabilityFence(this);
        }
    }

    /** A token drawn by {@link #sample}, with the decision behind it. */
    public record Sample(int token, Decision decision) {}

    /** Decides, then draws the token as a session would.  It is not accepted: call {@link #accept}. */
    public Sample sample(float[] logits) throws ResetException {
        reset_decision d = new reset_decision();
        int[] token = new int[1];
        try {
            ResetNative.reset_decision_init(d);
            ResetNative.reset_policy_sample(handle(), logits, token, d);
            return new Sample(token[0], Decision.of(d));
        } finally {
            d.delete();
            Reference.reachabilityFence(this);
        }
    }

    /** Records the token the sequence took after the last decision. */
    public void accept(int token) throws ResetException {
        try {
            ResetNative.reset_policy_accept(handle(), token);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Records context tokens the policy did not accept itself (the prompt, a user's turn), as a session does
     * at every prefill: only the repetition penalty lowers them.
     *
     * @throws ResetException OUT_OF_RANGE for a negative id (nothing is recorded)
     */
    public void addContext(int[] ids) throws ResetException {
        try {
            ResetNative.reset_policy_add_context(handle(), ids);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Starts a new sequence: forgets the step state, the accepted tokens, the penalties' counts and the
     * context tokens.
     */
    public void reset() throws ResetException {
        try {
            ResetNative.reset_policy_reset(handle());
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * (0.7) {@link Session#setLogitBias} for the standalone policy (reset_policy_set_logit_bias): from the next
     * {@link #sample} on, {@code biases[i]} is added to the logit of {@code tokens[i]} after the penalties and
     * before the temperature, the truncation and the draw; {@link #decide}, the entropy and the decision's
     * logprob still see the raw logits.  Empty arrays remove the bias, as {@link #clearLogitBias()} does; it
     * stays through {@link #setParams} and {@link #reset()}.  A policy made by {@link #forModel} checks the
     * tokens against the model's vocabulary now; one made by {@link #create} knows none, so {@link #sample}
     * throws OUT_OF_RANGE for logits that do not reach every listed token, and INVALID_ARGUMENT for logits
     * whose every unbanned entry is -infinity.  On an error the bias in force is unchanged.
     *
     * @throws ResetException as {@link Session#setLogitBias} does; OUT_OF_RANGE for a negative token
     * @throws IllegalArgumentException for arrays of different lengths
     */
    public void setLogitBias(int[] tokens, float[] biases) throws ResetException {
        try {
            LogitBias.set(tokens, biases,
                    (entries, count) -> ResetNative.reset_policy_set_logit_bias(handle(), entries, count));
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** (0.7) Removes the logit bias (reset_policy_set_logit_bias with no entries). */
    public void clearLogitBias() throws ResetException {
        setLogitBias(new int[0], new float[0]);
    }

    /** Frees the policy.  Idempotent. */
    @Override
    public void close() {
        handle = 0;
        cleanable.clean();
    }
}
