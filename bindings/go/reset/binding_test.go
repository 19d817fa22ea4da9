package reset

import (
	"errors"
	"strings"
	"testing"
)

// The constants of this package are written out by hand (Go constants cannot
// come from SWIG's enum variables): each must be the value reset.h gives.
func TestConstantsAreTheHeaders(t *testing.T) {
	for _, v := range headerValues() {
		if v.ours != v.header {
			t.Errorf("%s is %d, reset.h says %d", v.name, v.ours, v.header)
		}
	}
	if err := checkHeader(); err != nil {
		t.Fatal(err)
	}
}

// Every string crossing into C is a malloc'd copy that SWIG frees after the
// call, and every string coming back is copied out and its C copy freed: a
// leak of either would grow RSS by gigabytes here.
func TestStringsCrossingTheBoundaryAreFreed(t *testing.T) {
	path := "/nonexistent/" + strings.Repeat("m", 16<<10)
	round := func() {
		var e *Error
		if _, err := Load(path, ModelOptions{}); !errors.As(err, &e) || e.Message == "" || e.Name == "" {
			t.Fatalf("got %v", err)
		}
		if !strings.HasPrefix(Version(), "0.") {
			t.Fatalf("version %q", Version())
		}
	}
	// 20,000 x 16 KiB paths: 320 MiB if the copies leaked
	keepsRSSFlat(t, 1000, 20000, 16384, round)
}

// SetStop's strings and ids are copied into C memory that the options free after the call, whether the
// library takes them or refuses them (these: 16 strings of 1 KiB, longer than a stop string may be); a leak
// of the strings would grow RSS by 320 MiB here, of the ids by 20 MiB.
func TestStopOptionsCrossingTheBoundaryAreFreed(t *testing.T) {
	m := chatModel(t)
	defer m.Close()
	s, err := m.NewSession(16, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	options := StopOptions{Strings: make([]string, 16), IDs: make([]int32, 256), MaxTokens: 8}
	for i := range options.Strings {
		options.Strings[i] = strings.Repeat(string(rune('a'+i)), 1024)
	}
	round := func() {
		var e *Error
		if err := s.SetStop(options); !errors.As(err, &e) || e.Status != StatusInvalidArgument ||
			!strings.Contains(e.Message, "longer than 256 bytes") {
			t.Fatalf("got %v", err)
		}
	}
	keepsRSSFlat(t, 1000, 20000, 16384, round)
	// The same options within the limits are taken.
	for i := range options.Strings {
		options.Strings[i] = options.Strings[i][:256]
	}
	if err := s.SetStop(options); err != nil {
		t.Fatal(err)
	}
}

// SetLogitBias's entries, a session's or a policy's (0.7), are copied into a C array freed after the call,
// whether the library takes them or refuses them (these: 65,536 entries, more than it takes); a leak of
// either one's array would grow RSS by 1 GiB here.
func TestLogitBiasCrossingTheBoundaryIsFreed(t *testing.T) {
	m := chatModel(t)
	defer m.Close()
	s, err := m.NewSession(16, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := NewPolicy(Greedy(), nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	bias := make([]LogitBias, 1<<16)
	for i := range bias {
		bias[i] = LogitBias{Token: int32(i % 512), Bias: 1}
	}
	round := func() {
		for _, err := range []error{s.SetLogitBias(bias), p.SetLogitBias(bias)} {
			var e *Error
			if !errors.As(err, &e) || e.Status != StatusInvalidArgument ||
				!strings.Contains(e.Message, "RESET_MAX_LOGIT_BIAS") {
				t.Fatalf("got %v", err)
			}
		}
	}
	// 2,000 x 512 KiB arrays: 1 GiB if they leaked
	keepsRSSFlat(t, 100, 2000, 16384, round)
	// Within the limit, the same kind of entries are taken.
	if err := s.SetLogitBias(bias[:512]); err != nil {
		t.Fatal(err)
	}
	if err := p.SetLogitBias(bias[:512]); err != nil {
		t.Fatal(err)
	}
}

// ChatFormat's tools and tool calls (0.11) are copied into C memory freed after the call, whether the
// template renders them or refuses them (these: a tools list of a 16 KiB string, refused; a call whose
// 16 KiB arguments string renders); a leak of either would grow RSS by 312 MiB here.
func TestChatToolsCrossingTheBoundaryAreFreed(t *testing.T) {
	m := chatModel(t)
	defer m.Close()
	tok := m.Tokenizer()
	tools := `["` + strings.Repeat("t", 16<<10) + `"]`
	messages := []Message{{Role: "user", Content: "hi"},
		{Role: "assistant", ToolCalls: `[{"name": "f", "arguments": "` + strings.Repeat("a", 16<<10) + `"}]`}}
	round := func() {
		var e *Error
		_, err := tok.ChatFormat(messages[:1], ChatOptions{Tools: tools})
		if !errors.As(err, &e) || e.Status != StatusInvalidArgument || !strings.Contains(e.Message, "tools_json[0]") {
			t.Fatalf("got %v", err)
		}
		if text, err := tok.ChatFormat(messages, ChatOptions{}); err != nil || len(text) < 16<<10 {
			t.Fatalf("%d bytes, %v", len(text), err)
		}
	}
	// 10,000 x 2 x 16 KiB: 312 MiB if they leaked
	keepsRSSFlat(t, 500, 10000, 16384, round)
}
