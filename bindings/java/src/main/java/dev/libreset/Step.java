package dev.libreset;

import java.util.List;

/**
 * What one decode step produced for one sequence, with the signals the sampler used (ReSET
 * notation, reset-algorithm.md).
 *
 * @param sequence which sequence
 * @param token the chosen id, or -1 if the sequence had ended in an earlier step
 * @param end whether the sequence is done (it ended in this step, or before)
 * @param entropy H_t in nats, of softmax(raw logits)
 * @param stepEntropy the step estimate (0 for policies without one)
 * @param globalMean the mean of every earlier entropy
 * @param threshold the threshold tau (0 for policies without one)
 * @param temperature the temperature applied (0 = greedy)
 * @param stepIndex the reasoning step the token belongs to, 0 first
 * @param boundary whether a step boundary was crossed just before this token
 * @param uncertain whether the step was judged uncertain
 * @param text the token's text: complete characters only (bytes of a split one come with a
 *     later step); empty when the model has no tokenizer
 * @param logprob (0.3) log p(token), natural log, of softmax(raw logits): the model's own probability of
 *     the token, before the temperature, the truncation and the penalties; NaN when there is no token
 * @param topLogprobs (0.4) the session's {@link SessionOptions#topLogprobs} most likely tokens of the same
 *     raw softmax, most likely first (ties in id order), copied and unmodifiable; where the token is among
 *     them, its entry's logprob equals {@code logprob} exactly.  Empty when the session asked for none or
 *     there is no token
 * @param endReason why the sequence ended ({@link EndReason#NONE} while it generates; 0.5 adds
 *     {@link EndReason#STOP} and {@link EndReason#LENGTH})
 * @param stopIndex (0.5) with {@link EndReason#STOP}, the index of the matched string in
 *     {@link StopOptions#strings}, or -1 for a stop id; else -1
 */
public record Step(
        int sequence,
        int token,
        boolean end,
        float entropy,
        float stepEntropy,
        float globalMean,
        float threshold,
        float temperature,
        int stepIndex,
        boolean boundary,
        boolean uncertain,
        String text,
        float logprob,
        List<TokenLogprob> topLogprobs,
        EndReason endReason,
        int stopIndex) {}
