package dev.libreset;

/** The loaded libreset's version, and the ABI check every entry point makes before its first call. */
public final class Reset {
    /**
     * The oldest minor of {@link #abiMajor()} this binding runs on: the one it was written for (minors only
     * append functions and struct fields; 0.2 appended the penalties to reset_policy_params, 0.3 logprob to
     * reset_step and reset_decision, repetition_penalty to reset_policy_params and reset_policy_add_context,
     * 0.4 top_logprobs to reset_session_options and reset_step, 0.5 reset_set_stop,
     * reset_session_held_text and stop_index to reset_step, 0.6 reset_truncate, reset_truncate_sequence,
     * reset_session_tokens and reset_set_logit_bias, 0.7 reset_copy_sequence and reset_policy_set_logit_bias,
     * 0.8 reset_save_sequence and reset_load_sequence, 0.9 reset_save_sequence_to_memory,
     * reset_load_sequence_from_memory and reset_session_get_options, 0.10 checkpoint_format and
     * kv_cache_scales to reset_model_info, 0.11 tools_json and tool_calls_json to reset_chat_options, 0.12
     * file_access to reset_model_options).
     */
    private static final int ABI_MINOR = 12;

    private static volatile boolean abiChecked;

    private Reset() {}

    /** The ABI major of the header this binding was generated from. */
    public static int abiMajor() {
        return reset_java_constants.RESET_JAVA_ABI_MAJOR;
    }

    /** The oldest ABI minor this binding runs on. */
    public static int abiMinor() {
        return ABI_MINOR;
    }

    /** The loaded library's version number, major * 10000 + minor * 100 + patch. */
    public static long version() {
        return ResetNative.reset_version();
    }

    /** The loaded library's version string, e.g. {@code "0.1.0 (cpu)"}. */
    public static String versionString() {
        return Text.string(ResetNative.reset_version_string());
    }

    /**
     * Refuses a library version of another ABI major: its structs may differ, and calling it
     * would corrupt memory silently.  Refuses an older minor too: that library lacks functions or
     * fields this binding uses, and would fail its calls with errors that name no version (a
     * reset_policy_params larger than it knows is a bad struct_size to it).
     *
     * @param version a version number as {@link #version()} gives it
     * @throws ResetException {@link Status#UNSUPPORTED}, naming both versions
     */
    public static void checkAbi(long version) throws ResetException {
        long major = version / 10000;
        long minor = version / 100 % 100;
        if (major != abiMajor()) {
            throw new ResetException(Status.UNSUPPORTED, String.format(
                    "libreset %d.%d.%d has ABI major %d, but these bindings need %d",
                    major, minor, version % 100, major, abiMajor()));
        }
        if (minor < abiMinor()) {
            throw new ResetException(Status.UNSUPPORTED, String.format(
                    "libreset %d.%d.%d is older than these bindings need (%d.%d or newer): "
                            + "it lacks functions or fields they use",
                    major, minor, version % 100, abiMajor(), abiMinor()));
        }
    }

    /** Checks the loaded library once; Model, Tokenizer and Policy call it before creating anything. */
    static void ensureAbi() throws ResetException {
        if (abiChecked) return;
        checkAbi(version());
        abiChecked = true;
    }
}
