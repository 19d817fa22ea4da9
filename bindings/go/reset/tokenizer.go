package reset

/*
#include <stdlib.h>
#include "reset.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Tokenizer turns UTF-8 text into ids and back; immutable, shareable by goroutines.
type Tokenizer struct {
	raw   *C.reset_tokenizer
	owner *Model // non-nil for a model's own tokenizer, which the model frees
}

// LoadTokenizer loads tokenizer.json, tokenizer.model or a directory holding one.
func LoadTokenizer(path string) (*Tokenizer, error) {
	if err := ensureABI(); err != nil {
		return nil, err
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var raw *C.reset_tokenizer
	if err := call(func() C.reset_status { return C.reset_tokenizer_load(cpath, &raw) }); err != nil {
		return nil, err
	}
	t := &Tokenizer{raw: raw}
	runtime.SetFinalizer(t, (*Tokenizer).Close)
	return t, nil
}

// Close frees a tokenizer from LoadTokenizer; a model's own is left to the model.
func (t *Tokenizer) Close() error {
	if t.raw != nil && t.owner == nil {
		C.reset_tokenizer_free(t.raw)
		runtime.SetFinalizer(t, nil)
	}
	t.raw = nil
	return nil
}

// cText points C at text's bytes for one call (no Go pointers inside, so cgo allows it).
func cText(text []byte) *C.char {
	if len(text) == 0 {
		return nil
	}
	return (*C.char)(unsafe.Pointer(&text[0]))
}

// Encode turns text into ids; special: special tokens' text becomes their ids (HF's default).
func (t *Tokenizer) Encode(text string, special bool) ([]int32, error) {
	var flags C.uint32_t
	if special {
		flags = C.RESET_TOKENIZE_PARSE_SPECIAL
	}
	bytes := []byte(text)
	ids := make([]int32, len(bytes)+8) // byte-level tokenizers never need more than one id a byte, plus BOS
	var n C.size_t
	err := call(func() C.reset_status {
		return C.reset_tokenize(t.raw, cText(bytes), C.size_t(len(bytes)), flags,
			(*C.int32_t)(unsafe.Pointer(&ids[0])), C.size_t(len(ids)), &n)
	})
	if e, ok := err.(*Error); ok && e.Status == StatusBufferTooSmall {
		ids = make([]int32, int(n))
		err = call(func() C.reset_status {
			return C.reset_tokenize(t.raw, cText(bytes), C.size_t(len(bytes)), flags,
				(*C.int32_t)(unsafe.Pointer(&ids[0])), C.size_t(len(ids)), &n)
		})
	}
	if err != nil {
		return nil, err
	}
	return ids[:n], nil
}

// readText applies reset.h's snprintf idiom: try a buffer, grow it to the size reported.
func readText(f func(buffer *C.char, capacity C.size_t, needed *C.size_t) C.reset_status) (string, error) {
	buffer := make([]byte, 256)
	for {
		var needed C.size_t
		err := call(func() C.reset_status {
			return f((*C.char)(unsafe.Pointer(&buffer[0])), C.size_t(len(buffer)), &needed)
		})
		if e, ok := err.(*Error); ok && e.Status == StatusBufferTooSmall && int(needed) > len(buffer) {
			buffer = make([]byte, int(needed))
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
	var flags C.uint32_t
	if skipSpecial {
		flags = C.RESET_DETOKENIZE_SKIP_SPECIAL
	}
	var p *C.int32_t
	if len(ids) > 0 {
		p = (*C.int32_t)(unsafe.Pointer(&ids[0]))
	}
	text, err := readText(func(b *C.char, capacity C.size_t, needed *C.size_t) C.reset_status {
		return C.reset_detokenize(t.raw, p, C.size_t(len(ids)), flags, b, capacity, needed)
	})
	runtime.KeepAlive(ids)
	return text, err
}

// Message is one chat message; Role is "system", "user", "assistant" or "tool".
type Message struct{ Role, Content string }

// ChatOptions are reset_chat_options; Template 0 is the tokenizer's own, recognised.
type ChatOptions struct {
	Template            int
	AddGenerationPrompt bool
	EnableThinking      bool
}

// DefaultChat adds the generation prompt with thinking on, as transformers does by default.
func DefaultChat() ChatOptions { return ChatOptions{AddGenerationPrompt: true, EnableThinking: true} }

// ChatFormat renders a conversation as the model's chat template does.
func (t *Tokenizer) ChatFormat(messages []Message, options ChatOptions) (string, error) {
	// The messages hold pointers, so they and their strings live in C memory, freed before returning.
	n := len(messages)
	raw := (*C.reset_chat_message)(C.calloc(C.size_t(n+1), C.size_t(unsafe.Sizeof(C.reset_chat_message{}))))
	defer C.free(unsafe.Pointer(raw))
	cm := unsafe.Slice(raw, n+1)
	for i, m := range messages {
		cm[i].role = C.CString(m.Role)
		cm[i].content = (*C.char)(C.CBytes([]byte(m.Content + "\x00")))
		cm[i].content_len = C.size_t(len(m.Content))
	}
	defer func() {
		for i := range messages {
			C.free(unsafe.Pointer(cm[i].role))
			C.free(unsafe.Pointer(cm[i].content))
		}
	}()
	var opts C.reset_chat_options
	C.reset_chat_options_init(&opts)
	opts.chat_template = C.reset_chat_template(options.Template)
	opts.add_generation_prompt, opts.enable_thinking = 0, 0
	if options.AddGenerationPrompt {
		opts.add_generation_prompt = 1
	}
	if options.EnableThinking {
		opts.enable_thinking = 1
	}
	return readText(func(b *C.char, capacity C.size_t, needed *C.size_t) C.reset_status {
		return C.reset_chat_format(t.raw, raw, C.size_t(n), &opts, b, capacity, needed)
	})
}
