package dev.libreset;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * (0.5) reset_stop_options: when a sequence stops before an end-of-generation id, as vLLM's stop,
 * stop_token_ids, max_tokens and include_stop_str_in_output do ({@link Session#setStop}).  The defaults
 * stop nothing.  reset.h has the limits: 16 strings of 1..256 bytes of UTF-8, 256 ids.
 */
public final class StopOptions {
    private List<String> strings = List.of();
    private int[] ids = new int[0];
    private int maxTokens;
    private boolean includeStopString;
    private boolean ignoreEos;

    /**
     * Stop strings.  A sequence ends ({@link EndReason#STOP}, with {@link Step#stopIndex()} the string's
     * index here) at the first token after which its generated text contains one: the text before the
     * string is reported, the string itself only with {@link #includeStopString}, nothing after it.  The
     * match is made on the text, however it was split into tokens, at the first character where any
     * string is complete (of several complete there, the longest; of equal ones, the first listed).  While
     * the text ends with the beginning of a string, that part is held back (a step's text is shorter) until
     * later tokens complete or break the match; it is reported when the sequence ends otherwise, and
     * {@link Session#heldText} reads it meanwhile (a caller that ends the generation itself shows it).
     * Only text generated since the sequence's last prefill is searched.  Each crosses as UTF-8, 1..256
     * bytes without U+0000, and the model needs a tokenizer.  Replaces the strings given before; copied.
     *
     * @throws NullPointerException for a null array or string
     */
    public StopOptions strings(String... strings) {
        for (String s : Objects.requireNonNull(strings, "strings")) Objects.requireNonNull(s, "a stop string");
        this.strings = new ArrayList<>(Arrays.asList(strings));
        return this;
    }

    /**
     * Stop ids: a sequence that draws one ends ({@link EndReason#STOP}, {@link Step#stopIndex()} -1) as on
     * an end-of-generation id; the token's text is reported unless it is a special token's.  Each in
     * [0, vocabulary size).  Replaces the ids given before; copied.
     */
    public StopOptions ids(int... ids) {
        this.ids = Objects.requireNonNull(ids, "ids").clone();
        return this;
    }

    /**
     * The most tokens a sequence generates after each prefill of it: the step that draws the maxTokens-th
     * ends it ({@link EndReason#LENGTH}) unless that token ends it otherwise.  Tokens generated before
     * {@link Session#setStop} count.  0 = no limit (the default).
     */
    public StopOptions maxTokens(int maxTokens) {
        this.maxTokens = maxTokens;
        return this;
    }

    /** Whether a matched stop string is reported as part of the text (default false). */
    public StopOptions includeStopString(boolean includeStopString) {
        this.includeStopString = includeStopString;
        return this;
    }

    /**
     * Whether an end-of-generation id no longer ends a sequence (default false): with true it is reported
     * and enters the context like any other token (vLLM's ignore_eos, llama.cpp's --ignore-eos), so a
     * benchmark decodes as many tokens as it asks for.  Stop ids, stop strings and {@link #maxTokens} still
     * end it.
     */
    public StopOptions ignoreEos(boolean ignoreEos) {
        this.ignoreEos = ignoreEos;
        return this;
    }

    /**
     * A C struct with these values, which the caller deletes: it owns C copies of the strings and ids.
     *
     * @throws ResetException BAD_UTF8 for a string holding an unpaired surrogate, OUT_OF_MEMORY
     */
    reset_stop_options toNative() throws ResetException {
        // Encoded first: a refused string leaves nothing to free.
        List<byte[]> encoded = new ArrayList<>(strings.size());
        for (String s : strings) encoded.add(Text.utf8(s));
        reset_stop_options options = new reset_stop_options();
        boolean built = false;
        try {
            ResetNative.reset_stop_options_init(options);
            for (int i = 0; i < encoded.size(); i++) {
                if (options.add_string(encoded.get(i)) != 0) {
                    throw new ResetException(Status.OUT_OF_MEMORY, "no memory for stop string " + i);
                }
            }
            if (options.set_ids(ids) != 0) throw new ResetException(Status.OUT_OF_MEMORY, "no memory for the stop ids");
            options.setMax_tokens(maxTokens);
            options.setInclude_stop_string(includeStopString ? 1 : 0);
            options.setIgnore_eos(ignoreEos ? 1 : 0);
            built = true;
            return options;
        } finally {
            if (!built) options.delete();
        }
    }
}
