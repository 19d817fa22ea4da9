package dev.libreset;

/**
 * (0.4) One of a step's most likely tokens ({@link Step#topLogprobs()}), reset_token_logprob.
 *
 * @param token the id
 * @param logprob log p(token), natural log, of softmax(raw logits), as {@link Step#logprob()}
 *     (negative infinity for a logit of negative infinity)
 */
public record TokenLogprob(int token, float logprob) {}
