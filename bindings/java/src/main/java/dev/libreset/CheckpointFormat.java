package dev.libreset;

/** Where a model's NVFP4 weights come from (reset_checkpoint_format, 0.10): {@link ModelInfo#checkpointFormat()}. */
public enum CheckpointFormat {
    /** BF16/F16/F32 tensors: held in BF16, or quantized to NVFP4 on load. */
    UNQUANTIZED(reset_checkpoint_format.RESET_CHECKPOINT_UNQUANTIZED),
    /** An NVIDIA ModelOpt NVFP4 export. */
    MODELOPT(reset_checkpoint_format.RESET_CHECKPOINT_MODELOPT),
    /** An llm-compressor NVFP4 export (compressed-tensors "nvfp4-pack-quantized"). */
    COMPRESSED_TENSORS(reset_checkpoint_format.RESET_CHECKPOINT_COMPRESSED_TENSORS),
    /** A value this binding does not know, which a newer libreset of the same ABI major may report. */
    UNKNOWN(-1);

    private final int code;

    CheckpointFormat(int code) {
        this.code = code;
    }

    /** The C enum's value. */
    public int code() {
        return code;
    }

    static CheckpointFormat of(int code) {
        for (CheckpointFormat value : values()) {
            if (value.code == code) return value;
        }
        return UNKNOWN;
    }
}
