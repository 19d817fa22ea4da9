// Package reset is the Go binding of libreset (include/reset.h is the manual):
// load a model, open sessions, choose a sampling policy (greedy, fixed, ReSET),
// prefill, and stream decode steps with their per-token signals.
//
//	m, err := reset.Load("tests/fixtures/models/qwen3-tied", reset.ModelOptions{})
//	defer m.Close()
//	s, err := m.NewSession(256, 1)
//	defer s.Close()
//	s.SetPolicy(reset.Greedy())
//	s.Prefill(ctx, ids)
//	it := s.Generate(ctx, 32)
//	for it.Next() { fmt.Print(it.Step().Text) }
//	err = it.Err()
//
// Memory: every type owns its C handle; Close frees it (a finalizer frees a
// forgotten one, but Close is the contract).  A Session keeps its Model
// alive.  Strings and slices are copied across the boundary in both
// directions; every C string this package allocates is freed before the call
// returns.
//
// Threads (reset.h): a Model and a Tokenizer may be shared by goroutines.  A
// Session and a Policy are used by one goroutine at a time; Cancel (and a
// cancelled context) may reach a session from any goroutine.
//
// The binding calls the C ABI through cgo directly: reset.h is already a
// plain C interface, so a generated layer would add nothing cgo lacks.
// Build with CGO_CFLAGS=-I<include dir> CGO_LDFLAGS=-L<lib dir>, or with
// libreset installed where the compiler looks.
package reset

/*
#cgo LDFLAGS: -lreset
#include <stdlib.h>
#include "reset.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// ABIMajor is the ABI major version this package was written for.
const ABIMajor = C.RESET_VERSION_MAJOR

// Status is a reset_status value.
type Status int

// The statuses callers test for most; reset.h lists them all.
const (
	StatusInvalidArgument Status = C.RESET_ERR_INVALID_ARGUMENT
	StatusIO              Status = C.RESET_ERR_IO
	StatusUnsupported     Status = C.RESET_ERR_UNSUPPORTED
	StatusOutOfRange      Status = C.RESET_ERR_OUT_OF_RANGE
	StatusBadUTF8         Status = C.RESET_ERR_BAD_UTF8
	StatusBufferTooSmall  Status = C.RESET_ERR_BUFFER_TOO_SMALL
	StatusCancelled       Status = C.RESET_ERR_CANCELLED
)

// Error is a failed libreset call: its status, the status's constant name and the library's message.
type Error struct {
	Status  Status
	Name    string
	Message string
}

func (e *Error) Error() string { return e.Name + ": " + e.Message }

func statusName(s Status) string { return C.GoString(C.reset_status_name(C.reset_status(s))) }

// call runs one C call and, on failure, reads its message.  reset_last_error
// is per OS thread and cgo may move a goroutine between threads between two
// calls, so both run with the goroutine locked to its thread.
func call(f func() C.reset_status) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	status := f()
	if status == C.RESET_OK {
		return nil
	}
	return &Error{Status: Status(status), Name: statusName(Status(status)), Message: C.GoString(C.reset_last_error())}
}

// CheckABI refuses a library version (reset_version()) of another ABI major:
// its structs may differ, and calling it would corrupt memory silently.
func CheckABI(version uint32) error {
	if version/10000 == ABIMajor {
		return nil
	}
	return &Error{Status: StatusUnsupported, Name: statusName(StatusUnsupported), Message: fmt.Sprintf(
		"libreset %d.%d.%d has ABI major %d, but these bindings need %d",
		version/10000, version/100%100, version%100, version/10000, ABIMajor)}
}

func ensureABI() error { return CheckABI(uint32(C.reset_version())) }

// Version is the loaded library's version string, e.g. "0.1.0 (cpu)".
func Version() string { return C.GoString(C.reset_version_string()) }

// ---------------------------------------------------------------------- models

// Weights selects how linear layers are held (reset_weights).
type Weights int

const (
	WeightsAuto       Weights = C.RESET_WEIGHTS_AUTO
	WeightsBF16       Weights = C.RESET_WEIGHTS_BF16
	WeightsNVFP4W4A16 Weights = C.RESET_WEIGHTS_NVFP4_W4A16
	WeightsNVFP4W4A4  Weights = C.RESET_WEIGHTS_NVFP4_W4A4
)

// Backend selects the engine (reset_backend).
type Backend int

const (
	BackendAuto Backend = C.RESET_BACKEND_AUTO
	BackendCPU  Backend = C.RESET_BACKEND_CPU
	BackendCUDA Backend = C.RESET_BACKEND_CUDA
)

// ModelOptions are reset_model_options; the zero value is the library's defaults.
type ModelOptions struct {
	Weights        Weights
	Backend        Backend
	QuantizeLMHead bool
	Device         int
	Threads        int
}

// Model is a loaded model, immutable and shareable by goroutines.
type Model struct{ raw *C.reset_model }

// Load loads a Hugging Face model directory (reset_model_load).
func Load(path string, options ModelOptions) (*Model, error) {
	if err := ensureABI(); err != nil {
		return nil, err
	}
	var opts C.reset_model_options
	C.reset_model_options_init(&opts)
	opts.weights = C.reset_weights(options.Weights)
	opts.backend = C.reset_backend(options.Backend)
	if options.QuantizeLMHead {
		opts.quantize_lm_head = 1
	}
	opts.device = C.int32_t(options.Device)
	opts.threads = C.int32_t(options.Threads)
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var raw *C.reset_model
	if err := call(func() C.reset_status { return C.reset_model_load(cpath, &opts, &raw) }); err != nil {
		return nil, err
	}
	m := &Model{raw: raw}
	runtime.SetFinalizer(m, (*Model).Close)
	return m, nil
}

// Close frees the model; sessions made from it keep it alive until they close.
func (m *Model) Close() error {
	if m.raw != nil {
		C.reset_model_free(m.raw)
		m.raw = nil
		runtime.SetFinalizer(m, nil)
	}
	return nil
}

// VocabSize is the model's vocabulary size.
func (m *Model) VocabSize() (int, error) {
	var info C.reset_model_info
	C.reset_model_info_init(&info)
	err := call(func() C.reset_status { return C.reset_model_get_info(m.raw, &info) })
	return int(info.vocab_size), err
}

// Tokenizer is the tokenizer the model directory carries, or nil.  It belongs
// to the model: do not Close it, and do not use it after the model is closed.
func (m *Model) Tokenizer() *Tokenizer {
	raw := C.reset_model_tokenizer(m.raw)
	if raw == nil {
		return nil
	}
	return &Tokenizer{raw: raw, owner: m}
}

// -------------------------------------------------------------------- policies

// PolicyKind is reset_policy_kind.
type PolicyKind int

const (
	PolicyGreedy  PolicyKind = C.RESET_POLICY_GREEDY
	PolicyFixed   PolicyKind = C.RESET_POLICY_FIXED
	PolicyReSET   PolicyKind = C.RESET_POLICY_RESET
	PolicyEntropy PolicyKind = C.RESET_POLICY_ENTROPY
)

// PolicyParams are reset_policy_params; start from DefaultPolicy, Greedy or ReSET.
type PolicyParams struct {
	Kind        PolicyKind
	Temperature float32
	TopK        int
	TopP        float32
	MinP        float32
	Seed        uint64
	THigh       float32
	TLow        float32 // < 0: the model's preset
	Tau0        float32 // < 0: the model's preset
	Window      int
	Preset      string // a row of the paper's table, "" = recognise the model
	ResetState  bool
}

// DefaultPolicy is the library's defaults (greedy).
func DefaultPolicy() PolicyParams {
	var p C.reset_policy_params
	C.reset_policy_params_init(&p)
	return PolicyParams{Kind: PolicyKind(p.kind), Temperature: float32(p.temperature), TopK: int(p.top_k),
		TopP: float32(p.top_p), MinP: float32(p.min_p), Seed: uint64(p.seed), THigh: float32(p.t_high),
		TLow: float32(p.t_low), Tau0: float32(p.tau0), Window: int(p.window)}
}

// Greedy is argmax decoding.
func Greedy() PolicyParams { return DefaultPolicy() }

// ReSET is the ReSET policy with explicit parameters (reset-algorithm.md).
func ReSET(tHigh, tLow, tau0 float32, window int) PolicyParams {
	p := DefaultPolicy()
	p.Kind, p.THigh, p.TLow, p.Tau0, p.Window = PolicyReSET, tHigh, tLow, tau0, window
	return p
}

// withC fills the C struct; its preset string lives only during f.
func (p PolicyParams) withC(f func(*C.reset_policy_params) C.reset_status) error {
	var c C.reset_policy_params
	C.reset_policy_params_init(&c)
	c.kind = C.reset_policy_kind(p.Kind)
	c.temperature = C.float(p.Temperature)
	c.top_k = C.int32_t(p.TopK)
	c.top_p = C.float(p.TopP)
	c.min_p = C.float(p.MinP)
	c.seed = C.uint64_t(p.Seed)
	c.t_high = C.float(p.THigh)
	c.t_low = C.float(p.TLow)
	c.tau0 = C.float(p.Tau0)
	c.window = C.int32_t(p.Window)
	if p.ResetState {
		c.reset_state = 1
	}
	if p.Preset != "" {
		c.preset = C.CString(p.Preset)
		defer C.free(unsafe.Pointer(c.preset))
	}
	return call(func() C.reset_status { return f(&c) })
}

// Decision is what a standalone policy decided for one token (reset_decision).
type Decision struct {
	Temperature, Entropy, StepEntropy, GlobalMean, Threshold float32
	StepIndex                                                int
	Boundary, Uncertain                                      bool
}

// Policy is the standalone ReSET policy, for logits computed by any engine.
type Policy struct{ raw *C.reset_policy }

// NewPolicy creates a standalone policy with its step delimiters (NL: ids of
// "\n"; DNL: ids whose text contains "\n\n") and its Philox sequence.
func NewPolicy(params PolicyParams, newlineIDs, doubleNewlineIDs []int32, sequence int) (*Policy, error) {
	if err := ensureABI(); err != nil {
		return nil, err
	}
	var opts C.reset_policy_options
	C.reset_policy_options_init(&opts)
	// The id arrays are copied by the library; C memory keeps cgo's pointer rules simple.
	nl, dnl := cInts(newlineIDs), cInts(doubleNewlineIDs)
	defer C.free(unsafe.Pointer(nl))
	defer C.free(unsafe.Pointer(dnl))
	opts.newline_ids, opts.n_newline_ids = nl, C.size_t(len(newlineIDs))
	opts.double_newline_ids, opts.n_double_newline_ids = dnl, C.size_t(len(doubleNewlineIDs))
	opts.sequence = C.int32_t(sequence)
	var raw *C.reset_policy
	err := params.withC(func(c *C.reset_policy_params) C.reset_status { return C.reset_policy_create(c, &opts, &raw) })
	if err != nil {
		return nil, err
	}
	p := &Policy{raw: raw}
	runtime.SetFinalizer(p, (*Policy).Close)
	return p, nil
}

func cInts(ids []int32) *C.int32_t {
	p := (*C.int32_t)(C.malloc(C.size_t(4 * (len(ids) + 1))))
	copy(unsafe.Slice((*int32)(unsafe.Pointer(p)), len(ids)), ids)
	return p
}

// SetParams replaces the parameters (the step state is kept unless ResetState).
func (p *Policy) SetParams(params PolicyParams) error {
	return params.withC(func(c *C.reset_policy_params) C.reset_status { return C.reset_policy_set_params(p.raw, c) })
}

func decision(d *C.reset_decision) Decision {
	return Decision{Temperature: float32(d.temperature), Entropy: float32(d.entropy),
		StepEntropy: float32(d.step_entropy), GlobalMean: float32(d.global_mean), Threshold: float32(d.threshold),
		StepIndex: int(d.step_index), Boundary: d.boundary != 0, Uncertain: d.uncertain != 0}
}

func floatsPtr(logits []float32) *C.float {
	if len(logits) == 0 {
		return nil
	}
	return (*C.float)(unsafe.Pointer(&logits[0]))
}

// Decide chooses the next token's temperature from its raw logits.
func (p *Policy) Decide(logits []float32) (Decision, error) {
	var d C.reset_decision
	C.reset_decision_init(&d)
	err := call(func() C.reset_status {
		return C.reset_policy_decide(p.raw, floatsPtr(logits), C.size_t(len(logits)), &d)
	})
	runtime.KeepAlive(logits)
	return decision(&d), err
}

// Sample decides, then draws the token as a session would; Accept it (or another) after.
func (p *Policy) Sample(logits []float32) (int32, Decision, error) {
	var d C.reset_decision
	C.reset_decision_init(&d)
	var token C.int32_t
	err := call(func() C.reset_status {
		return C.reset_policy_sample(p.raw, floatsPtr(logits), C.size_t(len(logits)), &token, &d)
	})
	runtime.KeepAlive(logits)
	return int32(token), decision(&d), err
}

// Accept records the token the sequence took.
func (p *Policy) Accept(token int32) error {
	return call(func() C.reset_status { return C.reset_policy_accept(p.raw, C.int32_t(token)) })
}

// Reset starts a new generation.
func (p *Policy) Reset() error { return call(func() C.reset_status { return C.reset_policy_reset(p.raw) }) }

// Close frees the policy.
func (p *Policy) Close() error {
	if p.raw != nil {
		C.reset_policy_free(p.raw)
		p.raw = nil
		runtime.SetFinalizer(p, nil)
	}
	return nil
}
