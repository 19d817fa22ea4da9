package dev.libreset;

/**
 * What a standalone {@link Policy} decided for one token (reset_decision).
 *
 * @param temperature T applied: T_high or T_low (RESET/ENTROPY), the fixed T, 0 = greedy
 * @param entropy H_t in nats, of softmax(raw logits)
 * @param stepEntropy the hybrid step estimate (0 for GREEDY/FIXED)
 * @param globalMean the mean of every earlier entropy
 * @param threshold tau: the step estimate in an uncertain step, else tau0
 * @param stepIndex the reasoning step this token belongs to, 0 first
 * @param boundary whether a step boundary was crossed just before this token
 * @param uncertain whether the step estimate exceeds the global mean (RESET only)
 * @param logprob (0.3) {@link Policy#sample}: the drawn token's log p under softmax(raw logits), as
 *     {@link Step#logprob()}; NaN from {@link Policy#decide}, which draws nothing
 */
public record Decision(
        float temperature,
        float entropy,
        float stepEntropy,
        float globalMean,
        float threshold,
        int stepIndex,
        boolean boundary,
        boolean uncertain,
        float logprob) {

    static Decision of(reset_decision d) {
        return new Decision(d.getTemperature(), d.getEntropy(), d.getStep_entropy(), d.getGlobal_mean(),
                d.getThreshold(), d.getStep_index(), d.getBoundary() != 0, d.getUncertain() != 0, d.getLogprob());
    }
}
