package reset

import (
	"fmt"
	"runtime"

	"libreset.dev/reset/internal/native"
)

// Tokenizer turns UTF-8 text into ids and back; immutable, shareable by goroutines.
type Tokenizer struct {
	raw uintptr
	// owner is non-nil for a model's own tokenizer, which the model frees:
	// keeping t reachable during a call (callKeeping) keeps the model too.
	owner *Model
}

// LoadTokenizer loads tokenizer.json, tokenizer.model or a directory holding one.
func LoadTokenizer(path string) (*Tokenizer, error) {
	if err := ensureABI(); err != nil {
		return nil, err
	}
	if err := checkNoNUL("path", path); err != nil {
		return nil, err
	}
	var raw uintptr
	if err := call(func() native.Enum_SS_reset_status { return native.Reset_tokenizer_load(path, &raw) }); err != nil {
		return nil, err
	}
	t := &Tokenizer{raw: raw}
	runtime.SetFinalizer(t, (*Tokenizer).Close)
	return t, nil
}

// Close frees a tokenizer from LoadTokenizer; a model's own is left to the model.
func (t *Tokenizer) Close() error {
	if t.raw != 0 && t.owner == nil {
		native.Reset_tokenizer_free(t.raw)
		runtime.SetFinalizer(t, nil)
	}
	t.raw = 0
	return nil
}

// Encode turns text into ids; special: special tokens' text becomes their ids (HF's default).
func (t *Tokenizer) Encode(text string, special bool) ([]int32, error) {
	var flags uint
	if special {
		flags = native.RESET_TOKENIZE_PARSE_SPECIAL
	}
	ids := make([]int32, len(text)+8) // byte-level tokenizers never need more than one id a byte, plus BOS
	var n int
	err := callKeeping(t, func() native.Enum_SS_reset_status { return native.Reset_tokenize(t.raw, text, flags, ids, &n) })
	if e, ok := err.(*Error); ok && e.Status == StatusBufferTooSmall {
		ids = make([]int32, n)
		err = callKeeping(t, func() native.Enum_SS_reset_status { return native.Reset_tokenize(t.raw, text, flags, ids, &n) })
	}
	if err != nil {
		return nil, err
	}
	return ids[:n], nil
}

// readText applies reset.h's snprintf idiom: try a buffer, grow it to the size
// reported.  owner is the object whose handle f uses.
func readText(owner any, f func(buffer []byte, needed *int) native.Enum_SS_reset_status) (string, error) {
	buffer := make([]byte, 256)
	for {
		var needed int
		err := callKeeping(owner, func() native.Enum_SS_reset_status { return f(buffer, &needed) })
		if e, ok := err.(*Error); ok && e.Status == StatusBufferTooSmall && needed > len(buffer) {
			buffer = make([]byte, needed)
			continue
		}
		if err != nil {
			return "", err
		}
		return string(buffer[:needed]), nil
	}
}

// Decode turns ids into text (invalid byte sequences become U+FFFD, as in HF).
func (t *Tokenizer) Decode(ids []int32, skipSpecial bool) (string, error) {
	var flags uint
	if skipSpecial {
		flags = native.RESET_DETOKENIZE_SKIP_SPECIAL
	}
	return readText(t, func(b []byte, needed *int) native.Enum_SS_reset_status {
		return native.Reset_detokenize(t.raw, ids, flags, b, needed)
	})
}

// Message is one chat message; Role is "system", "user", "assistant" or "tool".
type Message struct {
	Role, Content string
	// ToolCalls (0.11) is an assistant message's OpenAI "tool_calls", as JSON
	// text: [{"id", "type": "function", "function": {"name", "arguments"}}]
	// ("arguments" a JSON string or a value).  "" (or "null", "[]") is none;
	// an OpenAI tool-call message's null content is "".
	ToolCalls string
}

// ChatOptions are reset_chat_options; Template 0 is the tokenizer's own, recognised.
type ChatOptions struct {
	Template            int
	AddGenerationPrompt bool
	EnableThinking      bool
	// Tools (0.11) is OpenAI's "tools" as JSON text: [{"type": "function",
	// "function": {"name", "description", "parameters"}}]; "" is none.  Qwen3's
	// template shows them to the model; the others refuse tools and tool calls
	// (StatusUnsupported).
	Tools string
}

// DefaultChat adds the generation prompt with thinking on, as transformers does by default.
func DefaultChat() ChatOptions { return ChatOptions{AddGenerationPrompt: true, EnableThinking: true} }

// ChatFormat renders a conversation as the model's chat template does, tools
// and tool calls included (byte-identical to transformers'
// apply_chat_template(messages, tools=...)).
func (t *Tokenizer) ChatFormat(messages []Message, options ChatOptions) (string, error) {
	if err := checkInt32(StatusInvalidArgument, "ChatOptions.Template", options.Template); err != nil {
		return "", err
	}
	// A role and the tool JSON cross NUL-terminated; content has its length.
	if err := checkNoNUL("ChatOptions.Tools", options.Tools); err != nil {
		return "", err
	}
	anyToolCalls := false
	for i, m := range messages {
		if err := firstError(checkNoNUL(fmt.Sprintf("messages[%d].Role", i), m.Role),
			checkNoNUL(fmt.Sprintf("messages[%d].ToolCalls", i), m.ToolCalls)); err != nil {
			return "", err
		}
		anyToolCalls = anyToolCalls || m.ToolCalls != ""
	}
	// The messages point at their text, so they and copies of their strings
	// live in C memory, freed before returning.
	n := int64(len(messages))
	raw := native.Reset_go_messages_new(n)
	if raw == 0 {
		return "", newError(statusOutOfMemory, "no memory for the chat messages")
	}
	defer native.Reset_go_messages_free(raw, n)
	for i, m := range messages {
		if native.Reset_go_messages_set(raw, int64(i), m.Role, m.Content) != 0 {
			return "", newError(statusOutOfMemory, "no memory for a chat message")
		}
	}
	var tools, toolCalls uintptr // C arrays of NUL-terminated copies; 0 is none
	if options.Tools != "" {
		if tools = native.Reset_go_texts_new(1); tools == 0 || native.Reset_go_texts_set(tools, 0, options.Tools) != 0 {
			native.Reset_go_texts_free(tools, 1)
			return "", newError(statusOutOfMemory, "no memory for the tools")
		}
		defer native.Reset_go_texts_free(tools, 1)
	}
	if anyToolCalls {
		if toolCalls = native.Reset_go_texts_new(n); toolCalls == 0 {
			return "", newError(statusOutOfMemory, "no memory for the tool calls")
		}
		defer native.Reset_go_texts_free(toolCalls, n)
		for i, m := range messages {
			if m.ToolCalls != "" && native.Reset_go_texts_set(toolCalls, int64(i), m.ToolCalls) != 0 {
				return "", newError(statusOutOfMemory, "no memory for a message's tool calls")
			}
		}
	}
	opts := native.NewReset_chat_options()
	defer native.DeleteReset_chat_options(opts)
	native.Reset_chat_options_init(opts)
	opts.SetChat_template(native.Enum_SS_reset_chat_template(options.Template))
	opts.SetAdd_generation_prompt(flag(options.AddGenerationPrompt))
	opts.SetEnable_thinking(flag(options.EnableThinking))
	native.Reset_go_chat_options_set_tools(opts, tools, toolCalls)
	return readText(t, func(b []byte, needed *int) native.Enum_SS_reset_status {
		return native.Reset_chat_format(t.raw, raw, n, opts, b, needed)
	})
}
