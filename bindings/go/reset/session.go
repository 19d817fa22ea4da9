package reset

/*
#include <stdlib.h>
#include "reset.h"
*/
import "C"

import (
	"context"
	"runtime"
	"sync"
	"unsafe"
)

// Session is a decoding session: KV cache and sampler state on a model.
type Session struct {
	raw       *C.reset_session
	model     *Model // keeps the model (and its finalizer) from running first
	sequences int
	vocab     int
	// mu orders Close against a context's cancel goroutine, so a cancel
	// never reaches a freed session.
	mu sync.Mutex
}

// NewSession opens a session (reset_session_create); maxContext 0 means min(model, 4096).
func (m *Model) NewSession(maxContext, sequences int) (*Session, error) {
	var opts C.reset_session_options
	C.reset_session_options_init(&opts)
	opts.max_context = C.int32_t(maxContext)
	opts.sequences = C.int32_t(sequences)
	var raw *C.reset_session
	if err := call(func() C.reset_status { return C.reset_session_create(m.raw, &opts, &raw) }); err != nil {
		return nil, err
	}
	vocab, err := m.VocabSize()
	if err != nil {
		C.reset_session_free(raw)
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
	if s.raw != nil {
		C.reset_session_free(s.raw)
		s.raw = nil
		runtime.SetFinalizer(s, nil)
	}
	return nil
}

// SetPolicy replaces the session's policy.
func (s *Session) SetPolicy(params PolicyParams) error {
	return params.withC(func(c *C.reset_policy_params) C.reset_status { return C.reset_set_policy(s.raw, c) })
}

// Cancel stops the running (or next) Prefill/Step with StatusCancelled.  Any goroutine.
func (s *Session) Cancel() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return call(func() C.reset_status { return C.reset_session_cancel(s.raw) })
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
		var p *C.int32_t
		if len(ids) > 0 {
			p = (*C.int32_t)(unsafe.Pointer(&ids[0]))
		}
		err := call(func() C.reset_status { return C.reset_prefill(s.raw, p, C.size_t(len(ids))) })
		runtime.KeepAlive(ids)
		return err
	})
}

// Logits are the raw logits of a sequence's last position.
func (s *Session) Logits(sequence int) ([]float32, error) {
	out := make([]float32, s.vocab)
	err := call(func() C.reset_status {
		return C.reset_session_logits(s.raw, C.int32_t(sequence), (*C.float)(unsafe.Pointer(&out[0])), C.size_t(len(out)))
	})
	return out, err
}

// Len is the number of tokens a sequence holds.
func (s *Session) Len(sequence int) int { return int(C.reset_session_length(s.raw, C.int32_t(sequence))) }

// Reset forgets every token; the policy stays.
func (s *Session) Reset() error { return call(func() C.reset_status { return C.reset_session_reset(s.raw) }) }

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
	raw := (*C.reset_step)(C.calloc(C.size_t(s.sequences), C.size_t(unsafe.Sizeof(C.reset_step{}))))
	defer C.free(unsafe.Pointer(raw))
	steps := unsafe.Slice(raw, s.sequences)
	C.reset_step_init(raw, C.size_t(s.sequences))
	err := s.whileRunning(ctx, func() error {
		return call(func() C.reset_status { return C.reset_decode_step(s.raw, raw, C.size_t(s.sequences), nil) })
	})
	if err != nil {
		return nil, err
	}
	out := make([]Step, s.sequences)
	for i, c := range steps {
		out[i] = Step{Sequence: int(c.sequence), Token: int32(c.token), End: c.end_of_generation != 0,
			Entropy: float32(c.entropy), StepEntropy: float32(c.step_entropy), GlobalMean: float32(c.global_mean),
			Threshold: float32(c.threshold), Temperature: float32(c.temperature), StepIndex: int(c.step_index),
			Boundary: c.boundary != 0, Uncertain: c.uncertain != 0,
			// The text lives in the session until its next call: copy it now.
			Text: C.GoStringN(c.text, C.int(c.text_len))}
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
