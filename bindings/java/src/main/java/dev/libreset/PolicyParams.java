package dev.libreset;

/**
 * reset_policy_params: a sampling policy and its parameters, for {@link Session#setPolicy} and
 * {@link Policy}, and what {@link Session#policy} reads back.  A new instance holds the library's
 * defaults (greedy); the factories set the usual combinations, and each setter returns this:
 *
 * <pre>{@code
 * PolicyParams.reset(1.0f, 0.3f, 0.6f, 32).seed(7).topP(0.95f)
 * }</pre>
 *
 * Getters share the setters' names, without an argument.
 */
public final class PolicyParams {
    private PolicyKind kind;
    private float temperature;
    private int topK;
    private float topP;
    private float minP;
    private long seed;
    private float tHigh;
    private float tLow;
    private float tau0;
    private int window;
    private String preset;
    private boolean resetState;
    private float presencePenalty;
    private float frequencyPenalty;
    private float repetitionPenalty;

    /** The library's defaults (reset_policy_params_init): greedy. */
    public PolicyParams() {
        reset_policy_params defaults = new reset_policy_params();
        try {
            ResetNative.reset_policy_params_init(defaults);
            read(defaults);
        } finally {
            defaults.delete();
        }
    }

    private PolicyParams(reset_policy_params p) {
        read(p);
    }

    /**
     * The values of a C struct the library filled in; the caller still deletes it.  Its preset
     * stays null: SWIG does not expose the member, and reset_session_get_policy writes NULL there.
     */
    static PolicyParams fromNative(reset_policy_params p) {
        return new PolicyParams(p);
    }

    private void read(reset_policy_params p) {
        kind = PolicyKind.of(p.getKind());
        temperature = p.getTemperature();
        topK = p.getTop_k();
        topP = p.getTop_p();
        minP = p.getMin_p();
        seed = p.getSeed();
        tHigh = p.getT_high();
        tLow = p.getT_low();
        tau0 = p.getTau0();
        window = p.getWindow();
        resetState = p.getReset_state() != 0;
        presencePenalty = p.getPresence_penalty();
        frequencyPenalty = p.getFrequency_penalty();
        repetitionPenalty = p.getRepetition_penalty();
    }

    /** Argmax of the raw logits. */
    public static PolicyParams greedy() {
        return new PolicyParams().kind(PolicyKind.GREEDY);
    }

    /** One temperature for every token. */
    public static PolicyParams fixed(float temperature) {
        return new PolicyParams().kind(PolicyKind.FIXED).temperature(temperature);
    }

    /**
     * ReSET: T_high or T_low per token from token and step entropy.  tLow or tau0 below 0
     * take the model's preset (the paper's table).
     */
    public static PolicyParams reset(float tHigh, float tLow, float tau0, int window) {
        return new PolicyParams().kind(PolicyKind.RESET).tHigh(tHigh).tLow(tLow).tau0(tau0).window(window);
    }

    /** The paper's ablation: ReSET with the step gate off (threshold = tau0). */
    public static PolicyParams entropy(float tHigh, float tLow, float tau0) {
        return new PolicyParams().kind(PolicyKind.ENTROPY).tHigh(tHigh).tLow(tLow).tau0(tau0);
    }

    public PolicyParams kind(PolicyKind kind) {
        this.kind = kind;
        return this;
    }

    public PolicyKind kind() {
        return kind;
    }

    /** FIXED: >= 0; up to 1e-6 means greedy. */
    public PolicyParams temperature(float temperature) {
        this.temperature = temperature;
        return this;
    }

    public float temperature() {
        return temperature;
    }

    /** >= 0; 0 = off. */
    public PolicyParams topK(int topK) {
        this.topK = topK;
        return this;
    }

    public int topK() {
        return topK;
    }

    /** (0, 1]; 1 = off. */
    public PolicyParams topP(float topP) {
        this.topP = topP;
        return this;
    }

    public float topP() {
        return topP;
    }

    /** [0, 1); 0 = off. */
    public PolicyParams minP(float minP) {
        this.minP = minP;
        return this;
    }

    public float minP() {
        return minP;
    }

    /** The Philox key: draws depend on (seed, sequence, step).  All 64 bits are used. */
    public PolicyParams seed(long seed) {
        this.seed = seed;
        return this;
    }

    public long seed() {
        return seed;
    }

    /** RESET/ENTROPY: the temperature at or above the threshold. */
    public PolicyParams tHigh(float tHigh) {
        this.tHigh = tHigh;
        return this;
    }

    public float tHigh() {
        return tHigh;
    }

    /** RESET/ENTROPY: the temperature below it; below 0 = the model's preset. */
    public PolicyParams tLow(float tLow) {
        this.tLow = tLow;
        return this;
    }

    public float tLow() {
        return tLow;
    }

    /** RESET/ENTROPY: the token-entropy threshold in nats; below 0 = the model's preset. */
    public PolicyParams tau0(float tau0) {
        this.tau0 = tau0;
        return this;
    }

    public float tau0() {
        return tau0;
    }

    /** RESET: the step estimator's window, >= 1. */
    public PolicyParams window(int window) {
        this.window = window;
        return this;
    }

    public int window() {
        return window;
    }

    /** A model of the paper's table ("Qwen3-8B", ...) whose T_low/tau0 to use; null = recognise the model. */
    public PolicyParams preset(String preset) {
        this.preset = preset;
        return this;
    }

    public String preset() {
        return preset;
    }

    /** Start a new generation when this policy is applied: clear the ReSET step state and the penalties' counts. */
    public PolicyParams resetState(boolean resetState) {
        this.resetState = resetState;
        return this;
    }

    public boolean resetState() {
        return resetState;
    }

    /**
     * [-2, 2]; 0 = off.  Subtracted once from the logit of every token the sequence has generated in
     * this generation (prompt tokens are not counted), before the temperature, truncation and draw.
     */
    public PolicyParams presencePenalty(float presencePenalty) {
        this.presencePenalty = presencePenalty;
        return this;
    }

    public float presencePenalty() {
        return presencePenalty;
    }

    /**
     * [-2, 2]; 0 = off.  Subtracted from a generated token's logit once per time the sequence has
     * generated it in this generation, so frequent tokens are lowered most.
     */
    public PolicyParams frequencyPenalty(float frequencyPenalty) {
        this.frequencyPenalty = frequencyPenalty;
        return this;
    }

    public float frequencyPenalty() {
        return frequencyPenalty;
    }

    /**
     * [0.1, 10]; 1 = off (0.3).  Every token of the sequence's context (prompt, earlier turns, generated
     * tokens) has its logit z divided by it when z > 0, multiplied otherwise, before the two penalties above.
     */
    public PolicyParams repetitionPenalty(float repetitionPenalty) {
        this.repetitionPenalty = repetitionPenalty;
        return this;
    }

    public float repetitionPenalty() {
        return repetitionPenalty;
    }

    /** A C struct with these values (and its own copy of the preset), which the caller deletes. */
    reset_policy_params toNative() throws ResetException {
        byte[] presetBytes = preset == null ? null : Text.utf8(preset);
        reset_policy_params p = new reset_policy_params();
        ResetNative.reset_policy_params_init(p);
        p.setKind(kind.code());
        p.setTemperature(temperature);
        p.setTop_k(topK);
        p.setTop_p(topP);
        p.setMin_p(minP);
        p.setSeed(seed);
        p.setT_high(tHigh);
        p.setT_low(tLow);
        p.setTau0(tau0);
        p.setWindow(window);
        p.setReset_state(resetState ? 1 : 0);
        p.setPresence_penalty(presencePenalty);
        p.setFrequency_penalty(frequencyPenalty);
        p.setRepetition_penalty(repetitionPenalty);
        if (presetBytes != null) {
            try {
                p.set_preset(presetBytes);
            } catch (RuntimeException e) { // a preset holding U+0000
                p.delete();
                throw e;
            }
        }
        return p;
    }
}
