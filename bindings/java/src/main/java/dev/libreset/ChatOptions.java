package dev.libreset;

/** reset_chat_options.  The defaults are transformers': the generation prompt, thinking on. */
public final class ChatOptions {
    private ChatTemplate template = ChatTemplate.AUTO;
    private boolean addGenerationPrompt = true;
    private boolean enableThinking = true;
    private String tools;

    /** AUTO: the tokenizer's own template, recognised. */
    public ChatOptions template(ChatTemplate template) {
        this.template = template;
        return this;
    }

    /** End with the assistant's turn opening. */
    public ChatOptions addGenerationPrompt(boolean addGenerationPrompt) {
        this.addGenerationPrompt = addGenerationPrompt;
        return this;
    }

    /** Qwen3: false adds the empty think block. */
    public ChatOptions enableThinking(boolean enableThinking) {
        this.enableThinking = enableThinking;
        return this;
    }

    /**
     * (0.11) The tools the model may call: OpenAI's {@code tools} as JSON text, {@code [{"type": "function",
     * "function": {"name", "description", "parameters"}}]}; null for none.  Qwen3's template shows them to the
     * model; the others refuse tools and tool calls (UNSUPPORTED).
     */
    public ChatOptions tools(String tools) {
        this.tools = tools;
        return this;
    }

    /** The struct, owning a copy of the tools; the caller deletes it. */
    reset_chat_options toNative() throws ResetException {
        byte[] encodedTools = tools == null ? null : Text.utf8(tools); // a refused string leaves nothing to free
        reset_chat_options options = new reset_chat_options();
        ResetNative.reset_chat_options_init(options);
        options.setChat_template(template.code());
        options.setAdd_generation_prompt(addGenerationPrompt ? 1 : 0);
        options.setEnable_thinking(enableThinking ? 1 : 0);
        if (options.set_tools(encodedTools) != 0) {
            options.delete();
            throw new ResetException(Status.OUT_OF_MEMORY, "no memory for the tools");
        }
        return options;
    }
}
