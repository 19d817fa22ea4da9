package dev.libreset;

import java.lang.ref.Cleaner;

/**
 * Frees the C handle of an object that became unreachable without close().  close() is the
 * contract; this only keeps a forgotten handle from living as long as the process.  Each
 * registered action captures the handle's value, never its owner (an action that held its
 * owner would keep it reachable forever).
 */
final class Handles {
    static final Cleaner CLEANER = Cleaner.create();

    private Handles() {}
}
