package dev.libreset;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;

/**
 * A decoding session: KV cache and sampler state on a {@link Model}.
 *
 * <pre>{@code
 * session.setPolicy(PolicyParams.reset(1.0f, 0.3f, 0.6f, 32));
 * session.prefill(ids);
 * for (String text : session.stream(64)) System.out.print(text);
 * }</pre>
 *
 * <p>Memory: the session owns its C handle and keeps its model reachable; {@link #close()}
 * frees it.  Ids, logits, step texts and top logprobs are copied across the boundary.
 *
 * <p>Threads: one thread at a time, except {@link #cancel()}, which any thread may call, even
 * while another closes the session.
 */
public final class Session implements AutoCloseable {
    /**
     * The most bytes {@link #saveSequenceToBytes} returns: the JVM refuses arrays within a few elements of
     * {@link Integer#MAX_VALUE} ("Requested array size exceeds VM limit"), and the JDK's own growable arrays
     * stop 8 short of it.
     */
    static final int MAX_STATE_BYTES = Integer.MAX_VALUE - 8;

    private final Model model; // keeps the model reachable while the session is
    private final int sequences;
    private final Cleaner.Cleanable cleanable;
    /** Orders close() against cancel() from another thread, so a cancel never reaches a freed session. */
    private final Object lock = new Object();
    private volatile long handle;

    Session(Model model, SessionOptions sessionOptions) throws ResetException {
        reset_session_options options = sessionOptions.toNative();
        long[] out = new long[1];
        try {
            ResetNative.reset_session_create(model.handle(), options, out);
        } finally {
            options.delete();
            Reference.reachabilityFence(model); // see Handles
        }
        long raw = out[0];
        this.model = model;
        this.sequences = sessionOptions.sequences();
        this.handle = raw;
        this.cleanable = Handles.CLEANER.register(this, () -> ResetNative.reset_session_free(raw));
    }

    private long handle() {
        long h = handle;
        if (h == 0) throw new IllegalStateException("the session is closed");
        return h;
    }

    /** The model this session decodes. */
    public Model model() {
        return model;
    }

    /** Replaces the policy; the ReSET step state and the penalties' counts are kept unless params.resetState(). */
    public void setPolicy(PolicyParams params) throws ResetException {
        reset_policy_params p = params.toNative();
        try {
            ResetNative.reset_set_policy(handle(), p);
        } finally {
            p.delete();
            Reference.reachabilityFence(this); // see Handles
        }
    }

    /**
     * The policy in force: the model's own sampling (generation_config.json) until
     * {@link #setPolicy} is called, then the last one set.  tLow and tau0 come resolved (a
     * preset's values when one was named or recognised), preset is null and resetState false,
     * so {@code setPolicy} of what this returns changes nothing: a caller overriding one
     * parameter of the model's sampling gets, changes it and sets.
     */
    public PolicyParams policy() throws ResetException {
        reset_policy_params p = new reset_policy_params();
        try {
            // init sets struct_size, which bounds what the library writes.
            ResetNative.reset_policy_params_init(p);
            ResetNative.reset_session_get_policy(handle(), p);
            return PolicyParams.fromNative(p);
        } finally {
            p.delete();
            Reference.reachabilityFence(this);
        }
    }

    /**
     * (0.9) The options this session was created with (reset_session_get_options): maxContext resolved (never
     * 0; {@link #maxContext()}), the rest as given, so {@link Model#newSession(SessionOptions)} of what this
     * returns opens a session like this one.
     */
    public SessionOptions options() throws ResetException {
        reset_session_options o = new reset_session_options();
        try {
            // init sets struct_size, which bounds what the library writes.
            ResetNative.reset_session_options_init(o);
            ResetNative.reset_session_get_options(handle(), o);
            return SessionOptions.fromNative(o);
        } finally {
            o.delete();
            Reference.reachabilityFence(this);
        }
    }

    /**
     * (0.5) Sets the stop conditions of every sequence, from the next step on (reset_set_stop): they
     * replace the ones set before and stay through {@link #reset()} and {@link #setPolicy}.  The session
     * copies the strings and ids.  On an error the conditions in force are unchanged.
     *
     * @param options the conditions; null removes them all, as {@link #clearStop()} does
     * @throws ResetException INVALID_ARGUMENT (an empty string, one over 256 bytes, more strings or ids
     *     than reset.h allows, a negative maxTokens), BAD_UTF8 (a string holding an unpaired surrogate),
     *     OUT_OF_RANGE (an id outside the vocabulary), UNSUPPORTED (strings on a model without a tokenizer)
     * @throws IllegalArgumentException for a string holding U+0000, which C would read as a shorter one
     */
    public void setStop(StopOptions options) throws ResetException {
        if (options == null) {
            clearStop();
            return;
        }
        reset_stop_options o = options.toNative();
        try {
            ResetNative.reset_set_stop(handle(), o);
        } finally {
            o.delete();
            Reference.reachabilityFence(this);
        }
    }

    /** (0.5) Removes every stop condition (reset_set_stop with NULL options). */
    public void clearStop() throws ResetException {
        try {
            ResetNative.reset_set_stop(handle(), null);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * (0.6) Sets the logit bias of every sequence, from the next step on (reset_set_logit_bias; OpenAI's and
     * vLLM's logit_bias, llama.cpp's --logit-bias), replacing the one set before: {@code biases[i]} is added
     * to the logit of {@code tokens[i]}.  A bias is finite in [-100, 100], or {@link Float#NEGATIVE_INFINITY}
     * to ban the token (-100 makes one all but impossible, +100 all but certain); empty arrays remove the
     * bias, as {@link #clearLogitBias()} does.  The session copies the entries (at most 1024).  A listed
     * token's logit z becomes z + bias (one float addition) after the repetition penalties and before the
     * temperature, the truncation and the draw, greedy included; a step's entropy, logprob and top logprobs
     * and the ReSET decision still see the raw logits, as {@link #logits} does.  The bias stays through
     * {@link #reset()}, {@link #truncate} and {@link #setPolicy}.  On an error the bias in force is unchanged.
     *
     * @param tokens the ids, each in [0, vocabulary size) and listed once
     * @param biases the bias of each id, as many as there are ids
     * @throws ResetException INVALID_ARGUMENT (more than 1024 entries, a bias that is NaN, +infinity or
     *     outside [-100, 100] and not -infinity, a token listed twice, every token of the vocabulary banned),
     *     OUT_OF_RANGE (a token outside the vocabulary)
     * @throws IllegalArgumentException for arrays of different lengths
     */
    public void setLogitBias(int[] tokens, float[] biases) throws ResetException {
        try {
            LogitBias.set(tokens, biases,
                    (entries, count) -> ResetNative.reset_set_logit_bias(handle(), entries, count));
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** (0.6) Removes the logit bias (reset_set_logit_bias with no entries). */
    public void clearLogitBias() throws ResetException {
        try {
            ResetNative.reset_set_logit_bias(handle(), 0, 0);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * (0.5) The text a sequence has generated that no step has reported yet, held back because it may
     * begin a stop string ("" when none, and once the sequence has ended): reset_session_held_text.  A
     * caller that ends a generation itself (its own budget, a user's interrupt) or prefills more of it (a
     * reasoning budget's "</think>") shows this first, because the next prefill of the sequence forgets
     * it, as {@link #reset()} does.  The text is copied.
     *
     * @throws ResetException OUT_OF_RANGE (sequence)
     */
    public String heldText(int sequence) throws ResetException {
        // Held text is shorter than the longest stop string (256 bytes), so one call is the rule; a longer
        // one (a newer library's) is read again with a buffer of its length.
        byte[] buffer = new byte[256];
        long[] length = new long[1];
        try {
            while (true) {
                ResetNative.reset_java_held_text(handle(), sequence, buffer, length);
                if (length[0] <= buffer.length) return Text.string(Arrays.copyOf(buffer, (int) length[0]));
                buffer = new byte[Math.toIntExact(length[0])];
            }
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Appends prompt tokens to every sequence and computes the next logits.
     *
     * @throws ResetException OUT_OF_RANGE, CONTEXT_OVERFLOW, CANCELLED (the session is unchanged)
     */
    public void prefill(int[] ids) throws ResetException {
        try {
            ResetNative.reset_prefill(handle(), ids);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Appends prompt tokens to one sequence only, after {@link #prefill} gave every sequence the shared
     * prompt: the others are left as they were, and an ended sequence generates again.
     *
     * @throws ResetException OUT_OF_RANGE (sequence or id), CONTEXT_OVERFLOW, STATE (no prefill yet),
     *     CANCELLED (the session is unchanged)
     */
    public void prefillSequence(int sequence, int[] ids) throws ResetException {
        try {
            ResetNative.reset_prefill_sequence(handle(), sequence, ids);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** The raw logits of a sequence's last position (a copy, vocab_size floats). */
    public float[] logits(int sequence) throws ResetException {
        float[] out = new float[model.vocabSize()];
        try {
            ResetNative.reset_session_logits(handle(), sequence, out);
        } finally {
            Reference.reachabilityFence(this);
        }
        return out;
    }

    /** The number of tokens a sequence holds (prompt and generated); -1 for a bad index. */
    public int length(int sequence) {
        try {
            return ResetNative.reset_session_length(handle(), sequence);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** The number of tokens each sequence can hold: the session's max context, 0 resolved to
     *  min(model maximum, 4096). */
    public int maxContext() {
        try {
            return ResetNative.reset_session_max_context(handle());
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Forgets every token of every sequence; the policy stays. */
    public void reset() throws ResetException {
        try {
            ResetNative.reset_session_reset(handle());
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * (0.6) Keeps the first {@code length} tokens of every sequence and forgets the rest (reset_truncate;
     * llama.cpp's llama_memory_seq_rm).  A caller that edits, regenerates or re-renders a conversation cuts
     * back to the longest prefix the session shares with its new prompt ({@link #tokens}) and prefills only
     * the rest.  A sequence cut back holds what a new session with this one's policy and stop conditions
     * holds after a {@link #prefill} of those tokens, but has no logits: its sampler starts over (so a seeded
     * answer regenerated from the same prompt comes out the same), its held text is dropped, it no longer
     * counts as ended, and {@link #step()} and {@link #logits} throw {@link Status#STATE} until it is
     * prefilled with at least one token.  To regenerate from the very end of a prompt, cut one token less
     * and prefill that token again.  A sequence that holds exactly {@code length} tokens is left as it is,
     * logits included.  Nothing is computed.  {@code truncate(0)} is {@link #reset()} but for a pending
     * cancel request, which stays.
     *
     * @throws ResetException OUT_OF_RANGE (length negative, or more tokens than a sequence holds), STATE (a
     *     session stopped by a device failure); the session is unchanged
     */
    public void truncate(int length) throws ResetException {
        try {
            ResetNative.reset_truncate(handle(), length);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * (0.6) {@link #truncate} for one sequence (reset_truncate_sequence); the others are left exactly as
     * they were.  A sequence cut back is prefilled again with {@link #prefillSequence}.
     *
     * @throws ResetException OUT_OF_RANGE (sequence, or length negative or more tokens than the sequence
     *     holds), STATE (a session stopped by a device failure); the session is unchanged
     */
    public void truncateSequence(int sequence, int length) throws ResetException {
        try {
            ResetNative.reset_truncate_sequence(handle(), sequence, length);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * (0.7) Makes sequence {@code to} a copy of sequence {@code from}, which is left as it is
     * (reset_copy_sequence; llama.cpp's llama_memory_seq_cp): {@code to} takes {@code from}'s tokens, KV cache,
     * logits, sampler state (the count of drawn tokens included), held text, whether it has ended and its
     * maxTokens count, and continues as {@code from} would, except that its draws are keyed by its own index:
     * a sampled copy explores another continuation of the same state.  No forward pass runs.
     * {@code from == to} does nothing.
     *
     * @throws ResetException OUT_OF_RANGE (from or to outside [0, sequences)), STATE (a session stopped by a
     *     device failure); the session is unchanged
     */
    public void copySequence(int from, int to) throws ResetException {
        try {
            ResetNative.reset_copy_sequence(handle(), from, to);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * (0.8) Writes sequence {@code sequence}'s state to the file at {@code path} (reset_save_sequence; llama.cpp's
     * llama_state_seq_save_file), for {@link #loadSequence} to give to a sequence of this or another session of
     * the same model, in this process or another: everything {@link #copySequence} copies.  The session's
     * policy, stop conditions and logit bias are not saved.  The file is a safetensors file, written beside
     * {@code path} and renamed onto it, so a failed save leaves what {@code path} held as it was.  The session
     * is unchanged whatever the outcome.
     *
     * @param path the file's path, as UTF-8
     * @throws ResetException IO (the file cannot be written; the message names it and the system's reason),
     *     OUT_OF_RANGE (sequence outside [0, sequences)), STATE (a session stopped by a device failure),
     *     BAD_UTF8 (a path holding an unpaired surrogate)
     * @throws IllegalArgumentException for a path holding U+0000, which C would read as a shorter one
     */
    public void saveSequence(int sequence, String path) throws ResetException {
        byte[] utf8Path = Text.utf8(path);
        try {
            ResetNative.reset_save_sequence(handle(), sequence, utf8Path);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * (0.8) Makes sequence {@code sequence} the one {@link #saveSequence} saved in the file at {@code path}
     * (reset_load_sequence): it forgets what it held and continues as the saved sequence would have, except
     * that its draws are keyed by its own index (as after {@link #copySequence}).  This session's policy, stop
     * conditions and logit bias apply from the next step.  The file must come from the same model, loaded with
     * the same weights format, and from a session with the same KV cache type ({@link SessionOptions#kvCache(KvCache)},
     * {@link #options} tells a session's); the backend may differ.  On an error the session's sequences are unchanged.
     *
     * @param path the file's path, as UTF-8
     * @throws ResetException IO (missing or unreadable), FORMAT (not a libreset sequence file, or a malformed
     *     or truncated one), UNSUPPORTED (a newer file format), SHAPE (another model, weights format or KV
     *     cache type; the message gives both), CONTEXT_OVERFLOW (longer than {@link #maxContext}), OUT_OF_RANGE
     *     (sequence outside [0, sequences)), STATE (a session stopped by a device failure), BAD_UTF8 (a path
     *     holding an unpaired surrogate)
     * @throws IllegalArgumentException for a path holding U+0000, which C would read as a shorter one
     */
    public void loadSequence(int sequence, String path) throws ResetException {
        byte[] utf8Path = Text.utf8(path);
        try {
            ResetNative.reset_load_sequence(handle(), sequence, utf8Path);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * (0.9) {@link #saveSequence} into memory (reset_save_sequence_to_memory; llama.cpp's
     * llama_state_seq_get_data): the bytes {@link #saveSequence} would write to its file, for an application
     * that keeps states in its own store, sends them to another process, or cannot afford the file's fsync.
     * {@link #loadSequenceFromBytes} gives them to a sequence of this or another session of the same model.
     * The library is asked for the size first, then fills an array of that length.  The session is unchanged
     * whatever the outcome.
     *
     * @return a new array holding the state
     * @throws ResetException OUT_OF_RANGE (sequence outside [0, sequences)), STATE (a session stopped by a
     *     device failure), UNSUPPORTED (a state of more bytes than a Java array holds, {@code
     *     Integer.MAX_VALUE - 8}: {@link #saveSequence} writes it to a file instead)
     */
    public byte[] saveSequenceToBytes(int sequence) throws ResetException {
        long[] size = new long[1];
        try {
            // reset.h's idiom: the first call, with no room (null), asks the size; the second fills that many
            // bytes (the size holds until the sequence changes, which nothing here does).
            byte[] state = null;
            while (true) {
                try {
                    ResetNative.reset_save_sequence_to_memory(handle(), sequence, state, size);
                    if (state == null) return new byte[0];
                    return size[0] == state.length ? state : Arrays.copyOf(state, stateLength(sequence, size[0]));
                } catch (ResetException e) {
                    if (e.getStatus() != Status.BUFFER_TOO_SMALL || state != null && size[0] <= state.length) throw e;
                    state = new byte[stateLength(sequence, size[0])];
                }
            }
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * The length of an array holding a sequence's state of {@code size} bytes (size_t, so a negative long is
     * above 2^63).
     *
     * @throws ResetException UNSUPPORTED when no Java array holds that many bytes
     */
    static int stateLength(int sequence, long size) throws ResetException {
        if (size < 0 || size > MAX_STATE_BYTES) {
            throw new ResetException(Status.UNSUPPORTED, "sequence " + sequence + "'s state takes "
                    + Long.toUnsignedString(size) + " bytes, more than a Java array holds (" + MAX_STATE_BYTES
                    + "): save it to a file with saveSequence");
        }
        return (int) size;
    }

    /**
     * (0.9) {@link #loadSequence} from memory (reset_load_sequence_from_memory; llama.cpp's
     * llama_state_seq_set_data): {@code data} is what {@link #saveSequenceToBytes} returned, or a sequence
     * file's contents, read during the call only.  The same checks, outcome and errors as
     * {@link #loadSequence}, except that there is no file (no IO) and messages name the bytes
     * {@code '<memory>'}; an empty or truncated array is FORMAT.  On an error the session's sequences are
     * unchanged.
     *
     * @throws ResetException FORMAT (not a libreset sequence's state, or a malformed or truncated one),
     *     UNSUPPORTED (a newer format), SHAPE (another model, weights format or KV cache type; the message
     *     gives both), CONTEXT_OVERFLOW (longer than {@link #maxContext}), OUT_OF_RANGE (sequence outside [0,
     *     sequences)), STATE (a session stopped by a device failure)
     * @throws NullPointerException for null data
     */
    public void loadSequenceFromBytes(int sequence, byte[] data) throws ResetException {
        Objects.requireNonNull(data, "data");
        try {
            ResetNative.reset_load_sequence_from_memory(handle(), sequence, data);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * (0.6) The ids of a sequence's context, in order, copied (reset_session_tokens): every prompt token and
     * every generated token that entered the context, {@link #length} of them (an end-of-generation id or a
     * stop id that ended the sequence is not among them).
     *
     * @throws ResetException OUT_OF_RANGE (sequence)
     */
    public int[] tokens(int sequence) throws ResetException {
        long[] n = new long[1];
        try {
            // reset.h's idiom: the first call, with no room (null), asks the size; the second reads that many.
            int[] ids = null;
            while (true) {
                try {
                    ResetNative.reset_session_tokens(handle(), sequence, ids, n);
                    return ids == null ? new int[0] : Arrays.copyOf(ids, Math.toIntExact(n[0]));
                } catch (ResetException e) {
                    if (e.getStatus() != Status.BUFFER_TOO_SMALL || ids != null && n[0] <= ids.length) throw e;
                    ids = new int[Math.toIntExact(n[0])];
                }
            }
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Stops the running (or, if none runs, the next) prefill or step, which then throws
     * {@link Status#CANCELLED} and leaves the session as it was before it.  Safe from any
     * thread; never blocks on the decode.  Does nothing on a closed session.
     */
    public void cancel() {
        synchronized (lock) {
            if (handle == 0) return;
            try {
                ResetNative.reset_session_cancel(handle);
            } catch (ResetException e) {
                throw new UncheckedResetException(e);
            } finally {
                Reference.reachabilityFence(this);
            }
        }
    }

    /** One decode step for every sequence: entry i of the list is sequence i. */
    public List<Step> step() throws ResetException {
        reset_step steps = ResetNative.new_reset_step_array(sequences);
        try {
            ResetNative.reset_step_init(steps, sequences);
            ResetNative.reset_decode_step(handle(), steps, sequences, new int[1]);
            List<Step> out = new ArrayList<>(sequences);
            for (int i = 0; i < sequences; i++) {
                reset_step s = ResetNative.reset_step_array_getitem(steps, i);
                try {
                    // The text and the top logprobs live in the session until its next call: copy them now.
                    byte[] text = new byte[Math.toIntExact(s.getText_len())];
                    s.copy_text(text);
                    out.add(new Step(s.getSequence(), s.getToken(), s.getEnd_of_generation() != 0, s.getEntropy(),
                            s.getStep_entropy(), s.getGlobal_mean(), s.getThreshold(), s.getTemperature(),
                            s.getStep_index(), s.getBoundary() != 0, s.getUncertain() != 0, Text.string(text),
                            s.getLogprob(), topLogprobs(s), EndReason.of(s.getEnd_reason()), s.getStop_index()));
                } finally {
                    s.delete();
                }
            }
            return out;
        } finally {
            ResetNative.delete_reset_step_array(steps);
            Reference.reachabilityFence(this); // also while the step texts, in the session, are copied
        }
    }

    /** A step's top logprobs, copied (none when the session asked for none or there is no token). */
    private static List<TokenLogprob> topLogprobs(reset_step s) {
        int n = s.getTop_logprob_count();
        if (n <= 0) return List.of();
        int[] tokens = new int[n];
        float[] logprobs = new float[n];
        s.copy_top_logprobs(tokens, logprobs);
        List<TokenLogprob> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) out.add(new TokenLogprob(tokens[i], logprobs[i]));
        return Collections.unmodifiableList(out);
    }

    /**
     * Sequence 0's steps, up to maxTokens, until it ends.  Each iterator decodes on demand from
     * where the session is; a failing step ends it with an {@link UncheckedResetException}
     * whose cause is the {@link ResetException}.
     */
    public Iterable<Step> generate(int maxTokens) {
        return () -> new Steps(maxTokens);
    }

    /** The texts of {@link #generate}'s steps, as they complete. */
    public Iterable<String> stream(int maxTokens) {
        return () -> {
            Steps steps = new Steps(maxTokens);
            return new Iterator<String>() {
                @Override
                public boolean hasNext() {
                    return steps.hasNext();
                }

                @Override
                public String next() {
                    return steps.next().text();
                }
            };
        };
    }

    private final class Steps implements Iterator<Step> {
        private int left;
        private boolean done;
        private Step pending;

        Steps(int maxTokens) {
            this.left = maxTokens;
        }

        @Override
        public boolean hasNext() {
            if (pending != null) return true;
            if (done || left <= 0) return false;
            left--;
            Step s;
            try {
                s = step().get(0);
            } catch (ResetException e) {
                done = true;
                throw new UncheckedResetException(e);
            }
            done = s.end();
            if (s.token() < 0) return false; // it had ended before this step
            pending = s;
            return true;
        }

        @Override
        public Step next() {
            if (!hasNext()) throw new NoSuchElementException();
            Step s = pending;
            pending = null;
            return s;
        }
    }

    /** Frees the session.  Idempotent. */
    @Override
    public void close() {
        synchronized (lock) {
            handle = 0;
            cleanable.clean();
        }
    }
}
