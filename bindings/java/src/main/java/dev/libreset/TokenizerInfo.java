package dev.libreset;

/**
 * What reset_tokenizer_get_info says about a tokenizer.
 *
 * @param kind "bpe" or "sentencepiece"
 * @param chatTemplate the recognised chat template; AUTO if none or not recognised
 */
public record TokenizerInfo(int vocabSize, int bosId, int[] eosIds, String kind, ChatTemplate chatTemplate,
        boolean hasChatTemplate) {}
