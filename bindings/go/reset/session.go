package reset

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
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
	// never reaches a freed session, and guards strayCancel.
	mu sync.Mutex
	// strayCancel: a context's cancel reached the library after the call it
	// meant to stop had passed its last check, so the request is still
	// pending and would cancel the next call (reset_session_cancel).
	strayCancel bool
}

// KVCache selects how a session stores its KV cache (reset_kv_cache).  Both
// backends round keys and values to it as they are written, so a CPU session
// computes with the same cache values a CUDA session reads.
type KVCache int

const (
	// KVCacheBF16 is the library's default (round to nearest even).
	KVCacheBF16 KVCache = 0
	// KVCacheFP8 is FP8 E4M3 (round to nearest even, saturating at +-448):
	// half the bytes of BF16, so long reasoning contexts decode faster and
	// fit in less memory, at a coarser rounding of every key and value.
	KVCacheFP8 KVCache = 1
	// KVCacheFP32 is the CPU backend only: unrounded, the reference without
	// cache rounding.  A CUDA model refuses it with StatusUnsupported.
	KVCacheFP32 KVCache = 2
)

// SessionOptions are the reset_session_options a caller sets, and what
// Session.Options reads back (0.9); DefaultSessionOptions gives the library's
// defaults (the zero value asks for 0 sequences, which NewSessionWith
// refuses).
type SessionOptions struct {
	MaxContext int // tokens per sequence; 0 = min(model maximum, 4096)
	Sequences  int // parallel sequences 1..8 sharing one prompt
	// KVCache is the cache's type; the zero value is KVCacheBF16, the
	// library's default.  A sequence file (SaveSequence) loads only into a
	// session with the same type.
	KVCache KVCache
	// TopLogprobs (0.4): how many of the most likely tokens each step reports
	// in Step.TopLogprobs, 0..20 (OpenAI's top_logprobs, vLLM's logprobs); 0 = none.
	TopLogprobs int
	// The CUDA backend's settings; the CPU backend takes them and ignores them.
	// Each zero value is the library's default.

	// Eager launches each kernel of a decode step one by one instead of
	// replaying the step's CUDA graph: slower, for comparison and debugging.
	Eager bool
	// PrefillGemmTokens (NVFP4 models): prompt chunks of at least this many
	// tokens (up to 256 per chunk) are prefilled through the GEMM path
	// (weights dequantized to FP16 a slice at a time, then cuBLAS with FP32
	// accumulation); shorter chunks run through the decode GEMV, 8 tokens per
	// pass.  0 = the measured crossover (docs/cuda-engine.md); -1 = never (GEMV
	// path only); below -1 is StatusInvalidArgument.  Both paths multiply the
	// same values; they differ in FP32 summation order.
	PrefillGemmTokens int
	// DisableProgrammaticLaunch turns off programmatic dependent launch (GPUs
	// from sm_90 on), which places each kernel of a step on the GPU while the
	// one before it finishes and hides most of the per-kernel launch ramp:
	// plain stream order instead, for comparison, with the same results.
	// false (reset.h's programmatic_launch 0) keeps it on where the GPU
	// supports it; true is programmatic_launch -1.
	DisableProgrammaticLaunch bool
}

// DefaultSessionOptions are reset_session_options_init's: min(model maximum,
// 4096) tokens, one sequence, a BF16 KV cache, no top logprobs, and the CUDA
// backend's graph replay, measured GEMM crossover and programmatic launch.
func DefaultSessionOptions() SessionOptions { return SessionOptions{Sequences: 1} }

// NewSession opens a session (reset_session_create); maxContext 0 means min(model, 4096).
func (m *Model) NewSession(maxContext, sequences int) (*Session, error) {
	if err := firstError(checkInt32(StatusInvalidArgument, "maxContext", maxContext),
		checkInt32(StatusInvalidArgument, "sequences", sequences)); err != nil {
		return nil, err
	}
	return m.NewSessionWith(SessionOptions{MaxContext: maxContext, Sequences: sequences})
}

// NewSessionWith opens a session with these options (reset_session_create); a
// TopLogprobs outside 0..20, a KVCache that is none of the constants or a
// PrefillGemmTokens below -1 is StatusInvalidArgument, and KVCacheFP32 on a
// CUDA model StatusUnsupported.
func (m *Model) NewSessionWith(options SessionOptions) (*Session, error) {
	if err := firstError(checkInt32(StatusInvalidArgument, "SessionOptions.MaxContext", options.MaxContext),
		checkInt32(StatusInvalidArgument, "SessionOptions.Sequences", options.Sequences),
		checkInt32(StatusInvalidArgument, "SessionOptions.KVCache", int(options.KVCache)),
		checkInt32(StatusInvalidArgument, "SessionOptions.TopLogprobs", options.TopLogprobs),
		checkInt32(StatusInvalidArgument, "SessionOptions.PrefillGemmTokens", options.PrefillGemmTokens)); err != nil {
		return nil, err
	}
	sequences := options.Sequences
	opts := native.NewReset_session_options()
	defer native.DeleteReset_session_options(opts)
	native.Reset_session_options_init(opts)
	opts.SetMax_context(options.MaxContext)
	opts.SetSequences(sequences)
	// Not checked against the constants here: any other value reaches the
	// library unchanged, and its refusal names the value.
	opts.SetKv_cache(native.Enum_SS_reset_kv_cache(options.KVCache))
	opts.SetTop_logprobs(options.TopLogprobs)
	opts.SetEager(flag(options.Eager))
	// Passed as it is too: the library refuses a value below -1 and names it.
	opts.SetPrefill_gemm_tokens(options.PrefillGemmTokens)
	if options.DisableProgrammaticLaunch {
		opts.SetProgrammatic_launch(-1) // reset.h's "off"; init's 0 is "on where the GPU supports it"
	}
	var raw uintptr
	if err := callKeeping(m, func() native.Enum_SS_reset_status { return native.Reset_session_create(m.raw, opts, &raw) }); err != nil {
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
	return params.withC(s, func(c native.Reset_policy_params) native.Enum_SS_reset_status {
		return native.Reset_set_policy(s.raw, c)
	})
}

// Policy is the policy in force (reset_session_get_policy): the model's own
// sampling (generation_config.json) until SetPolicy, then the last one set.
// TLow and Tau0 come resolved (a preset's or the recognised model's values),
// Preset is empty and ResetState false, so SetPolicy of what it returns
// changes nothing; a caller's "top-p 0.9" over the model's sampling is: get,
// change TopP, set.
func (s *Session) Policy() (PolicyParams, error) {
	c := native.NewReset_policy_params()
	defer native.DeleteReset_policy_params(c)
	// The struct_size init writes tells the library how much of it to fill.
	native.Reset_policy_params_init(c)
	err := callKeeping(s, func() native.Enum_SS_reset_status { return native.Reset_session_get_policy(s.raw, c) })
	if err != nil {
		return PolicyParams{}, err
	}
	return policyFromC(c), nil
}

// Options (0.9) are the options the session was created with
// (reset_session_get_options): MaxContext resolved (never 0; the
// MaxContext method's value), the rest as given, so NewSessionWith of what
// it returns opens a session like this one.
func (s *Session) Options() (SessionOptions, error) {
	c := native.NewReset_session_options()
	defer native.DeleteReset_session_options(c)
	// The struct_size init writes tells the library how much of it to fill.
	native.Reset_session_options_init(c)
	err := callKeeping(s, func() native.Enum_SS_reset_status { return native.Reset_session_get_options(s.raw, c) })
	if err != nil {
		return SessionOptions{}, err
	}
	return SessionOptions{MaxContext: c.GetMax_context(), Sequences: c.GetSequences(),
		KVCache: KVCache(c.GetKv_cache()), TopLogprobs: c.GetTop_logprobs(),
		Eager: c.GetEager() != 0, PrefillGemmTokens: c.GetPrefill_gemm_tokens(),
		DisableProgrammaticLaunch: c.GetProgrammatic_launch() != 0}, nil
}

// Cancel stops the running (or next) Prefill/Step with StatusCancelled.  Any goroutine.
func (s *Session) Cancel() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.strayCancel = false // the caller asks for the next call to be cancelled: no retry
	return s.requestCancel()
}

// requestCancel is reset_session_cancel; s.mu is held.
func (s *Session) requestCancel() error {
	return callKeeping(s, func() native.Enum_SS_reset_status { return native.Reset_session_cancel(s.raw) })
}

func isCancelled(err error) bool {
	e, ok := err.(*Error)
	return ok && e.Status == StatusCancelled
}

// whileRunning runs f, one prefill or decode call, with ctx's cancellation
// mapped to reset_session_cancel, and retries f once when its CANCELLED came
// from a stray cancel of an earlier call's context (see Prefill).
func (s *Session) whileRunning(ctx context.Context, f func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	issued := false // written by the watcher, read after it has exited
	var finished, watcher chan struct{}
	if ctx.Done() != nil {
		finished, watcher = make(chan struct{}), make(chan struct{})
		go func() {
			defer close(watcher)
			select {
			case <-ctx.Done():
				s.mu.Lock()
				// An error is a session closed meanwhile, with nothing to stop.
				issued = s.requestCancel() == nil
				s.mu.Unlock()
			case <-finished:
			}
		}()
	}
	err := f()
	consumedStray := false
	if isCancelled(err) {
		s.mu.Lock()
		stray := s.strayCancel
		s.strayCancel = false // this call consumed the pending request
		s.mu.Unlock()
		if stray && ctx.Err() == nil {
			// Not this call's cancel: a cancelled call leaves the session as
			// it was, so running it again is safe.
			err = f()
		} else {
			consumedStray = stray
		}
	}
	if watcher != nil {
		close(finished)
		<-watcher
	}
	// A cancel the call did not consume (or may not have: the CANCELLED it
	// got may have been the stray's) is pending for the next call.
	if issued && (!isCancelled(err) || consumedStray) {
		s.mu.Lock()
		s.strayCancel = true
		s.mu.Unlock()
	}
	return err
}

// Prefill appends prompt tokens to every sequence; ctx cancels it.
//
// A context cancelled just as a Prefill or Step finishes may reach the
// library after the call's last check: the call succeeds, and libreset keeps
// the request for the next call (reset_session_cancel).  The session
// remembers such a stray cancel, and when the next Prefill or Step returns
// StatusCancelled while its own ctx is not done, it runs once more (a
// cancelled call leaves the session as it was).  Cancel, by contrast, still
// cancels the next call when none is running, and Reset drops a stray
// cancel.
func (s *Session) Prefill(ctx context.Context, ids []int32) error {
	return s.whileRunning(ctx, func() error {
		return callKeeping(s, func() native.Enum_SS_reset_status { return native.Reset_prefill(s.raw, ids) })
	})
}

// PrefillSequence appends prompt tokens to one sequence only, after Prefill
// gave every sequence the shared prompt: the others are left as they were,
// and an ended sequence generates again.  ctx cancels it, as for Prefill.
func (s *Session) PrefillSequence(ctx context.Context, sequence int, ids []int32) error {
	if err := checkInt32(StatusOutOfRange, "sequence", sequence); err != nil {
		return err
	}
	return s.whileRunning(ctx, func() error {
		return callKeeping(s, func() native.Enum_SS_reset_status {
			return native.Reset_prefill_sequence(s.raw, sequence, ids)
		})
	})
}

// Logits are the raw logits of a sequence's last position.
func (s *Session) Logits(sequence int) ([]float32, error) {
	if err := checkInt32(StatusOutOfRange, "sequence", sequence); err != nil {
		return nil, err
	}
	out := make([]float32, s.vocab)
	err := callKeeping(s, func() native.Enum_SS_reset_status { return native.Reset_session_logits(s.raw, sequence, out) })
	return out, err
}

// Len is the number of tokens a sequence holds; -1 for a bad sequence (as in
// reset.h), including one outside the int32 range.
func (s *Session) Len(sequence int) int {
	if checkInt32(StatusOutOfRange, "sequence", sequence) != nil {
		return -1
	}
	n := native.Reset_session_length(s.raw, sequence)
	runtime.KeepAlive(s)
	return n
}

// MaxContext is the number of tokens each sequence can hold (the session's
// max_context, 0 resolved to min(model maximum, 4096)); -1 once closed.
func (s *Session) MaxContext() int {
	n := native.Reset_session_max_context(s.raw)
	runtime.KeepAlive(s)
	return n
}

// Reset forgets every token and drops a pending cancel request; the policy stays.
func (s *Session) Reset() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := callKeeping(s, func() native.Enum_SS_reset_status { return native.Reset_session_reset(s.raw) })
	if err == nil {
		s.strayCancel = false
	}
	return err
}

// Truncate (0.6) keeps the first length tokens of every sequence and forgets
// the rest (reset_truncate; llama.cpp's llama_memory_seq_rm).  A caller that
// edits, regenerates or re-renders a conversation cuts back to the longest
// prefix the session shares with its new prompt (Tokens) and prefills only
// the rest.  A sequence cut back holds what a new session with this one's
// policy and stop conditions holds after a Prefill of those tokens, but has
// no logits: its sampler starts over (so a seeded answer regenerated from
// the same prompt comes out the same), its held text is dropped, it no
// longer counts as ended, and Step and Logits return StatusState until it is
// prefilled with at least one token.  To regenerate from the very end of a
// prompt, cut one token less and prefill that token again.  A sequence that
// holds exactly length tokens is left as it is, logits included.  Nothing is
// computed.  Truncate(0) is Reset but for a pending cancel request, which
// stays.  On an error the session is unchanged: StatusOutOfRange (length
// negative, or more tokens than a sequence holds), StatusState (a session
// stopped by a device failure).
func (s *Session) Truncate(length int) error {
	if err := checkInt32(StatusOutOfRange, "length", length); err != nil {
		return err
	}
	return callKeeping(s, func() native.Enum_SS_reset_status { return native.Reset_truncate(s.raw, length) })
}

// TruncateSequence (0.6) is Truncate for one sequence
// (reset_truncate_sequence); the others are left exactly as they were.  A
// sequence cut back is prefilled again with PrefillSequence.  Its errors are
// Truncate's, and StatusOutOfRange for a sequence outside [0, sequences).
func (s *Session) TruncateSequence(sequence, length int) error {
	if err := firstError(checkInt32(StatusOutOfRange, "sequence", sequence),
		checkInt32(StatusOutOfRange, "length", length)); err != nil {
		return err
	}
	return callKeeping(s, func() native.Enum_SS_reset_status {
		return native.Reset_truncate_sequence(s.raw, sequence, length)
	})
}

// CopySequence (0.7) makes sequence to a copy of sequence from, which is
// left as it is (reset_copy_sequence; llama.cpp's llama_memory_seq_cp): to
// takes from's tokens, KV cache, logits, sampler state (the count of drawn
// tokens included), held text, whether it has ended and its MaxTokens count,
// and continues as from would, except that its draws are keyed by its own
// index: a sampled copy explores another continuation of the same state.
// No forward pass runs.  from == to does nothing.  On an error the session is
// unchanged: StatusOutOfRange (from or to outside [0, sequences)),
// StatusState (a session stopped by a device failure).
func (s *Session) CopySequence(from, to int) error {
	if err := firstError(checkInt32(StatusOutOfRange, "from", from),
		checkInt32(StatusOutOfRange, "to", to)); err != nil {
		return err
	}
	return callKeeping(s, func() native.Enum_SS_reset_status { return native.Reset_copy_sequence(s.raw, from, to) })
}

// SaveSequence (0.8) writes a sequence's state to the file at path
// (reset_save_sequence; llama.cpp's llama_state_seq_save_file), for
// LoadSequence to give to a sequence of this or another session of the same
// model, in this process or another: everything CopySequence copies.  The
// session's policy, stop conditions and logit bias are not saved.  The file is
// a safetensors file, written beside path and renamed onto it, so a failed
// save leaves what path held as it was.  The session is unchanged whatever the
// outcome.  Errors: StatusIO (the file cannot be written; the message names
// it and the system's reason), StatusOutOfRange (sequence outside [0,
// sequences)), StatusInvalidArgument (a path holding a NUL), StatusState (a
// session stopped by a device failure).
func (s *Session) SaveSequence(sequence int, path string) error {
	if err := firstError(checkInt32(StatusOutOfRange, "sequence", sequence), checkNoNUL("path", path)); err != nil {
		return err
	}
	return callKeeping(s, func() native.Enum_SS_reset_status { return native.Reset_save_sequence(s.raw, sequence, path) })
}

// LoadSequence (0.8) makes a sequence the one SaveSequence saved in the file
// at path (reset_load_sequence): it forgets what it held and continues as the
// saved sequence would have, except that its draws are keyed by its own index
// (as after CopySequence).  This session's policy, stop conditions and logit
// bias apply from the next Step.  The file must come from the same model,
// loaded with the same weights format, and from a session with the same KV
// cache type (SessionOptions.KVCache; Options tells a session's); the
// backend may differ.  On an error the session's sequences are unchanged:
// StatusIO (missing or unreadable), StatusFormat (not a libreset sequence
// file, or a malformed or truncated one), StatusUnsupported (a newer file
// format), StatusShape (another model, weights format or KV cache type; the
// message gives both), StatusContextOverflow (longer than MaxContext),
// StatusOutOfRange (sequence outside [0, sequences)), StatusInvalidArgument
// (a path holding a NUL), StatusState (a session stopped by a device failure).
func (s *Session) LoadSequence(sequence int, path string) error {
	if err := firstError(checkInt32(StatusOutOfRange, "sequence", sequence), checkNoNUL("path", path)); err != nil {
		return err
	}
	return callKeeping(s, func() native.Enum_SS_reset_status { return native.Reset_load_sequence(s.raw, sequence, path) })
}

// SaveSequenceBytes (0.9) is SaveSequence into memory
// (reset_save_sequence_to_memory; llama.cpp's llama_state_seq_get_data): the
// bytes SaveSequence would write to its file, for an application that keeps
// states in its own store, sends them to another process, or cannot afford
// the file's fsync.  LoadSequenceBytes gives them to a sequence of this or
// another session of the same model.  The library is asked for the size
// first, then fills a slice of that length.  The session is unchanged
// whatever the outcome.  Errors: StatusOutOfRange (sequence outside [0,
// sequences)), StatusState (a session stopped by a device failure).
func (s *Session) SaveSequenceBytes(sequence int) ([]byte, error) {
	if err := checkInt32(StatusOutOfRange, "sequence", sequence); err != nil {
		return nil, err
	}
	// reset.h's idiom: the first call, with no room, asks the size; the second fills that many bytes (the
	// size holds until the sequence changes, which nothing here does).
	var state []byte
	for {
		var n int
		err := callKeeping(s, func() native.Enum_SS_reset_status {
			return native.Reset_save_sequence_to_memory(s.raw, sequence, state, &n)
		})
		if e, ok := err.(*Error); ok && e.Status == StatusBufferTooSmall && n > len(state) {
			state = make([]byte, n)
			continue
		}
		if err != nil {
			return nil, err
		}
		return state[:n], nil
	}
}

// LoadSequenceBytes (0.9) is LoadSequence from memory
// (reset_load_sequence_from_memory; llama.cpp's llama_state_seq_set_data):
// data is what SaveSequenceBytes returned, or a sequence file's contents,
// read during the call only.  The same checks, outcome and errors as
// LoadSequence, except that there is no file (no StatusIO) and messages name
// the bytes '<memory>'; an empty or truncated slice is StatusFormat.
func (s *Session) LoadSequenceBytes(sequence int, data []byte) error {
	if err := checkInt32(StatusOutOfRange, "sequence", sequence); err != nil {
		return err
	}
	return callKeeping(s, func() native.Enum_SS_reset_status {
		return native.Reset_load_sequence_from_memory(s.raw, sequence, data)
	})
}

// Tokens (0.6) are the ids of a sequence's context, in order, copied
// (reset_session_tokens): every prompt token and every generated token that
// entered the context, Len(sequence) of them (an end-of-generation id or a
// stop id that ended the sequence is not among them).  A sequence outside
// [0, sequences) is StatusOutOfRange.
func (s *Session) Tokens(sequence int) ([]int32, error) {
	if err := checkInt32(StatusOutOfRange, "sequence", sequence); err != nil {
		return nil, err
	}
	// reset.h's idiom: the first call, with no room, asks the size; the second reads that many.
	ids := []int32{}
	for {
		var n int
		err := callKeeping(s, func() native.Enum_SS_reset_status {
			return native.Reset_session_tokens(s.raw, sequence, ids, &n)
		})
		if e, ok := err.(*Error); ok && e.Status == StatusBufferTooSmall && n > len(ids) {
			ids = make([]int32, n)
			continue
		}
		if err != nil {
			return nil, err
		}
		return ids[:n], nil
	}
}

// StopOptions (0.5) are reset_stop_options: when a sequence stops before an
// end-of-generation id, as vLLM's stop, stop_token_ids, max_tokens and
// include_stop_str_in_output do.  The zero value stops nothing.  reset.h has
// the limits: 16 strings of 1..256 bytes, 256 ids.
type StopOptions struct {
	// Strings end a sequence (EndStop, with Step.StopIndex the string's index
	// here) at the first token after which its generated text contains one:
	// the text before the string is reported, the string itself only with
	// IncludeStopString, nothing after it.  The match is made on the text,
	// however it was split into tokens, at the first character where any
	// string is complete (of several complete there, the longest; of equal
	// ones, the first listed).  While the text ends with the beginning of a
	// string, that part is held back (Step.Text is shorter) until later tokens
	// complete or break the match; it is reported when the sequence ends
	// otherwise, and Session.HeldText reads it meanwhile (a caller that ends
	// the generation itself shows it).  Only text generated since the
	// sequence's last prefill is searched.  Each is valid UTF-8 of 1..256
	// bytes without a NUL, and the model needs a tokenizer.
	Strings []string
	// IDs end a sequence that draws one (EndStop, Step.StopIndex -1) as an
	// end-of-generation id does; the token's text is reported unless it is a
	// special token's.  Each in [0, vocabulary size).
	IDs []int32
	// MaxTokens is the most tokens a sequence generates after each prefill of
	// it: the step that draws the MaxTokens-th ends it (EndLength) unless that
	// token ends it otherwise.  Tokens generated before SetStop count.  0 = no limit.
	MaxTokens int
	// IncludeStopString reports a matched stop string as part of the text.
	IncludeStopString bool
	// IgnoreEOS: an end-of-generation id does not end a sequence; it is
	// reported and enters the context like any other token (vLLM's
	// ignore_eos, llama.cpp's --ignore-eos), so a benchmark decodes as many
	// tokens as it asks for.  Strings, IDs and MaxTokens still end it.
	IgnoreEOS bool
}

// SetStop sets the stop conditions of every sequence of the session, from the
// next Step on (reset_set_stop); they stay through Reset and SetPolicy, and
// replace the ones set before.  The session copies the strings and ids.  On
// an error the conditions in force are unchanged: StatusInvalidArgument (an
// empty string, one over 256 bytes or holding a NUL, more strings or ids than
// reset.h allows, a negative MaxTokens), StatusBadUTF8, StatusOutOfRange (an
// id outside the vocabulary), StatusUnsupported (strings on a model without a
// tokenizer).
func (s *Session) SetStop(options StopOptions) error {
	checks := []error{checkInt32(StatusInvalidArgument, "StopOptions.MaxTokens", options.MaxTokens)}
	for i, text := range options.Strings {
		checks = append(checks, checkNoNUL("StopOptions.Strings["+strconv.Itoa(i)+"]", text))
	}
	if err := firstError(checks...); err != nil {
		return err
	}
	c := native.NewReset_stop_options()
	defer native.DeleteReset_stop_options(c)
	native.Reset_stop_options_init(c)
	// The options keep C copies of the strings and ids (freed with them): C
	// memory must not point at Go memory once the call that lent it returns.
	for i, text := range options.Strings {
		if c.Add_string(text) != 0 {
			return newError(statusOutOfMemory, fmt.Sprintf("no memory for stop string %d", i))
		}
	}
	if c.Set_ids(options.IDs) != 0 {
		return newError(statusOutOfMemory, "no memory for the stop ids")
	}
	c.SetMax_tokens(options.MaxTokens)
	c.SetInclude_stop_string(flag(options.IncludeStopString))
	c.SetIgnore_eos(flag(options.IgnoreEOS))
	return callKeeping(s, func() native.Enum_SS_reset_status { return native.Reset_set_stop(s.raw, c) })
}

// ClearStop removes every stop condition (reset_set_stop with NULL options).
func (s *Session) ClearStop() error {
	return callKeeping(s, func() native.Enum_SS_reset_status {
		return native.Reset_set_stop(s.raw, native.SwigcptrReset_stop_options(0)) // NULL
	})
}

// HeldText (0.5) is the text a sequence has generated that no Step has
// reported yet, held back because it may begin a stop string ("" when none,
// and once the sequence has ended): reset_session_held_text.  A caller that
// ends a generation itself (its own budget, a user's interrupt) or prefills
// more of it (a reasoning budget's "</think>") shows this first, because
// the next prefill of the sequence forgets it, as Reset does.  The text is
// copied.  A sequence outside [0, sequences) is StatusOutOfRange.
func (s *Session) HeldText(sequence int) (string, error) {
	if err := checkInt32(StatusOutOfRange, "sequence", sequence); err != nil {
		return "", err
	}
	// Held text is shorter than the longest stop string, so one call is the rule; a longer one (a newer
	// library's) is read again with a buffer of its length.
	buffer := make([]byte, native.RESET_MAX_STOP_STRING_BYTES)
	for {
		var n int
		if err := callKeeping(s, func() native.Enum_SS_reset_status {
			return native.Reset_go_held_text(s.raw, sequence, buffer, &n)
		}); err != nil {
			return "", err
		}
		if n <= len(buffer) {
			return string(buffer[:n]), nil
		}
		buffer = make([]byte, n)
	}
}

// LogitBias (0.6) is one entry of a logit bias (reset_logit_bias; OpenAI's
// and vLLM's logit_bias, llama.cpp's --logit-bias): Bias is added to Token's
// logit.  It is finite in [-100, 100], or float32(math.Inf(-1)) to ban the
// token (-100 makes one all but impossible, +100 all but certain).
type LogitBias struct {
	Token int32
	Bias  float32
}

// SetLogitBias (0.6) sets the logit bias of every sequence of the session,
// from the next Step on (reset_set_logit_bias), replacing the one set
// before; an empty slice removes it, as ClearLogitBias does.  The session
// copies the entries (at most 1024).  A listed token's logit z becomes
// z + Bias (one FP32 addition) after the repetition penalties and before the
// temperature, the truncation and the draw, greedy included.  Step.Entropy,
// Step.Logprob, Step.TopLogprobs and the ReSET decision still see the raw
// logits, as Logits does.  The bias stays through Reset, Truncate and
// SetPolicy.  On an error the bias in force is unchanged:
// StatusInvalidArgument (more than 1024 entries, a Bias that is NaN, +Inf or
// outside [-100, 100] and not -Inf, a token listed twice, every token of the
// vocabulary banned), StatusOutOfRange (a token outside the vocabulary).
func (s *Session) SetLogitBias(bias []LogitBias) error {
	return withLogitBias(s, bias, func(entries uintptr, count int64) native.Enum_SS_reset_status {
		return native.Reset_set_logit_bias(s.raw, entries, count)
	})
}

// withLogitBias runs set, a C call on owner's handle, with bias as a C array
// of entries freed after the call (the library copies them); an empty bias
// crosses as no entries.
func withLogitBias(owner any, bias []LogitBias,
	set func(entries uintptr, count int64) native.Enum_SS_reset_status) error {
	if len(bias) == 0 {
		return callKeeping(owner, func() native.Enum_SS_reset_status { return set(0, 0) })
	}
	tokens, values := make([]int32, len(bias)), make([]float32, len(bias))
	for i, e := range bias {
		tokens[i], values[i] = e.Token, e.Bias
	}
	entries := native.Reset_go_logit_bias_new(tokens, values)
	if entries == 0 {
		return newError(statusOutOfMemory, "no memory for the logit bias")
	}
	defer native.Reset_go_logit_bias_free(entries)
	return callKeeping(owner, func() native.Enum_SS_reset_status { return set(entries, int64(len(bias))) })
}

// ClearLogitBias (0.6) removes the logit bias (reset_set_logit_bias with no
// entries).
func (s *Session) ClearLogitBias() error {
	return callKeeping(s, func() native.Enum_SS_reset_status { return native.Reset_set_logit_bias(s.raw, 0, 0) })
}

// EndReason is reset_end_reason: why a sequence stopped.
type EndReason int

const (
	EndNone     EndReason = 0 // still generating
	EndEOS      EndReason = 1 // it drew an end-of-generation id (that token is reported); never with IgnoreEOS
	EndFinished EndReason = 2 // it had already ended in an earlier step: Token is -1
	EndStop     EndReason = 3 // (0.5) it produced a stop string or a stop id (SetStop)
	EndLength   EndReason = 4 // (0.5) it generated StopOptions.MaxTokens tokens
)

// String is the reason's name as libreset's traces write it ("eos", "stop", ...).
func (r EndReason) String() string {
	switch r {
	case EndNone:
		return "none"
	case EndEOS:
		return "eos"
	case EndFinished:
		return "finished"
	case EndStop:
		return "stop"
	case EndLength:
		return "length"
	}
	return "EndReason(" + strconv.Itoa(int(r)) + ")"
}

// TokenLogprob (0.4) is one of a step's most likely tokens: its id and its log
// p, natural log, of softmax(raw logits), as Step.Logprob (-Inf for a logit of -Inf).
type TokenLogprob struct {
	Token   int32
	Logprob float32
}

// Step is what one decode step produced for one sequence, with the sampler's signals.
type Step struct {
	Sequence int
	Token    int32 // -1 when the sequence had ended earlier
	End      bool  // the sequence is done: it ended in this step or before
	// EndReason (0.5 adds EndStop and EndLength) says why it ended; EndNone while it generates.
	EndReason EndReason
	// StopIndex (0.5): with EndStop, the index of the matched string in StopOptions.Strings, or -1 for a
	// stop id; else -1.
	StopIndex int

	Entropy, StepEntropy, GlobalMean, Threshold, Temperature float32
	StepIndex                                                int
	Boundary, Uncertain                                      bool
	Text                                                     string // complete UTF-8, copied
	// Logprob (0.3): log p(Token), natural log, of softmax(raw logits), before the temperature, the
	// truncation and the penalties (vLLM's raw logprobs); NaN when there is no token.
	Logprob float32
	// TopLogprobs (0.4): the session's SessionOptions.TopLogprobs most likely tokens of the same raw
	// softmax, most likely first (ties in id order), copied; where Token is among them, its entry's
	// Logprob equals Logprob exactly.  Empty when the session asked for none or there is no token.
	TopLogprobs []TokenLogprob
}

// Step runs one decode step for every sequence; ctx cancels it (see Prefill
// for a context cancelled as the step finishes).
func (s *Session) Step(ctx context.Context) ([]Step, error) {
	// C memory: reset_step holds a pointer the library writes, which cgo forbids in Go memory.
	steps := native.Reset_go_steps_new(int64(s.sequences))
	if steps.Swigcptr() == 0 {
		return nil, newError(statusOutOfMemory, "no memory for the decode steps")
	}
	defer native.Reset_go_steps_free(steps)
	err := s.whileRunning(ctx, func() error {
		return callKeeping(s, func() native.Enum_SS_reset_status {
			return native.Reset_decode_step(s.raw, steps, int64(s.sequences), nil)
		})
	})
	if err != nil {
		return nil, err
	}
	out := make([]Step, s.sequences)
	for i := range out {
		c := native.Reset_go_steps_at(steps, int64(i))
		// The text and the top logprobs live in the session until its next call: copy them now.
		text := make([]byte, c.GetText_len())
		c.Copy_text(text)
		var top []TokenLogprob
		if n := c.GetTop_logprob_count(); n > 0 {
			tokens, logprobs := make([]int32, n), make([]float32, n)
			c.Copy_top_logprobs(tokens, logprobs)
			top = make([]TokenLogprob, n)
			for j := range top {
				top[j] = TokenLogprob{Token: tokens[j], Logprob: logprobs[j]}
			}
		}
		out[i] = Step{Sequence: c.GetSequence(), Token: int32(c.GetToken()), End: c.GetEnd_of_generation() != 0,
			EndReason: EndReason(c.GetEnd_reason()), StopIndex: c.GetStop_index(),
			Entropy: c.GetEntropy(), StepEntropy: c.GetStep_entropy(), GlobalMean: c.GetGlobal_mean(),
			Threshold: c.GetThreshold(), Temperature: c.GetTemperature(), StepIndex: c.GetStep_index(),
			Boundary: c.GetBoundary() != 0, Uncertain: c.GetUncertain() != 0, Text: string(text),
			Logprob: c.GetLogprob(), TopLogprobs: top}
	}
	runtime.KeepAlive(s) // the steps' text and top logprobs are the session's memory
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
