package dev.libreset;

/**
 * What reset_model_get_info says about a loaded model (shapes, resolved formats, memory).
 * {@code checkpointFormat} (0.10) is where its NVFP4 weights come from: the checkpoint's format, not the
 * weights' (a BF16 checkpoint loaded as NVFP4 is {@link CheckpointFormat#UNQUANTIZED}).
 * {@code kvCacheScales} (0.10) is whether the checkpoint carries calibrated FP8 KV-cache scales (llm-compressor's
 * kv_cache_scheme, ModelOpt's FP8 KV cache), with which a {@link KvCache#FP8} cache stores e4m3(x / scale); false:
 * scale 1.
 */
public record ModelInfo(
        String architecture,
        int layers,
        int hiddenSize,
        int intermediateSize,
        int heads,
        int kvHeads,
        int headDim,
        int vocabSize,
        int maxPositionEmbeddings,
        boolean tiedEmbeddings,
        Weights weights,
        Backend backend,
        boolean lmHeadNvfp4,
        long parameters,
        long weightBytes,
        long hostBytes,
        long deviceBytes,
        int[] eosIds,
        int bosId,
        CheckpointFormat checkpointFormat,
        boolean kvCacheScales) {}
