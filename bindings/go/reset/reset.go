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
// alive, and every method keeps its receiver alive until its C call has
// returned.  Go strings and slices are lent to C for one call at most, and
// what C keeps (chat messages, tools and tool calls, delimiter ids, a preset
// name) is a C copy; every C string made for a call is freed before it
// returns, and every string coming back is copied into Go memory.
//
// Threads (reset.h): a Model and a Tokenizer may be shared by goroutines.  A
// Session and a Policy are used by one goroutine at a time; Cancel (and a
// cancelled context) may reach a session from any goroutine.
//
// Underneath is package libreset.dev/reset/internal/native, which SWIG
// generates at build time from include/reset.h (go generate
// ./internal/native); this package keeps to Go types and owns every C handle
// and struct it makes.  No callbacks cross the boundary, so no
// runtime/cgo.Handle is needed.  Build with CGO_CFLAGS=-I<include dir>
// CGO_LDFLAGS=-L<lib dir>, or with libreset installed where the compiler
// looks.
package reset

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"libreset.dev/reset/internal/native"
)

// ABIMajor and ABIMinor are the libreset version this package was written
// for: it runs on any ABIMajor.M with M >= ABIMinor (minors only append
// functions and struct fields; 0.2 appended PresencePenalty and
// FrequencyPenalty, 0.3 Step.Logprob, Decision.Logprob, RepetitionPenalty
// and Policy.AddContext, 0.4 SessionOptions.TopLogprobs and
// Step.TopLogprobs, 0.5 Session.SetStop, Session.HeldText, Step.EndReason and
// Step.StopIndex, 0.6 Session.Truncate, Session.TruncateSequence,
// Session.Tokens and Session.SetLogitBias, 0.7 Session.CopySequence and
// Policy.SetLogitBias, 0.8 Session.SaveSequence and Session.LoadSequence, 0.9
// Session.SaveSequenceBytes, Session.LoadSequenceBytes and Session.Options,
// 0.10 ModelInfo.CheckpointFormat and ModelInfo.KVCacheScales, 0.11
// ChatOptions.Tools and Message.ToolCalls, 0.12 ModelOptions.FileAccess).
const (
	ABIMajor = 0
	ABIMinor = 12
)

// SWIG gives reset.h's RESET_VERSION_MAJOR as a typed constant, and ABIMajor
// stays untyped so that it mixes with any integer: the build fails here
// (a negative constant does not convert to uint) unless both are equal.
const _ = uint(ABIMajor-native.RESET_VERSION_MAJOR) + uint(native.RESET_VERSION_MAJOR-ABIMajor)

// The same for a header older than ABIMinor, which lacks fields this package sets.
const _ = uint(native.RESET_VERSION_MINOR - ABIMinor)

// Status is a reset_status value.
type Status int

// The statuses callers test for most; reset.h lists them all.  Their values
// are reset.h's, written out because SWIG gives enum values as variables
// read from C, never as Go constants; checkHeader compares the two.
const (
	StatusInvalidArgument Status = 1
	StatusIO              Status = 3
	StatusFormat          Status = 4
	StatusUnsupported     Status = 5
	StatusShape           Status = 6
	StatusOutOfRange      Status = 7
	StatusContextOverflow Status = 8
	StatusBadUTF8         Status = 10
	StatusBufferTooSmall  Status = 11
	StatusCancelled       Status = 12
	StatusState           Status = 13

	statusOK          Status = 0
	statusOutOfMemory Status = 9
)

// Error is a failed libreset call: its status, the status's constant name and the library's message.
type Error struct {
	Status  Status
	Name    string
	Message string
}

func (e *Error) Error() string { return e.Name + ": " + e.Message }

func statusName(s Status) string { return native.Reset_status_name(native.Enum_SS_reset_status(s)) }

func newError(s Status, message string) *Error {
	return &Error{Status: s, Name: statusName(s), Message: message}
}

// call runs one C call and, on failure, reads its message.  reset_last_error
// is per OS thread and cgo may move a goroutine between threads between two
// calls, so both run with the goroutine locked to its thread.
func call(f func() native.Enum_SS_reset_status) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	status := Status(f())
	if status == statusOK {
		return nil
	}
	return newError(status, native.Reset_last_error())
}

// callKeeping is call for a C call on owner's handle.  After a method's last
// read of owner.raw nothing else may refer to owner, and the GC could run its
// finalizer (which frees the handle) while C still uses the handle: owner is
// kept reachable until the call has returned.
func callKeeping(owner any, f func() native.Enum_SS_reset_status) error {
	err := call(f)
	runtime.KeepAlive(owner)
	return err
}

// checkInt32 refuses an int that reset.h's int32_t cannot hold: SWIG's
// wrapper would cast it, silently wrapping it to another value.
func checkInt32(status Status, name string, v int) error {
	if v < math.MinInt32 || v > math.MaxInt32 {
		return newError(status, fmt.Sprintf("%s is %d, outside the int32 range that libreset takes", name, v))
	}
	return nil
}

// checkNoNUL refuses a string that crosses to C NUL-terminated but holds a
// NUL: C would read only the text before it (another path, role or preset).
func checkNoNUL(name, s string) error {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return newError(StatusInvalidArgument, fmt.Sprintf("%s holds a NUL byte at offset %d", name, i))
	}
	return nil
}

// firstError is the first non-nil error of errs.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// CheckABI refuses a library version (reset_version()) of another ABI major:
// its structs may differ, and calling it would corrupt memory silently.  It
// refuses an older minor too: that library lacks functions or fields this
// package uses, and would fail its calls with errors that name no version (a
// reset_policy_params larger than it knows is a bad struct_size to it).
func CheckABI(version uint32) error {
	major, minor, patch := version/10000, version/100%100, version%100
	if major != ABIMajor {
		return newError(StatusUnsupported, fmt.Sprintf(
			"libreset %d.%d.%d has ABI major %d, but these bindings need %d", major, minor, patch, major, ABIMajor))
	}
	if minor < ABIMinor {
		return newError(StatusUnsupported, fmt.Sprintf(
			"libreset %d.%d.%d is older than these bindings need (%d.%d or newer): "+
				"it lacks functions or fields they use", major, minor, patch, ABIMajor, ABIMinor))
	}
	return nil
}

// headerValue is one of this package's constants beside the value SWIG
// compiled from reset.h.
type headerValue struct {
	name         string
	ours, header int
}

func headerValues() []headerValue {
	return []headerValue{
		{"statusOK", int(statusOK), int(native.RESET_OK)},
		{"StatusInvalidArgument", int(StatusInvalidArgument), int(native.RESET_ERR_INVALID_ARGUMENT)},
		{"StatusIO", int(StatusIO), int(native.RESET_ERR_IO)},
		{"StatusFormat", int(StatusFormat), int(native.RESET_ERR_FORMAT)},
		{"StatusUnsupported", int(StatusUnsupported), int(native.RESET_ERR_UNSUPPORTED)},
		{"StatusShape", int(StatusShape), int(native.RESET_ERR_SHAPE)},
		{"StatusOutOfRange", int(StatusOutOfRange), int(native.RESET_ERR_OUT_OF_RANGE)},
		{"StatusContextOverflow", int(StatusContextOverflow), int(native.RESET_ERR_CONTEXT_OVERFLOW)},
		{"statusOutOfMemory", int(statusOutOfMemory), int(native.RESET_ERR_OUT_OF_MEMORY)},
		{"StatusBadUTF8", int(StatusBadUTF8), int(native.RESET_ERR_BAD_UTF8)},
		{"StatusBufferTooSmall", int(StatusBufferTooSmall), int(native.RESET_ERR_BUFFER_TOO_SMALL)},
		{"StatusCancelled", int(StatusCancelled), int(native.RESET_ERR_CANCELLED)},
		{"StatusState", int(StatusState), int(native.RESET_ERR_STATE)},
		{"WeightsAuto", int(WeightsAuto), int(native.RESET_WEIGHTS_AUTO)},
		{"WeightsBF16", int(WeightsBF16), int(native.RESET_WEIGHTS_BF16)},
		{"WeightsNVFP4W4A16", int(WeightsNVFP4W4A16), int(native.RESET_WEIGHTS_NVFP4_W4A16)},
		{"WeightsNVFP4W4A4", int(WeightsNVFP4W4A4), int(native.RESET_WEIGHTS_NVFP4_W4A4)},
		{"BackendAuto", int(BackendAuto), int(native.RESET_BACKEND_AUTO)},
		{"BackendCPU", int(BackendCPU), int(native.RESET_BACKEND_CPU)},
		{"BackendCUDA", int(BackendCUDA), int(native.RESET_BACKEND_CUDA)},
		{"FileAccessMap", int(FileAccessMap), int(native.RESET_FILE_ACCESS_MAP)},
		{"FileAccessRead", int(FileAccessRead), int(native.RESET_FILE_ACCESS_READ)},
		{"CheckpointUnquantized", int(CheckpointUnquantized), int(native.RESET_CHECKPOINT_UNQUANTIZED)},
		{"CheckpointModelOpt", int(CheckpointModelOpt), int(native.RESET_CHECKPOINT_MODELOPT)},
		{"CheckpointCompressedTensors", int(CheckpointCompressedTensors), int(native.RESET_CHECKPOINT_COMPRESSED_TENSORS)},
		{"KVCacheBF16", int(KVCacheBF16), int(native.RESET_KV_CACHE_BF16)},
		{"KVCacheFP8", int(KVCacheFP8), int(native.RESET_KV_CACHE_FP8)},
		{"KVCacheFP32", int(KVCacheFP32), int(native.RESET_KV_CACHE_FP32)},
		{"PolicyGreedy", int(PolicyGreedy), int(native.RESET_POLICY_GREEDY)},
		{"PolicyFixed", int(PolicyFixed), int(native.RESET_POLICY_FIXED)},
		{"PolicyReSET", int(PolicyReSET), int(native.RESET_POLICY_RESET)},
		{"PolicyEntropy", int(PolicyEntropy), int(native.RESET_POLICY_ENTROPY)},
		{"EndNone", int(EndNone), int(native.RESET_END_NONE)},
		{"EndEOS", int(EndEOS), int(native.RESET_END_EOS)},
		{"EndFinished", int(EndFinished), int(native.RESET_END_FINISHED)},
		{"EndStop", int(EndStop), int(native.RESET_END_STOP)},
		{"EndLength", int(EndLength), int(native.RESET_END_LENGTH)},
	}
}

var (
	headerOnce sync.Once
	headerErr  error
)

// checkHeader refuses to run when a constant of this package disagrees with
// the reset.h it was built against: the library would read another weight
// format, backend, file access, KV cache type or policy than the caller asked
// for, and the caller another end reason or checkpoint format than the
// library wrote.
func checkHeader() error {
	headerOnce.Do(func() {
		for _, v := range headerValues() {
			if v.ours != v.header {
				headerErr = newError(StatusUnsupported, fmt.Sprintf(
					"reset.%s is %d but reset.h says %d: package reset and the header it was built against disagree",
					v.name, v.ours, v.header))
				return
			}
		}
	})
	return headerErr
}

func ensureABI() error {
	if err := checkHeader(); err != nil {
		return err
	}
	return CheckABI(uint32(native.Reset_version()))
}

// Version is the loaded library's version string, e.g. "0.1.0 (cpu)".
func Version() string { return native.Reset_version_string() }

// ---------------------------------------------------------------------- models

// Weights selects how linear layers are held (reset_weights).
type Weights int

const (
	WeightsAuto       Weights = 0
	WeightsBF16       Weights = 1
	WeightsNVFP4W4A16 Weights = 2
	WeightsNVFP4W4A4  Weights = 3
)

// Backend selects the engine (reset_backend).
type Backend int

const (
	BackendAuto Backend = 0
	BackendCPU  Backend = 1
	BackendCUDA Backend = 2
)

// FileAccess is reset_file_access (0.12): how Load brings the safetensors
// files into memory.
type FileAccess int

const (
	// Mapped (mmap), the default: quick to open, the pages are the page
	// cache's, but a file truncated or rewritten in place while mapped kills
	// the process with SIGBUS, which no error can report.
	FileAccessMap FileAccess = 0
	// Read whole into memory the model owns (llama.cpp's --no-mmap): a file
	// changing while it is read is StatusIO, and the files are not read
	// afterwards.  Costs their size in host memory.
	FileAccessRead FileAccess = 1
)

// CheckpointFormat is reset_checkpoint_format (0.10): where a model's NVFP4
// weights come from.  A newer libreset of the same ABI major may report a
// value without a constant here; it is kept as its number.
type CheckpointFormat int

const (
	// BF16/F16/F32 tensors: held in BF16, or quantized to NVFP4 on load.
	CheckpointUnquantized CheckpointFormat = 0
	// An NVIDIA ModelOpt NVFP4 export.
	CheckpointModelOpt CheckpointFormat = 1
	// An llm-compressor NVFP4 export (compressed-tensors "nvfp4-pack-quantized").
	CheckpointCompressedTensors CheckpointFormat = 2
)

// String names the format ("unquantized", "modelopt", "compressed-tensors"),
// or CheckpointFormat(N) for one this package does not know.
func (f CheckpointFormat) String() string {
	switch f {
	case CheckpointUnquantized:
		return "unquantized"
	case CheckpointModelOpt:
		return "modelopt"
	case CheckpointCompressedTensors:
		return "compressed-tensors"
	}
	return "CheckpointFormat(" + strconv.Itoa(int(f)) + ")"
}

// ModelOptions are reset_model_options; the zero value is the library's defaults.
type ModelOptions struct {
	Weights        Weights
	Backend        Backend
	QuantizeLMHead bool
	Device         int
	Threads        int
	FileAccess     FileAccess // (0.12)
}

// Model is a loaded model, immutable and shareable by goroutines.
type Model struct{ raw uintptr }

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Load loads a Hugging Face model directory (reset_model_load).
func Load(path string, options ModelOptions) (*Model, error) {
	if err := ensureABI(); err != nil {
		return nil, err
	}
	if err := firstError(checkNoNUL("path", path),
		checkInt32(StatusInvalidArgument, "ModelOptions.Weights", int(options.Weights)),
		checkInt32(StatusInvalidArgument, "ModelOptions.Backend", int(options.Backend)),
		checkInt32(StatusInvalidArgument, "ModelOptions.Device", options.Device),
		checkInt32(StatusInvalidArgument, "ModelOptions.Threads", options.Threads),
		checkInt32(StatusInvalidArgument, "ModelOptions.FileAccess", int(options.FileAccess))); err != nil {
		return nil, err
	}
	opts := native.NewReset_model_options()
	defer native.DeleteReset_model_options(opts)
	native.Reset_model_options_init(opts)
	opts.SetWeights(native.Enum_SS_reset_weights(options.Weights))
	opts.SetBackend(native.Enum_SS_reset_backend(options.Backend))
	opts.SetQuantize_lm_head(flag(options.QuantizeLMHead))
	opts.SetDevice(options.Device)
	opts.SetThreads(options.Threads)
	opts.SetFile_access(native.Enum_SS_reset_file_access(options.FileAccess))
	var raw uintptr
	if err := call(func() native.Enum_SS_reset_status { return native.Reset_model_load(path, opts, &raw) }); err != nil {
		return nil, err
	}
	m := &Model{raw: raw}
	runtime.SetFinalizer(m, (*Model).Close)
	return m, nil
}

// Close frees the model; sessions made from it keep it alive until they close.
func (m *Model) Close() error {
	if m.raw != 0 {
		native.Reset_model_free(m.raw)
		m.raw = 0
		runtime.SetFinalizer(m, nil)
	}
	return nil
}

// VocabSize is the model's vocabulary size.
func (m *Model) VocabSize() (int, error) {
	info := native.NewReset_model_info()
	defer native.DeleteReset_model_info(info)
	native.Reset_model_info_init(info)
	err := callKeeping(m, func() native.Enum_SS_reset_status { return native.Reset_model_get_info(m.raw, info) })
	return info.GetVocab_size(), err
}

// ModelInfo is reset_model_info: what a loaded model is (Model.Info).
type ModelInfo struct {
	Architecture          string // model_type: "qwen3", "qwen2" or "llama"
	Layers                int
	HiddenSize            int
	IntermediateSize      int
	Heads                 int
	KVHeads               int
	HeadDim               int
	VocabSize             int
	MaxPositionEmbeddings int
	TiedEmbeddings        bool    // lm_head shares embed_tokens
	Weights               Weights // the resolved format, never WeightsAuto
	Backend               Backend // the resolved backend, never BackendAuto
	LMHeadNVFP4           bool
	Parameters            uint64
	WeightBytes           uint64 // bytes of weights as the backend holds them
	HostBytes             uint64 // host memory the model owns (mapped files not counted)
	DeviceBytes           uint64 // device memory the model owns
	EOSIDs                []int32
	BOSID                 int32 // -1 if none
	// CheckpointFormat (0.10) is the checkpoint's NVFP4 format, or
	// CheckpointUnquantized: the checkpoint's, not the weights' (a BF16
	// checkpoint loaded as NVFP4 is still unquantized).
	CheckpointFormat CheckpointFormat
	// KVCacheScales (0.10): the checkpoint carries calibrated FP8 KV-cache
	// scales (llm-compressor's kv_cache_scheme, ModelOpt's FP8 KV cache),
	// with which a KVCacheFP8 cache stores e4m3(x / scale); false: scale 1.
	KVCacheScales bool
}

// Info describes the model (reset_model_get_info).
func (m *Model) Info() (ModelInfo, error) {
	info := native.NewReset_model_info()
	defer native.DeleteReset_model_info(info)
	native.Reset_model_info_init(info)
	err := callKeeping(m, func() native.Enum_SS_reset_status { return native.Reset_model_get_info(m.raw, info) })
	if err != nil {
		return ModelInfo{}, err
	}
	eos := make([]int32, 0, 8)
	for i := 0; i < info.GetN_eos() && i < 8; i++ {
		eos = append(eos, int32(info.Eos_id(i)))
	}
	return ModelInfo{
		Architecture: info.GetArchitecture(), Layers: info.GetN_layers(), HiddenSize: info.GetHidden_size(),
		IntermediateSize: info.GetIntermediate_size(), Heads: info.GetN_heads(), KVHeads: info.GetN_kv_heads(),
		HeadDim: info.GetHead_dim(), VocabSize: info.GetVocab_size(),
		MaxPositionEmbeddings: info.GetMax_position_embeddings(), TiedEmbeddings: info.GetTied_embeddings() != 0,
		Weights: Weights(info.GetWeights()), Backend: Backend(info.GetBackend()),
		LMHeadNVFP4: info.GetLm_head_nvfp4() != 0, Parameters: info.GetN_parameters(),
		WeightBytes: info.GetWeight_bytes(), HostBytes: info.GetHost_bytes(), DeviceBytes: info.GetDevice_bytes(),
		EOSIDs: eos, BOSID: int32(info.GetBos_id()),
		CheckpointFormat: CheckpointFormat(info.GetCheckpoint_format()),
		KVCacheScales:    info.GetKv_cache_scales() != 0,
	}, nil
}

// Tokenizer is the tokenizer the model directory carries, or nil.  It belongs
// to the model: do not Close it, and do not use it after the model is closed.
func (m *Model) Tokenizer() *Tokenizer {
	raw := native.Reset_model_tokenizer(m.raw)
	runtime.KeepAlive(m)
	if raw == 0 {
		return nil
	}
	return &Tokenizer{raw: raw, owner: m}
}

// -------------------------------------------------------------------- policies

// PolicyKind is reset_policy_kind.
type PolicyKind int

const (
	PolicyGreedy  PolicyKind = 0
	PolicyFixed   PolicyKind = 1
	PolicyReSET   PolicyKind = 2
	PolicyEntropy PolicyKind = 3
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
	ResetState  bool   // also starts the penalties' token counts afresh
	// Each in [-2, 2], 0 = off: a token the sequence has generated c > 0 times
	// in this generation has its logit lowered to z - FrequencyPenalty*c - PresencePenalty.
	PresencePenalty  float32
	FrequencyPenalty float32
	// In [0.1, 10], 1 = off (0.3): every token of the sequence's context (prompt, earlier turns,
	// generated tokens) has its logit z > 0 divided by it, z <= 0 multiplied, before the two above.
	RepetitionPenalty float32
}

// DefaultPolicy is the library's defaults (greedy).
func DefaultPolicy() PolicyParams {
	p := native.NewReset_policy_params()
	defer native.DeleteReset_policy_params(p)
	native.Reset_policy_params_init(p)
	return policyFromC(p)
}

// policyFromC converts the C struct back.  Preset and ResetState stay empty:
// both reset_policy_params_init and reset_session_get_policy leave them NULL
// and 0, and a policy read back must not clear the step state when set again.
func policyFromC(p native.Reset_policy_params) PolicyParams {
	return PolicyParams{Kind: PolicyKind(p.GetKind()), Temperature: p.GetTemperature(), TopK: p.GetTop_k(),
		TopP: p.GetTop_p(), MinP: p.GetMin_p(), Seed: p.GetSeed(), THigh: p.GetT_high(),
		TLow: p.GetT_low(), Tau0: p.GetTau0(), Window: p.GetWindow(), PresencePenalty: p.GetPresence_penalty(),
		FrequencyPenalty: p.GetFrequency_penalty(), RepetitionPenalty: p.GetRepetition_penalty()}
}

// Greedy is argmax decoding.
func Greedy() PolicyParams { return DefaultPolicy() }

// ReSET is the ReSET policy with explicit parameters (reset-algorithm.md).
func ReSET(tHigh, tLow, tau0 float32, window int) PolicyParams {
	p := DefaultPolicy()
	p.Kind, p.THigh, p.TLow, p.Tau0, p.Window = PolicyReSET, tHigh, tLow, tau0, window
	return p
}

// withC fills the C struct for f; it and its copy of the preset are freed when
// f returns.  owner (nil for none) is the object whose handle f uses.
func (p PolicyParams) withC(owner any, f func(native.Reset_policy_params) native.Enum_SS_reset_status) error {
	if err := firstError(checkInt32(StatusInvalidArgument, "PolicyParams.Kind", int(p.Kind)),
		checkInt32(StatusInvalidArgument, "PolicyParams.TopK", p.TopK),
		checkInt32(StatusInvalidArgument, "PolicyParams.Window", p.Window),
		checkNoNUL("PolicyParams.Preset", p.Preset)); err != nil {
		return err
	}
	c := native.NewReset_policy_params()
	defer native.DeleteReset_policy_params(c)
	native.Reset_policy_params_init(c)
	c.SetKind(native.Enum_SS_reset_policy_kind(p.Kind))
	c.SetTemperature(p.Temperature)
	c.SetTop_k(p.TopK)
	c.SetTop_p(p.TopP)
	c.SetMin_p(p.MinP)
	c.SetSeed(p.Seed)
	c.SetT_high(p.THigh)
	c.SetT_low(p.TLow)
	c.SetTau0(p.Tau0)
	c.SetWindow(p.Window)
	c.SetReset_state(flag(p.ResetState))
	c.SetPresence_penalty(p.PresencePenalty)
	c.SetFrequency_penalty(p.FrequencyPenalty)
	c.SetRepetition_penalty(p.RepetitionPenalty)
	c.Set_preset(p.Preset)
	return callKeeping(owner, func() native.Enum_SS_reset_status { return f(c) })
}

// Decision is what a standalone policy decided for one token (reset_decision).
type Decision struct {
	Temperature, Entropy, StepEntropy, GlobalMean, Threshold float32
	StepIndex                                                int
	Boundary, Uncertain                                      bool
	// Logprob (0.3): Sample's drawn token's log p under softmax(raw logits), as Step.Logprob; NaN from Decide.
	Logprob float32
}

// Policy is the standalone ReSET policy, for logits computed by any engine.
type Policy struct{ raw uintptr }

// NewPolicy creates a standalone policy with its step delimiters (NL: ids of
// "\n"; DNL: ids whose text contains "\n\n") and its Philox sequence.
func NewPolicy(params PolicyParams, newlineIDs, doubleNewlineIDs []int32, sequence int) (*Policy, error) {
	if err := ensureABI(); err != nil {
		return nil, err
	}
	if err := checkInt32(StatusInvalidArgument, "sequence", sequence); err != nil {
		return nil, err
	}
	opts := native.NewReset_policy_options()
	defer native.DeleteReset_policy_options(opts)
	native.Reset_policy_options_init(opts)
	// The options keep C copies of the ids (freed with them): C memory must
	// not point at a Go slice once the call that lent it returns.
	opts.Set_newline_ids(newlineIDs)
	opts.Set_double_newline_ids(doubleNewlineIDs)
	opts.SetSequence(sequence)
	var raw uintptr
	err := params.withC(nil, func(c native.Reset_policy_params) native.Enum_SS_reset_status {
		return native.Reset_policy_create(c, opts, &raw)
	})
	if err != nil {
		return nil, err
	}
	p := &Policy{raw: raw}
	runtime.SetFinalizer(p, (*Policy).Close)
	return p, nil
}

// SetParams replaces the parameters (the step state and the penalties' token
// counts are kept unless ResetState).
func (p *Policy) SetParams(params PolicyParams) error {
	return params.withC(p, func(c native.Reset_policy_params) native.Enum_SS_reset_status {
		return native.Reset_policy_set_params(p.raw, c)
	})
}

// newDecision is an initialised reset_decision in C memory; the caller deletes it.
func newDecision() native.Reset_decision {
	d := native.NewReset_decision()
	native.Reset_decision_init(d)
	return d
}

func decision(d native.Reset_decision) Decision {
	return Decision{Temperature: d.GetTemperature(), Entropy: d.GetEntropy(), StepEntropy: d.GetStep_entropy(),
		GlobalMean: d.GetGlobal_mean(), Threshold: d.GetThreshold(), StepIndex: d.GetStep_index(),
		Boundary: d.GetBoundary() != 0, Uncertain: d.GetUncertain() != 0, Logprob: d.GetLogprob()}
}

// Decide chooses the next token's temperature from its raw logits.
func (p *Policy) Decide(logits []float32) (Decision, error) {
	d := newDecision()
	defer native.DeleteReset_decision(d)
	err := callKeeping(p, func() native.Enum_SS_reset_status { return native.Reset_policy_decide(p.raw, logits, d) })
	return decision(d), err
}

// Sample decides, then draws the token as a session would; Accept it (or another) after.
func (p *Policy) Sample(logits []float32) (int32, Decision, error) {
	d := newDecision()
	defer native.DeleteReset_decision(d)
	var token int32
	err := callKeeping(p, func() native.Enum_SS_reset_status { return native.Reset_policy_sample(p.raw, logits, &token, d) })
	return token, decision(d), err
}

// Accept records the token the sequence took.
func (p *Policy) Accept(token int32) error {
	return callKeeping(p, func() native.Enum_SS_reset_status { return native.Reset_policy_accept(p.raw, int(token)) })
}

// AddContext records context tokens the policy did not accept itself (the
// prompt, a user's turn), as a session does at every prefill: only the
// repetition penalty lowers them.  A negative id is StatusOutOfRange, and
// nothing is recorded.
func (p *Policy) AddContext(ids []int32) error {
	return callKeeping(p, func() native.Enum_SS_reset_status { return native.Reset_policy_add_context(p.raw, ids) })
}

// Reset starts a new sequence: it forgets the step state, the accepted
// tokens, the penalties' counts and the context tokens.
func (p *Policy) Reset() error {
	return callKeeping(p, func() native.Enum_SS_reset_status { return native.Reset_policy_reset(p.raw) })
}

// SetLogitBias (0.7) is Session.SetLogitBias for the standalone policy
// (reset_policy_set_logit_bias): from the next Sample on, a listed token's
// logit z becomes z + Bias after the penalties and before the temperature,
// the truncation and the draw; Decide, the entropy and Decision.Logprob
// still see the raw logits.  An empty slice removes it, as ClearLogitBias
// does; it stays through SetParams and Reset.  The policy knows no
// vocabulary, so Sample refuses logits that do not reach every listed token
// (StatusOutOfRange) and logits whose every unbanned entry is -Inf
// (StatusInvalidArgument).  On an error the bias in force is unchanged: the
// errors are Session.SetLogitBias's, StatusOutOfRange for a negative token.
func (p *Policy) SetLogitBias(bias []LogitBias) error {
	return withLogitBias(p, bias, func(entries uintptr, count int64) native.Enum_SS_reset_status {
		return native.Reset_policy_set_logit_bias(p.raw, entries, count)
	})
}

// ClearLogitBias (0.7) removes the policy's logit bias
// (reset_policy_set_logit_bias with no entries).
func (p *Policy) ClearLogitBias() error {
	return callKeeping(p, func() native.Enum_SS_reset_status { return native.Reset_policy_set_logit_bias(p.raw, 0, 0) })
}

// Close frees the policy.
func (p *Policy) Close() error {
	if p.raw != 0 {
		native.Reset_policy_free(p.raw)
		p.raw = 0
		runtime.SetFinalizer(p, nil)
	}
	return nil
}
