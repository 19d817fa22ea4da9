package reset

import (
	"context"
	"runtime"
	"sync"

	"libreset.dev/reset/internal/native"
)

// Session is a decoding session: KV cache and sampler state on a model.
type Session struct {
	raw       uintptr
	model     *Model // keeps the model (and its finalizer) from running first
	sequences int
	vocab     int
	// mu orders Close against a context's cancel goroutine, so a cancel
	// never reaches a freed session.
	mu sync.Mutex
}

// NewSession opens a session (reset_session_create); maxContext 0 means min(model, 4096).
func (m *Model) NewSession(maxContext, sequences int) (*Session, error) {
	opts := native.NewReset_session_options()
	defer native.DeleteReset_session_options(opts)
	native.Reset_session_options_init(opts)
	opts.SetMax_context(maxContext)
	opts.SetSequences(sequences)
	var raw uintptr
	if err := call(func() native.Enum_SS_reset_status { return native.Reset_session_create(m.raw, opts, &raw) }); err != nil {
		return nil, err
	}
	vocab, err := m.VocabSize()
	if err != nil {
		native.Reset_session_free(raw)
		return nil, err
	}
	if sequences < 1 {
		sequences = 1
	}
	s := &Session{raw: raw, model: m, sequences: sequences, vocab: vocab}
	runtime.SetFinalizer(s, (*Session).Close)
	return s, nil
}

// Close frees the session.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.raw != 0 {
		native.Reset_session_free(s.raw)
		s.raw = 0
		runtime.SetFinalizer(s, nil)
	}
	return nil
}

// SetPolicy replaces the session's policy.
func (s *Session) SetPolicy(params PolicyParams) error {
	return params.withC(func(c native.Reset_policy_params) native.Enum_SS_reset_status {
		return native.Reset_set_policy(s.raw, c)
	})
}

// Cancel stops the running (or next) Prefill/Step with StatusCancelled.  Any goroutine.
func (s *Session) Cancel() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return call(func() native.Enum_SS_reset_status { return native.Reset_session_cancel(s.raw) })
}

// whileRunning maps ctx's cancellation to reset_session_cancel for the duration of f.
func (s *Session) whileRunning(ctx context.Context, f func() error) error {
	if ctx.Done() == nil {
		return f()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	finished := make(chan struct{})
	watcher := make(chan struct{})
	go func() {
		defer close(watcher)
		select {
		case <-ctx.Done():
			s.Cancel() //nolint:errcheck // a session closed meanwhile has nothing to stop
		case <-finished:
		}
	}()
	err := f()
	close(finished)
	<-watcher
	return err
}

// Prefill appends prompt tokens to every sequence; ctx cancels it.
func (s *Session) Prefill(ctx context.Context, ids []int32) error {
	return s.whileRunning(ctx, func() error {
		return call(func() native.Enum_SS_reset_status { return native.Reset_prefill(s.raw, ids) })
	})
}

// Logits are the raw logits of a sequence's last position.
func (s *Session) Logits(sequence int) ([]float32, error) {
	out := make([]float32, s.vocab)
	err := call(func() native.Enum_SS_reset_status { return native.Reset_session_logits(s.raw, sequence, out) })
	return out, err
}

// Len is the number of tokens a sequence holds.
func (s *Session) Len(sequence int) int { return native.Reset_session_length(s.raw, sequence) }

// Reset forgets every token; the policy stays.
func (s *Session) Reset() error {
	return call(func() native.Enum_SS_reset_status { return native.Reset_session_reset(s.raw) })
}

// Step is what one decode step produced for one sequence, with the sampler's signals.
type Step struct {
	Sequence int
	Token    int32 // -1 when the sequence had ended earlier
	End      bool

	Entropy, StepEntropy, GlobalMean, Threshold, Temperature float32
	StepIndex                                                int
	Boundary, Uncertain                                      bool
	Text                                                     string // complete UTF-8, copied
}

// Step runs one decode step for every sequence; ctx cancels it.
func (s *Session) Step(ctx context.Context) ([]Step, error) {
	// C memory: reset_step holds a pointer the library writes, which cgo forbids in Go memory.
	steps := native.Reset_go_steps_new(int64(s.sequences))
	if steps.Swigcptr() == 0 {
		return nil, newError(statusOutOfMemory, "no memory for the decode steps")
	}
	defer native.Reset_go_steps_free(steps)
	err := s.whileRunning(ctx, func() error {
		return call(func() native.Enum_SS_reset_status {
			return native.Reset_decode_step(s.raw, steps, int64(s.sequences), nil)
		})
	})
	if err != nil {
		return nil, err
	}
	out := make([]Step, s.sequences)
	for i := range out {
		c := native.Reset_go_steps_at(steps, int64(i))
		// The text lives in the session until its next call: copy it now.
		text := make([]byte, c.GetText_len())
		c.Copy_text(text)
		out[i] = Step{Sequence: c.GetSequence(), Token: int32(c.GetToken()), End: c.GetEnd_of_generation() != 0,
			Entropy: c.GetEntropy(), StepEntropy: c.GetStep_entropy(), GlobalMean: c.GetGlobal_mean(),
			Threshold: c.GetThreshold(), Temperature: c.GetTemperature(), StepIndex: c.GetStep_index(),
			Boundary: c.GetBoundary() != 0, Uncertain: c.GetUncertain() != 0, Text: string(text)}
	}
	return out, nil
}

// Stream iterates sequence 0's steps, bufio.Scanner style:
//
//	it := s.Generate(ctx, 64)
//	for it.Next() { use(it.Step()) }
//	if err := it.Err(); err != nil { ... }
type Stream struct {
	session *Session
	ctx     context.Context
	left    int
	step    Step
	err     error
	done    bool
}

// Generate streams up to maxTokens steps of sequence 0, until it ends; ctx cancels it.
func (s *Session) Generate(ctx context.Context, maxTokens int) *Stream {
	return &Stream{session: s, ctx: ctx, left: maxTokens}
}

// Next advances to the next token; false at the end or on an error.
func (it *Stream) Next() bool {
	if it.done || it.left <= 0 {
		return false
	}
	it.left--
	steps, err := it.session.Step(it.ctx)
	if err != nil {
		it.err, it.done = err, true
		return false
	}
	it.step = steps[0]
	it.done = it.step.End
	return it.step.Token >= 0
}

// Step is the current step.
func (it *Stream) Step() Step { return it.step }

// Err is the error that ended the stream, if any.
func (it *Stream) Err() error { return it.err }
