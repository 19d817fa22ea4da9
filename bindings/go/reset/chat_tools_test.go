package reset

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tool conversations of tests/text/conversations.json, rendered through ChatFormat, against the
// text transformers' apply_chat_template(tools=...) rendered for them (tests/text/chat_reference.json,
// written by tests/text/chat_reference.py).  The JSON crosses as the file holds it (json.RawMessage):
// re-encoding it in Go would sort object keys, and the template prints them in the order given.

type referenceConversation struct {
	Tools    json.RawMessage `json:"tools"`
	Messages []struct {
		Role      string          `json:"role"`
		Content   *string         `json:"content"`
		ToolCalls json.RawMessage `json:"tool_calls"`
	} `json:"messages"`
}

type referenceCase struct {
	Template            string `json:"template"`
	Conversation        int    `json:"conversation"`
	AddGenerationPrompt bool   `json:"add_generation_prompt"`
	EnableThinking      bool   `json:"enable_thinking"`
	Text                string `json:"text"`
}

func readJSON(t *testing.T, name string, into any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(source(), "tests/text", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func sharedTokenizer(t *testing.T, name string) *Tokenizer {
	t.Helper()
	dir := filepath.Join(source(), "../shared/data/tokenizers", name)
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil {
		t.Skip("no " + name + " tokenizer at " + dir)
	}
	tok, err := LoadTokenizer(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestChatFormatRendersToolsAsTransformersDoes(t *testing.T) {
	tok := sharedTokenizer(t, "qwen3")
	defer tok.Close()
	var conversations []referenceConversation
	var reference struct{ Cases []referenceCase }
	readJSON(t, "conversations.json", &conversations)
	readJSON(t, "chat_reference.json", &reference)
	checked := 0
	for _, c := range reference.Cases {
		conversation := conversations[c.Conversation]
		if c.Template != "qwen3" || (conversation.Tools == nil && !hasToolCalls(conversation)) {
			continue
		}
		messages := make([]Message, len(conversation.Messages))
		for i, m := range conversation.Messages {
			messages[i] = Message{Role: m.Role, ToolCalls: string(m.ToolCalls)}
			if m.Content != nil {
				messages[i].Content = *m.Content
			}
		}
		got, err := tok.ChatFormat(messages, ChatOptions{AddGenerationPrompt: c.AddGenerationPrompt,
			EnableThinking: c.EnableThinking, Tools: string(conversation.Tools)})
		if err != nil || got != c.Text {
			t.Fatalf("conversation %d (generation prompt %v, thinking %v): %v\ngot  %q\nwant %q", c.Conversation,
				c.AddGenerationPrompt, c.EnableThinking, err, got, c.Text)
		}
		checked++
	}
	// 4 tool conversations × generation prompt on/off × thinking on/off (chat_reference.py's grid).
	if checked != 16 {
		t.Fatalf("%d tool cases checked, the reference has 16", checked)
	}
}

func hasToolCalls(c referenceConversation) bool {
	for _, m := range c.Messages {
		if m.ToolCalls != nil {
			return true
		}
	}
	return false
}

func TestChatFormatRefusesBadToolsClearly(t *testing.T) {
	qwen3 := sharedTokenizer(t, "qwen3")
	defer qwen3.Close()
	llama3 := sharedTokenizer(t, "llama3")
	defer llama3.Close()
	tools := `[{"type": "function", "function": {"name": "get_weather"}}]`
	call := `[{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]`
	user := Message{Role: "user", Content: "Weather in Paris?"}
	cases := []struct {
		name      string
		tokenizer *Tokenizer
		messages  []Message
		tools     string
		status    Status
		words     string
	}{
		{"tools where the template has none", llama3, []Message{user}, tools, StatusUnsupported, "tools"},
		{"a tool call where the template has none", llama3,
			[]Message{user, {Role: "assistant", ToolCalls: call}}, "", StatusUnsupported, "tool"},
		{"tools that are not JSON", qwen3, []Message{user}, `[{"type": "function",`, StatusInvalidArgument,
			"tools_json"},
		{"a call without arguments", qwen3,
			[]Message{user, {Role: "assistant", ToolCalls: `[{"function": {"name": "f"}}]`}}, "",
			StatusInvalidArgument, `tool_calls_json[1][0] has no "arguments"`},
		{"a tool call on a user message", qwen3, []Message{{Role: "user", Content: "hi", ToolCalls: call}}, "",
			StatusInvalidArgument, "tool_calls_json[0]"},
		{"a NUL in the tools", qwen3, []Message{user}, tools + "\x00", StatusInvalidArgument, "ChatOptions.Tools"},
		{"a NUL in a tool call", qwen3, []Message{user, {Role: "assistant", ToolCalls: "[]\x00"}}, "",
			StatusInvalidArgument, "messages[1].ToolCalls"},
	}
	for _, c := range cases {
		_, err := c.tokenizer.ChatFormat(c.messages, ChatOptions{AddGenerationPrompt: true, Tools: c.tools})
		var e *Error
		if !errors.As(err, &e) || e.Status != c.status || !strings.Contains(e.Message, c.words) {
			t.Errorf("%s: got %v, want %v with %q", c.name, err, c.status, c.words)
		}
	}
	// "null" and "[]" are none: the same prompt as without tools.
	plain, err := qwen3.ChatFormat([]Message{user}, DefaultChat())
	if err != nil {
		t.Fatal(err)
	}
	for _, none := range []string{"null", "[]"} {
		got, err := qwen3.ChatFormat([]Message{user, {Role: "assistant", Content: "ok", ToolCalls: none}},
			ChatOptions{AddGenerationPrompt: true, EnableThinking: true, Tools: none})
		want, _ := qwen3.ChatFormat([]Message{user, {Role: "assistant", Content: "ok"}}, DefaultChat())
		if err != nil || got != want || !strings.HasPrefix(got, strings.TrimSuffix(plain, "<|im_start|>assistant\n")) {
			t.Errorf("tools %q: %q %v", none, got, err)
		}
	}
}
