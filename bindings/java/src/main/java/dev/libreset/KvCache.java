package dev.libreset;

/**
 * How a session stores its KV cache (reset_kv_cache), chosen with {@link SessionOptions#kvCache(KvCache)} and
 * read back with {@link Session#options()}.  Both backends round keys and values to it as they are written, so
 * a CPU session computes with the same cache values a CUDA session reads.  A sequence file
 * ({@link Session#saveSequence}) loads only into a session with the same type.
 */
public enum KvCache {
    /** BF16 keys and values (round to nearest even): the library's default. */
    BF16(reset_kv_cache.RESET_KV_CACHE_BF16),
    /**
     * FP8 E4M3 (round to nearest even, saturating at +-448): half the bytes of BF16, so long reasoning
     * contexts decode faster and fit in less memory, at a coarser rounding of every key and value.
     */
    FP8(reset_kv_cache.RESET_KV_CACHE_FP8),
    /**
     * The CPU backend only: FP32, unrounded (the reference without cache rounding).  A CUDA model refuses
     * it with {@link Status#UNSUPPORTED}.
     */
    FP32(reset_kv_cache.RESET_KV_CACHE_FP32),
    /** (0.9) A value this binding does not know, which a newer libreset of the same ABI major may report
     *  ({@link Session#options()}); passed to the library it is refused (RESET_ERR_INVALID_ARGUMENT). */
    UNKNOWN(-1);

    private final int code;

    KvCache(int code) {
        this.code = code;
    }

    /** The C enum's value. */
    public int code() {
        return code;
    }

    static KvCache of(int code) {
        for (KvCache value : values()) {
            if (value.code == code) return value;
        }
        return UNKNOWN;
    }
}
