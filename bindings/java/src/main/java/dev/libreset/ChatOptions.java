package dev.libreset;

/** reset_chat_options.  The defaults are transformers': the generation prompt, thinking on. */
public final class ChatOptions {
    private ChatTemplate template = ChatTemplate.AUTO;
    private boolean addGenerationPrompt = true;
    private boolean enableThinking = true;

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

    reset_chat_options toNative() {
        reset_chat_options options = new reset_chat_options();
        ResetNative.reset_chat_options_init(options);
        options.setChat_template(template.code());
        options.setAdd_generation_prompt(addGenerationPrompt ? 1 : 0);
        options.setEnable_thinking(enableThinking ? 1 : 0);
        return options;
    }
}
