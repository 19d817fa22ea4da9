package dev.libreset;

/**
 * One message of a conversation; role is "system", "user", "assistant" or "tool".
 *
 * @param toolCalls (0.11) an assistant message's OpenAI {@code tool_calls} as JSON text:
 *     {@code [{"id", "type": "function", "function": {"name", "arguments"}}]} ("arguments" a JSON string or a
 *     value); null (or "null", "[]") for none.  An OpenAI tool-call message's null content is "".
 */
public record ChatMessage(String role, String content, String toolCalls) {
    /** A message without tool calls. */
    public ChatMessage(String role, String content) {
        this(role, content, null);
    }

    public static ChatMessage system(String content) {
        return new ChatMessage("system", content);
    }

    public static ChatMessage user(String content) {
        return new ChatMessage("user", content);
    }

    public static ChatMessage assistant(String content) {
        return new ChatMessage("assistant", content);
    }

    /** (0.11) An assistant message that calls tools (JSON, see {@link #toolCalls()}). */
    public static ChatMessage assistant(String content, String toolCalls) {
        return new ChatMessage("assistant", content, toolCalls);
    }

    /** (0.11) A tool's result, answering the assistant's call. */
    public static ChatMessage tool(String content) {
        return new ChatMessage("tool", content);
    }
}
