package dev.libreset;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Loads libreset and the binding's JNI glue ({@code libreset_jni.so}, which links libreset).
 *
 * <p>libreset itself is looked for, in order, at the path in the system property
 * {@code reset.library} (e.g. {@code -Dreset.library=/opt/reset/lib/libreset.so}), at the path
 * in the environment variable {@code RESET_LIBRARY}, then in each directory of
 * {@code java.library.path}; when none of these has it, the glue's own dependency is left to the
 * system's dynamic loader ({@code LD_LIBRARY_PATH}, the cache). Loading libreset first by path
 * is what lets the glue find it: the dynamic loader reuses a library already loaded under the
 * same soname ({@code libreset.so.0}).
 *
 * <p>The glue is loaded from the system property {@code reset.jni.library} if set, else from
 * the directory libreset was found in, else by name from {@code java.library.path}.
 *
 * <p>Every class of the binding calls {@link #load()} before its first native call; calling it
 * again does nothing. A failure is an {@link UnsatisfiedLinkError} saying what was searched.
 */
public final class Loader {
    private static final String[] LIBRESET_NAMES = {"libreset.so.0", "libreset.so"};
    private static final String GLUE_NAME = "reset_jni";
    private static boolean loaded;

    private Loader() {}

    /** Loads libreset and the JNI glue once. */
    public static synchronized void load() {
        if (loaded) return;
        Path libreset = findLibreset();
        if (libreset != null) loadPath(libreset, "libreset");
        String glue = System.getProperty("reset.jni.library");
        if (glue != null) {
            loadPath(Paths.get(glue), "the JNI glue (reset.jni.library)");
        } else {
            Path beside = libreset == null ? null : libreset.resolveSibling(System.mapLibraryName(GLUE_NAME));
            if (beside != null && Files.isRegularFile(beside)) {
                loadPath(beside, "the JNI glue");
            } else {
                try {
                    System.loadLibrary(GLUE_NAME);
                } catch (UnsatisfiedLinkError e) {
                    throw chained(new UnsatisfiedLinkError("cannot load the JNI glue " + System.mapLibraryName(GLUE_NAME)
                            + " from java.library.path=" + System.getProperty("java.library.path")
                            + " (set -Dreset.jni.library=/path/" + System.mapLibraryName(GLUE_NAME)
                            + "; libreset itself was " + (libreset == null
                                    ? "not found by path, so it must be on LD_LIBRARY_PATH: set -Dreset.library=/path/libreset.so"
                                    : "loaded from " + libreset) + ")"), e);
                }
            }
        }
        loaded = true;
    }

    private static Path findLibreset() {
        String property = System.getProperty("reset.library");
        if (property != null) return existing(Paths.get(property), "the system property reset.library");
        String environment = System.getenv("RESET_LIBRARY");
        if (environment != null && !environment.isEmpty()) {
            return existing(Paths.get(environment), "the environment variable RESET_LIBRARY");
        }
        String searchPath = System.getProperty("java.library.path", "");
        for (String directory : searchPath.split(File.pathSeparator)) {
            if (directory.isEmpty()) continue;
            for (String name : LIBRESET_NAMES) {
                Path candidate = Paths.get(directory, name);
                if (Files.isRegularFile(candidate)) return candidate.toAbsolutePath();
            }
        }
        return null;
    }

    /** A path someone named explicitly must exist: a typo should not fall back silently. */
    private static Path existing(Path path, String source) {
        if (!Files.isRegularFile(path)) {
            throw new UnsatisfiedLinkError("libreset not found at " + path + " (from " + source + ")");
        }
        return path.toAbsolutePath();
    }

    private static void loadPath(Path path, String what) {
        try {
            System.load(path.toAbsolutePath().toString());
        } catch (UnsatisfiedLinkError e) {
            throw chained(new UnsatisfiedLinkError("cannot load " + what + " from " + path + ": " + e.getMessage()), e);
        }
    }

    private static UnsatisfiedLinkError chained(UnsatisfiedLinkError error, Throwable cause) {
        error.initCause(cause);
        return error;
    }
}
