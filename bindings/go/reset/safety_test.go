package reset

import (
	"context"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The small model of this tree: real prefill work, and a tokenizer with the Qwen3 chat template.
func arithDir() string { return filepath.Join(source(), "models/reset-arith-4m") }

func arith(t *testing.T) *Model {
	m, err := Load(arithDir(), ModelOptions{Backend: BackendCPU})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A one-sequence session on arith(t), both closed when the test ends.
func arithSession(t *testing.T, maxContext int) *Session {
	m := arith(t)
	t.Cleanup(func() { m.Close() })
	s, err := m.NewSession(maxContext, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// ------------------------------------------------------------- finalizers

// Each helper's call is the last use of its object, so only the method
// itself can keep the object (and its handle) alive while C runs.

//go:noinline
func prefillOnce(m *Model, ids []int32) error {
	s, err := m.NewSession(1024, 1)
	if err != nil {
		return err
	}
	return s.Prefill(context.Background(), ids)
}

//go:noinline
func decideOnce(logits []float32) error {
	p, err := NewPolicy(ReSET(1.0, 0.3, 0.6, 8), []int32{5}, []int32{6}, 0)
	if err != nil {
		return err
	}
	_, err = p.Decide(logits)
	return err
}

//go:noinline
func encodeWithModelsTokenizer(text string) error {
	m, err := Load(arithDir(), ModelOptions{Backend: BackendCPU})
	if err != nil {
		return err
	}
	_, err = m.Tokenizer().Encode(text, true) // the model is reachable only through its tokenizer
	return err
}

// Without runtime.KeepAlive in the methods, a collection during the C call
// runs the finalizer, which frees the handle under the call: a crash, or
// RESET_ERR_INVALID_HANDLE when the free comes first.
func TestFinalizersNeverFreeAHandleMidCall(t *testing.T) {
	m := arith(t)
	defer m.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
				time.Sleep(100 * time.Microsecond)
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()

	ids := make([]int32, 200)
	for i := range ids {
		ids[i] = int32(5 + i%50)
	}
	logits := make([]float32, 1<<20)
	for i := range logits {
		logits[i] = float32(i % 97)
	}
	text := strings.Repeat("Tom has 12 apples.\n\n", 20000)
	cases := []struct {
		name string
		f    func() error
	}{
		{"Session.Prefill", func() error { return prefillOnce(m, ids) }},
		{"Policy.Decide", func() error { return decideOnce(logits) }},
		{"Model.Tokenizer.Encode", func() error { return encodeWithModelsTokenizer(text) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			deadline := time.Now().Add(time.Second)
			for i := 0; i < 300 && time.Now().Before(deadline); i++ {
				if err := c.f(); err != nil {
					t.Fatalf("round %d: %v", i, err)
				}
			}
		})
	}
}

// ------------------------------------------------------------ stray cancel

// cancelledAfterFirstLook is a context cancelled right after the binding
// first checked it: its Done channel is closed, but the first Err is nil.
type cancelledAfterFirstLook struct {
	context.Context
	done   chan struct{}
	looked int32
}

func newCancelledAfterFirstLook() *cancelledAfterFirstLook {
	c := &cancelledAfterFirstLook{Context: context.Background(), done: make(chan struct{})}
	close(c.done)
	return c
}

func (c *cancelledAfterFirstLook) Done() <-chan struct{} { return c.done }
func (c *cancelledAfterFirstLook) Err() error {
	if atomic.AddInt32(&c.looked, 1) == 1 {
		return nil
	}
	return context.Canceled
}

func isStatus(err error, s Status) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == s
}

// The context's cancel reaches a call that never checks for one (it fails
// validating its ids, which takes a while for 4M of them), so the request
// stays pending in the library: the next call, made with a context nobody
// cancels, must still succeed.
func TestAStrayCancelDoesNotFailTheNextCall(t *testing.T) {
	s := arithSession(t, 256)
	bad := make([]int32, 1<<22)
	bad[len(bad)-1] = 1 << 30 // outside the vocabulary, found last
	for round := 0; round < 5; round++ {
		if err := s.Prefill(newCancelledAfterFirstLook(), bad); !isStatus(err, StatusOutOfRange) {
			t.Fatalf("round %d: bad prefill got %v", round, err)
		}
		if err := s.Prefill(context.Background(), []int32{5, 6, 7}); err != nil {
			t.Fatalf("round %d: a prefill nobody cancelled got %v", round, err)
		}
		if _, err := s.Step(context.Background()); err != nil {
			t.Fatalf("round %d: a step nobody cancelled got %v", round, err)
		}
		if err := s.Reset(); err != nil {
			t.Fatal(err)
		}
	}
}

// canceldemo's race, bounded: a context cancelled at a random moment of a
// Step must never cancel the next Step made with context.Background().
func TestCancelledContextsNeverCancelALaterCall(t *testing.T) {
	s := arithSession(t, 4096)
	if err := s.SetPolicy(Greedy()); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(1))
	deadline := time.Now().Add(3 * time.Second)
	completed := 0
	for i := 0; i < 400 && time.Now().Before(deadline); i++ {
		if i == 0 || s.Len(0) > 4000 {
			if err := s.Reset(); err != nil {
				t.Fatal(err)
			}
			if err := s.Prefill(context.Background(), []int32{5, 6, 7}); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		delay := time.Duration(r.Intn(1500)) * time.Microsecond
		go func() { time.Sleep(delay); cancel() }()
		_, err := s.Step(ctx)
		cancel()
		if err != nil {
			if !isStatus(err, StatusCancelled) && !errors.Is(err, context.Canceled) {
				t.Fatal(err)
			}
			continue
		}
		completed++
		if _, err := s.Step(context.Background()); err != nil {
			t.Fatalf("round %d: a Step nobody cancelled, after one that completed, got %v", i, err)
		}
	}
	t.Logf("%d steps completed with a cancel racing them, each followed by a clean Step", completed)
}

// Cancel keeps reset.h's meaning: with nothing running, it cancels the next
// call, even where a stray cancel was pending too; Reset drops both.
func TestCancelStillCancelsTheNextCall(t *testing.T) {
	s := arithSession(t, 256)
	ctx := context.Background()
	if err := s.Cancel(); err != nil {
		t.Fatal(err)
	}
	if err := s.Prefill(ctx, []int32{5, 6, 7}); !isStatus(err, StatusCancelled) {
		t.Fatalf("after Cancel: %v", err)
	}
	if err := s.Prefill(ctx, []int32{5, 6, 7}); err != nil { // the request was consumed
		t.Fatal(err)
	}
	bad := make([]int32, 1<<22)
	bad[len(bad)-1] = 1 << 30
	s.Prefill(newCancelledAfterFirstLook(), bad) //nolint:errcheck // out of range: leaves a stray cancel
	if err := s.Cancel(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Step(ctx); !isStatus(err, StatusCancelled) {
		t.Fatalf("after a stray cancel and Cancel: %v", err)
	}
	s.Prefill(newCancelledAfterFirstLook(), bad) //nolint:errcheck
	s.Cancel()                                   //nolint:errcheck
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	if err := s.Prefill(ctx, []int32{5, 6, 7}); err != nil {
		t.Fatalf("after Reset: %v", err)
	}
}

// ------------------------------------------------------------------ int32

// 1<<32 + v wraps to v in an int32_t: each of these would silently become a valid argument.
func TestIntsOutsideInt32AreRefused(t *testing.T) {
	const wrap = 1 << 32
	m := arith(t)
	defer m.Close()
	s, err := m.NewSession(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Prefill(context.Background(), []int32{5, 6, 7}); err != nil {
		t.Fatal(err)
	}
	policy := func(edit func(*PolicyParams)) PolicyParams {
		p := ReSET(1.0, 0.3, 0.6, 8)
		edit(&p)
		return p
	}
	expect := func(name string, err error, status Status, argument string) {
		t.Helper()
		var e *Error
		if !errors.As(err, &e) || e.Status != status || !strings.Contains(e.Message, argument) {
			t.Errorf("%s: got %v, want %s naming %s", name, err, statusName(status), argument)
		}
	}
	load := func(o ModelOptions) error {
		if o.Backend == BackendAuto {
			o.Backend = BackendCPU
		}
		lm, err := Load(arithDir(), o)
		if err == nil {
			lm.Close()
		}
		return err
	}
	_, err = m.NewSession(wrap+16, 1)
	expect("NewSession maxContext", err, StatusInvalidArgument, "maxContext")
	_, err = m.NewSession(0, wrap+1)
	expect("NewSession sequences", err, StatusInvalidArgument, "sequences")
	_, err = m.NewSessionWith(SessionOptions{Sequences: 1, TopLogprobs: wrap + 5}) // not 5
	expect("NewSessionWith TopLogprobs", err, StatusInvalidArgument, "TopLogprobs")
	_, err = m.NewSessionWith(SessionOptions{Sequences: 1, KVCache: wrap + KVCacheFP8}) // not FP8
	expect("NewSessionWith KVCache", err, StatusInvalidArgument, "KVCache")
	_, err = m.NewSessionWith(SessionOptions{Sequences: 1, PrefillGemmTokens: wrap + 64}) // not 64
	expect("NewSessionWith PrefillGemmTokens", err, StatusInvalidArgument, "PrefillGemmTokens")
	expect("SetStop MaxTokens", s.SetStop(StopOptions{MaxTokens: wrap + 4}), StatusInvalidArgument, "MaxTokens")
	_, err = s.Logits(wrap)
	expect("Logits", err, StatusOutOfRange, "sequence")
	_, err = s.HeldText(wrap) // not 0
	expect("HeldText", err, StatusOutOfRange, "sequence")
	expect("Truncate", s.Truncate(wrap+1), StatusOutOfRange, "length") // not 1 (s holds 3 tokens)
	expect("TruncateSequence sequence", s.TruncateSequence(wrap, 1), StatusOutOfRange, "sequence")
	expect("TruncateSequence length", s.TruncateSequence(0, wrap+1), StatusOutOfRange, "length")
	_, err = s.Tokens(wrap)
	expect("Tokens", err, StatusOutOfRange, "sequence")
	expect("CopySequence from", s.CopySequence(wrap, 0), StatusOutOfRange, "from") // not 0, onto itself
	expect("CopySequence to", s.CopySequence(0, wrap), StatusOutOfRange, "to")
	// A file of sequence 0, which a wrapped index would load into it again, and a path a wrapped save would
	// write sequence 0 to.
	dir := t.TempDir()
	saved, unsaved := filepath.Join(dir, "saved.safetensors"), filepath.Join(dir, "unsaved.safetensors")
	if err := s.SaveSequence(0, saved); err != nil {
		t.Fatal(err)
	}
	expect("SaveSequence", s.SaveSequence(wrap, unsaved), StatusOutOfRange, "sequence")
	expect("LoadSequence", s.LoadSequence(wrap, saved), StatusOutOfRange, "sequence")
	if _, err := os.Stat(unsaved); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("SaveSequence(1<<32) left %s (%v)", unsaved, err)
	}
	// Sequence 0's state, which a wrapped index would save again or load into it again (0.9).
	state, err := s.SaveSequenceBytes(0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.SaveSequenceBytes(wrap)
	expect("SaveSequenceBytes", err, StatusOutOfRange, "sequence")
	expect("LoadSequenceBytes", s.LoadSequenceBytes(wrap, state), StatusOutOfRange, "sequence")
	if n := s.Len(0); n != 3 {
		t.Errorf("Len(0) = %d after the refused cuts, copies, saves and loads, want 3", n)
	}
	if n := s.Len(wrap); n != -1 {
		t.Errorf("Len(1<<32) = %d, want -1", n)
	}
	expect("SetPolicy TopK", s.SetPolicy(policy(func(p *PolicyParams) { p.TopK = wrap + 5 })),
		StatusInvalidArgument, "TopK")
	expect("SetPolicy Window", s.SetPolicy(policy(func(p *PolicyParams) { p.Window = wrap + 8 })),
		StatusInvalidArgument, "Window")
	expect("SetPolicy Kind", s.SetPolicy(policy(func(p *PolicyParams) { p.Kind = wrap + PolicyGreedy })),
		StatusInvalidArgument, "Kind")
	_, err = NewPolicy(policy(func(p *PolicyParams) {}), nil, nil, wrap)
	expect("NewPolicy sequence", err, StatusInvalidArgument, "sequence")
	expect("Load Threads", load(ModelOptions{Threads: wrap + 1}), StatusInvalidArgument, "Threads")
	expect("Load Device", load(ModelOptions{Device: wrap}), StatusInvalidArgument, "Device")
	expect("Load Weights", load(ModelOptions{Weights: wrap + WeightsBF16}), StatusInvalidArgument, "Weights")
	expect("Load Backend", load(ModelOptions{Backend: wrap + BackendCPU}), StatusInvalidArgument, "Backend")
	expect("Load FileAccess", load(ModelOptions{FileAccess: wrap + FileAccessRead}), StatusInvalidArgument,
		"FileAccess")
	tok := m.Tokenizer()
	if tok == nil {
		t.Fatal("reset-arith-4m has no tokenizer")
	}
	_, err = tok.ChatFormat([]Message{{Role: "user", Content: "2+2?"}}, ChatOptions{Template: wrap + 4})
	expect("ChatFormat Template", err, StatusInvalidArgument, "Template")
}

// -------------------------------------------------------------------- NUL

// C reads these strings up to their first NUL: each would silently become
// another, valid, argument.
func TestStringsWithANULAreRefused(t *testing.T) {
	expect := func(name string, err error, argument string) {
		t.Helper()
		var e *Error
		if !errors.As(err, &e) || e.Status != StatusInvalidArgument || !strings.Contains(e.Message, argument) {
			t.Errorf("%s: got %v, want RESET_ERR_INVALID_ARGUMENT naming %s", name, err, argument)
		}
	}
	m, err := Load(arithDir()+"\x00/elsewhere", ModelOptions{Backend: BackendCPU})
	if err == nil {
		m.Close()
	}
	expect("Load", err, "path")
	tok, err := LoadTokenizer(arithDir() + "\x00/elsewhere")
	if err == nil {
		tok.Close()
	}
	expect("LoadTokenizer", err, "path")

	m = arith(t)
	defer m.Close()
	_, err = m.Tokenizer().ChatFormat([]Message{{Role: "system", Content: "Be brief."}, {Role: "user\x00assistant", Content: "2+2?"}}, DefaultChat())
	expect("ChatFormat role", err, "messages[1].Role")
	// Content has its length, so a NUL in it is text, not an end.
	if _, err := m.Tokenizer().ChatFormat([]Message{{Role: "user", Content: "2+2?\x00"}}, DefaultChat()); err != nil {
		t.Errorf("ChatFormat with a NUL in the content: %v", err)
	}

	p := ReSET(1.0, -1, -1, 8)
	p.Preset = "Qwen3-8B\x00-mine"
	policy, err := NewPolicy(p, []int32{5}, []int32{6}, 0)
	if err == nil {
		policy.Close()
	}
	expect("NewPolicy preset", err, "Preset")
	s, err := m.NewSession(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	expect("SetPolicy preset", s.SetPolicy(p), "Preset")
	// A stop string "\n" would end generations "\n\x00User:" never ends.
	expect("SetStop string", s.SetStop(StopOptions{Strings: []string{"ab", "\n\x00User:"}}), "StopOptions.Strings[1]")
	// C reads dir + "/sequence\x00/elsewhere" as dir + "/sequence": a save would write that file, a load read it.
	dir := t.TempDir()
	if err := s.Prefill(context.Background(), []int32{5, 6, 7}); err != nil {
		t.Fatal(err)
	}
	expect("SaveSequence path", s.SaveSequence(0, dir+"/sequence\x00/elsewhere"), "path")
	if _, err := os.Stat(dir + "/sequence"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("SaveSequence with a NUL in the path wrote %s/sequence (%v)", dir, err)
	}
	if err := s.SaveSequence(0, dir+"/sequence"); err != nil {
		t.Fatal(err)
	}
	expect("LoadSequence path", s.LoadSequence(0, dir+"/sequence\x00/elsewhere"), "path")
}
