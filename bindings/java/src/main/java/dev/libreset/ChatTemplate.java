package dev.libreset;

/** A chat template libreset renders (reset_chat_template). */
public enum ChatTemplate {
    AUTO(reset_chat_template.RESET_CHAT_TEMPLATE_AUTO),
    QWEN3(reset_chat_template.RESET_CHAT_TEMPLATE_QWEN3),
    DEEPSEEK_R1(reset_chat_template.RESET_CHAT_TEMPLATE_DEEPSEEK_R1),
    LLAMA3(reset_chat_template.RESET_CHAT_TEMPLATE_LLAMA3),
    PLAIN(reset_chat_template.RESET_CHAT_TEMPLATE_PLAIN),
    /** A value this binding does not know, which a newer libreset of the same ABI major may report;
     *  passed to the library it is refused (RESET_ERR_INVALID_ARGUMENT). */
    UNKNOWN(-1);

    private final int code;

    ChatTemplate(int code) {
        this.code = code;
    }

    /** The C enum's value. */
    public int code() {
        return code;
    }

    static ChatTemplate of(int code) {
        for (ChatTemplate value : values()) {
            if (value.code == code) return value;
        }
        return UNKNOWN;
    }
}
