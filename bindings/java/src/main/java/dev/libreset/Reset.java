package dev.libreset;

/** The loaded libreset's version, and the ABI check every entry point makes before its first call. */
public final class Reset {
    private static volatile boolean abiChecked;

    private Reset() {}

    /** The ABI major of the header this binding was generated from. */
    public static int abiMajor() {
        return reset_java_constants.RESET_JAVA_ABI_MAJOR;
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
     * would corrupt memory silently.
     *
     * @param version a version number as {@link #version()} gives it
     * @throws ResetException {@link Status#UNSUPPORTED}, naming both majors
     */
    public static void checkAbi(long version) throws ResetException {
        long major = version / 10000;
        if (major == abiMajor()) return;
        throw new ResetException(Status.UNSUPPORTED, String.format(
                "libreset %d.%d.%d has ABI major %d, but these bindings need %d",
                major, version / 100 % 100, version % 100, major, abiMajor()));
    }

    /** Checks the loaded library once; Model, Tokenizer and Policy call it before creating anything. */
    static void ensureAbi() throws ResetException {
        if (abiChecked) return;
        checkAbi(version());
        abiChecked = true;
    }
}
