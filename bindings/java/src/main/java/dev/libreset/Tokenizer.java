package dev.libreset;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.Arrays;
import java.util.List;

/**
 * Turns text into token ids and back, and renders conversations with the model's chat template.
 * Immutable: any number of threads may use one at once.
 *
 * <p>Memory: a tokenizer from {@link #load} owns its C handle and {@link #close()} frees it; a
 * model's own ({@link Model#tokenizer()}) belongs to the model, so close() leaves it alone and
 * it stops working once the model is closed.  Text crosses as UTF-8 bytes in both directions.
 */
public final class Tokenizer implements AutoCloseable {
    private volatile long handle;
    private final Model owner; // non-null for a model's own tokenizer
    private final Cleaner.Cleanable cleanable;

    Tokenizer(long raw, Model owner) {
        this.handle = raw;
        this.owner = owner;
        this.cleanable = owner != null ? null : Handles.CLEANER.register(this, () -> ResetNative.reset_tokenizer_free(raw));
    }

    /** Loads a tokenizer.json, a tokenizer.model, or a model directory holding one. */
    public static Tokenizer load(String path) throws ResetException {
        Reset.ensureAbi();
        long[] out = new long[1];
        ResetNative.reset_tokenizer_load(Text.utf8(path), out);
        return new Tokenizer(out[0], null);
    }

    private long handle() {
        long h = handle;
        if (h == 0) throw new IllegalStateException("the tokenizer is closed");
        if (owner != null && !owner.isOpen()) throw new IllegalStateException("the tokenizer's model is closed");
        return h;
    }

    /** Text to ids, with special tokens' text becoming their ids (Hugging Face's default). */
    public int[] encode(String text) throws ResetException {
        return encode(text, true, false);
    }

    /**
     * Text to ids.
     *
     * @param parseSpecial special tokens' text (e.g. "&lt;|im_end|&gt;") becomes their ids
     * @param addBos prepend the BOS id, if the tokenizer has one
     * @throws ResetException BAD_UTF8 for text with an unpaired surrogate
     */
    public int[] encode(String text, boolean parseSpecial, boolean addBos) throws ResetException {
        long flags = (parseSpecial ? reset_java_constants.RESET_JAVA_TOKENIZE_PARSE_SPECIAL : 0)
                | (addBos ? reset_java_constants.RESET_JAVA_TOKENIZE_ADD_BOS : 0);
        byte[] bytes = Text.utf8(text);
        // Byte-level tokenizers never need more than one id a byte, plus BOS: one call is the rule.
        int[] ids = new int[bytes.length + 8];
        long[] n = new long[1];
        try {
            try {
                ResetNative.reset_tokenize(handle(), bytes, flags, ids, n);
            } catch (ResetException e) {
                if (e.getStatus() != Status.BUFFER_TOO_SMALL) throw e;
                ids = new int[Math.toIntExact(n[0])];
                ResetNative.reset_tokenize(handle(), bytes, flags, ids, n);
            }
        } finally {
            // See Handles.  A model's tokenizer holds its owner, so the model stays reachable too.
            Reference.reachabilityFence(this);
        }
        return Arrays.copyOf(ids, Math.toIntExact(n[0]));
    }

    /** Ids to text, special tokens included. */
    public String decode(int[] ids) throws ResetException {
        return decode(ids, false);
    }

    /** Ids to text; byte sequences that are not valid UTF-8 become U+FFFD, as in Hugging Face. */
    public String decode(int[] ids, boolean skipSpecial) throws ResetException {
        long flags = skipSpecial ? reset_java_constants.RESET_JAVA_DETOKENIZE_SKIP_SPECIAL : 0;
        long h = handle();
        try {
            return Text.string(Text.read((buffer, needed) -> ResetNative.reset_detokenize(h, ids, flags, buffer, needed)));
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * The raw bytes one token stands for.  They may be part of a UTF-8 character, so they are
     * bytes, not a String: to stream text, use a session's step text, which never splits one.
     */
    public byte[] tokenBytes(int id, boolean skipSpecial) throws ResetException {
        long flags = skipSpecial ? reset_java_constants.RESET_JAVA_DETOKENIZE_SKIP_SPECIAL : 0;
        long h = handle();
        try {
            return Text.read((buffer, needed) -> ResetNative.reset_token_to_text(h, id, flags, buffer, needed));
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** The id of a token given its exact text, or -1. */
    public int tokenId(String text) throws ResetException {
        int[] id = new int[1];
        try {
            ResetNative.reset_token_id(handle(), Text.utf8(text), id);
        } finally {
            Reference.reachabilityFence(this);
        }
        return id[0];
    }

    /**
     * ReSET's step delimiters for this vocabulary, ascending.
     *
     * @param doubleNewline false: the ids whose text is exactly "\n"; true: those containing "\n\n"
     */
    public int[] stepDelimiters(boolean doubleNewline) throws ResetException {
        long h = handle();
        int which = doubleNewline ? 1 : 0;
        long[] n = new long[1];
        try {
            try {
                ResetNative.reset_tokenizer_step_delimiters(h, which, new int[0], n);
                return new int[0];
            } catch (ResetException e) {
                if (e.getStatus() != Status.BUFFER_TOO_SMALL) throw e;
            }
            int[] ids = new int[Math.toIntExact(n[0])];
            ResetNative.reset_tokenizer_step_delimiters(h, which, ids, n);
            return ids;
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Renders a conversation as the model's chat template does, byte-identical to transformers'
     * apply_chat_template, tools ({@link ChatOptions#tools}) and tool calls ({@link ChatMessage#toolCalls})
     * included.  Tokenize the result with {@link #encode(String)} (special tokens parsed,
     * no extra BOS).
     *
     * @throws ResetException UNSUPPORTED for a template libreset does not recognise (set one in options), or
     *     for tools or tool calls where the template renders none (every template but Qwen3's);
     *     INVALID_ARGUMENT for tools or tool calls that are not JSON of OpenAI's shape (the part named)
     */
    public String chatFormat(List<ChatMessage> messages, ChatOptions options) throws ResetException {
        byte[][] pairs = new byte[2 * messages.size()][];
        for (int i = 0; i < messages.size(); i++) {
            pairs[2 * i] = Text.utf8(messages.get(i).role());
            pairs[2 * i + 1] = Text.utf8(messages.get(i).content());
        }
        byte[][] toolCalls = new byte[messages.size()][];
        for (int i = 0; i < messages.size(); i++) {
            String calls = messages.get(i).toolCalls();
            if (calls != null) toolCalls[i] = Text.utf8(calls);
        }
        long h = handle();
        reset_chat_options raw = options.toNative();
        try {
            for (int i = 0; i < toolCalls.length; i++) {
                if (toolCalls[i] != null && raw.set_tool_calls(toolCalls.length, i, toolCalls[i]) != 0) {
                    throw new ResetException(Status.OUT_OF_MEMORY, "no memory for the tool calls of message " + i);
                }
            }
            return Text.string(Text.read((buffer, needed) -> ResetNative.reset_chat_format(h, pairs, raw, buffer, needed)));
        } finally {
            raw.delete();
            Reference.reachabilityFence(this);
        }
    }

    /** The vocabulary size, special ids, kind and recognised chat template. */
    public TokenizerInfo info() throws ResetException {
        reset_tokenizer_info info = new reset_tokenizer_info();
        try {
            ResetNative.reset_tokenizer_info_init(info);
            ResetNative.reset_tokenizer_get_info(handle(), info);
            int[] eos = new int[info.getN_eos()];
            for (int i = 0; i < eos.length; i++) eos[i] = info.eos_id(i);
            return new TokenizerInfo(info.getVocab_size(), info.getBos_id(), eos, Text.string(info.getKind()),
                    ChatTemplate.of(info.getChat_template()), info.getHas_chat_template() != 0);
        } finally {
            info.delete();
            Reference.reachabilityFence(this);
        }
    }

    /** Frees a tokenizer from {@link #load}; a model's own is left to the model.  Idempotent. */
    @Override
    public void close() {
        handle = 0;
        if (cleanable != null) cleanable.clean();
    }
}
