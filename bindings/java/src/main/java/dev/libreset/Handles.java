package dev.libreset;

import java.lang.ref.Cleaner;

/**
 * Frees the C handle of an object that became unreachable without close().  close() is the
 * contract; this only keeps a forgotten handle from living as long as the process.  Each
 * registered action captures the handle's value, never its owner (an action that held its
 * owner would keep it reachable forever).
 *
 * <p>So an owner may become unreachable, and be cleaned, as soon as its last field is read: in
 * the middle of a native call on the handle it just read, which then uses freed memory.  Every
 * method that hands a handle to native code therefore ends with
 * {@code finally { Reference.reachabilityFence(this); }} (and fences any other owner whose
 * handle it passes), so the owner outlives the call.
 */
final class Handles {
    static final Cleaner CLEANER = Cleaner.create();

    private Handles() {}
}
