// device_model.cpp — copy a loaded model's weights to the GPU in the
// kernels' layouts (device_model.h says which).
#include "cuda/device_model.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "cuda/staged_copy.h"
#include "engine/device_engine.h"
#include "util/load_trace.h"
#include "util/threads.h"

namespace reset {

void use_device(int32_t device) { cuda_check(cudaSetDevice(device), "cudaSetDevice"); }

bool cuda_backend_available(std::string *why) {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) {
        cudaGetLastError();
        if (why)
            *why = status != cudaSuccess ? std::string("no usable CUDA device (") + cudaGetErrorString(status) + ")"
                                         : std::string("no CUDA device is present");
        return false;
    }
    return true;
}

uint64_t device_model_bytes(const DeviceModel &model) { return model.bytes; }

namespace {

// Memory a vector leaves unwritten on resize: the repack writes every byte of its output
// (kernels/nvfp4_gemv_layout.h), so zeroing an 8B model's 5.5 GB first was a wasted pass.
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
    template <typename U>
    struct rebind {
        using other = UninitializedAllocator<U>;
    };
    UninitializedAllocator() = default;
    template <typename U>
    UninitializedAllocator(const UninitializedAllocator<U> &) noexcept {}
    template <typename U>
    void construct(U *p) noexcept {
        ::new (static_cast<void *>(p)) U;  // default-initialized: left as it is
    }
    template <typename U, typename... Args>
    void construct(U *p, Args &&...args) {
        ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
    }
};
using RepackedBytes = std::vector<uint8_t, UninitializedAllocator<uint8_t>>;

// A linear group's parts as host data, ready to upload (built in parallel).
struct HostPart {
    bool nvfp4 = false;
    int64_t out_features = 0, in_features = 0, column = 0, padded_in = 0;
    Nvfp4GemvLayout layout;
    RepackedBytes codes, scales;  // repacked
    float tensor_scale = 0.0f, input_scale = 0.0f;
    std::vector<uint16_t> bf16;          // concatenated rows (empty when `borrowed` is used)
    const uint16_t *borrowed = nullptr;  // a single BF16 part: the loader's rows, no copy
    std::vector<float> bias;
};

struct HostLinear {
    std::vector<HostPart> parts;
    int64_t out_features = 0;
    bool fused_silu = false;
};

// The group's biases end to end (zeros for a part without one), or empty when none has a bias.
std::vector<float> concatenated_bias(const std::vector<const Linear *> &group) {
    std::vector<float> bias;
    bool any = false;
    for (const Linear *l : group) any |= !l->bias.empty();
    if (!any) return bias;
    for (const Linear *l : group) {
        if (l->bias.empty()) bias.insert(bias.end(), size_t(l->out_features), 0.0f);
        else bias.insert(bias.end(), l->bias.begin(), l->bias.end());
    }
    return bias;
}

bool can_fuse_nvfp4(const std::vector<const Linear *> &group) {
    for (const Linear *l : group) {
        if (l->format != LinearFormat::NVFP4) return false;
        if (l->tensor_scale != group[0]->tensor_scale || l->input_scale != group[0]->input_scale ||
            l->padded_in != group[0]->padded_in)
            return false;
    }
    return true;
}

bool all_bf16(const std::vector<const Linear *> &group) {
    for (const Linear *l : group)
        if (l->format != LinearFormat::BF16) return false;
    return true;
}

HostPart nvfp4_part(const std::vector<const Linear *> &group, bool gate_up, Nvfp4GemvDecode decode) {
    HostPart p;
    p.nvfp4 = true;
    p.padded_in = group[0]->padded_in;
    p.in_features = group[0]->in_features;
    p.tensor_scale = group[0]->tensor_scale;
    p.input_scale = group[0]->input_scale;
    int64_t rows = 0;
    std::vector<Nvfp4RepackPart> parts;  // the group's rows where the loader holds them, no copy
    for (const Linear *l : group) {
        rows += l->out_features;
        parts.push_back({l->codes.data(), l->scales.data(), l->out_features});
    }
    p.layout = nvfp4_gemv_layout(rows, p.padded_in, gate_up, decode);
    p.out_features = p.layout.outputs();
    p.codes.resize(p.layout.code_bytes());
    p.scales.resize(p.layout.scale_bytes());
    nvfp4_gemv_repack(p.layout, parts.data(), parts.size(), p.codes.data(), p.scales.data());
    p.bias = concatenated_bias(group);
    return p;
}

HostPart bf16_part(const std::vector<const Linear *> &group) {
    HostPart p;
    p.in_features = group[0]->in_features;
    for (const Linear *l : group) p.out_features += l->out_features;
    if (group.size() == 1) {
        p.borrowed = group[0]->dense.data;
    } else {
        for (const Linear *l : group)
            p.bf16.insert(p.bf16.end(), l->dense.data, l->dense.data + l->dense.rows * l->dense.cols);
    }
    p.bias = concatenated_bias(group);
    return p;
}

// A group of linears that read the same input: one GEMV when their formats
// allow, else one per linear, each into its own columns.
HostLinear prepare_group(const std::vector<const Linear *> &group, bool gate_up, Nvfp4GemvDecode decode) {
    HostLinear h;
    for (const Linear *l : group) h.out_features += l->out_features;
    if (can_fuse_nvfp4(group)) {
        h.parts.push_back(nvfp4_part(group, gate_up, decode));
        if (gate_up) {
            h.fused_silu = true;
            h.out_features /= 2;
        }
    } else if (all_bf16(group)) {
        h.parts.push_back(bf16_part(group));
    } else {
        int64_t column = 0;
        for (const Linear *l : group) {
            HostPart p = l->format == LinearFormat::NVFP4 ? nvfp4_part({l}, false, decode) : bf16_part({l});
            p.column = column;
            column += l->out_features;
            h.parts.push_back(std::move(p));
        }
    }
    return h;
}

struct HostLayer {
    HostLinear qkv, o, gate_up, down;
};

class Uploader {
public:
    Uploader(DeviceModel &model, int threads) : m_(model), copier_(kUploadHalfBytes, threads) {}

    // Device memory for `n` bytes at `data`, which are copied there by the next flush().
    const void *bytes(const void *data, size_t n, const std::string &what) {
        if (n == 0) return nullptr;
        PhaseClock clock;
        m_.buffers.emplace_back(n, what);
        allocation_seconds_ += clock.split();
        m_.bytes += n;
        pending_.push_back({const_cast<void *>(data), m_.buffers.back().as(), n});  // only read
        return m_.buffers.back().as();
    }
    // Copy what bytes() reserved since the last flush (its host data may then be freed).  On the
    // legacy stream, after the buffers' zeroing; through page-locked staging (cuda/staged_copy.h),
    // which session 36 measured at 3× the driver's pageable copies for a sequence's K/V.
    void flush() {
        PhaseClock clock;
        copier_.upload(pending_, nullptr, "weight upload");
        pending_.clear();
        upload_seconds_ += clock.split();
    }
    // RESET_LOAD_TRACE: the device allocations (cudaMalloc and the zeroing) and the copies (every
    // byte the model holds on the device went through bytes()).
    void trace() const {
        load_trace("device allocation %.3f s; upload %.3f s, %.2f GB (%.1f GB/s)", allocation_seconds_,
                   upload_seconds_, double(m_.bytes) * 1e-9,
                   upload_seconds_ > 0 ? double(m_.bytes) * 1e-9 / upload_seconds_ : 0.0);
    }
    template <typename T, typename Allocator>
    const T *vector(const std::vector<T, Allocator> &v, const std::string &what) {
        return static_cast<const T *>(bytes(v.data(), v.size() * sizeof(T), what));
    }

    DeviceLinear linear(const HostLinear &h, const std::string &what) {
        DeviceLinear d;
        d.out_features = h.out_features;
        d.fused_silu = h.fused_silu;
        for (const HostPart &p : h.parts) {
            DeviceLinearPart part;
            part.nvfp4 = p.nvfp4;
            part.out_features = p.out_features;
            part.in_features = p.in_features;
            part.column = p.column;
            part.bias = vector(p.bias, what + " bias");
            if (p.nvfp4) {
                part.gemv.layout = p.layout;
                part.gemv.codes = vector(p.codes, what + " codes");
                part.gemv.scales = vector(p.scales, what + " scales");
                part.gemv.tensor_scale = p.tensor_scale;
                part.padded_in = p.padded_in;
                part.input_scale = p.input_scale;
                m_.max_padded_in = std::max(m_.max_padded_in, p.padded_in);
                m_.gemv_workspace_bytes = std::max(m_.gemv_workspace_bytes, nvfp4_gemv_workspace_bytes(p.layout));
            } else if (p.borrowed) {
                part.bf16 = static_cast<const uint16_t *>(
                    bytes(p.borrowed, size_t(p.out_features * p.in_features) * sizeof(uint16_t), what));
            } else {
                part.bf16 = vector(p.bf16, what);
            }
            d.parts.push_back(part);
        }
        return d;
    }

private:
    // Halves of 16 MB: a Qwen3-8B NVFP4 layer (~150 MB) is ten of them.
    static constexpr size_t kUploadHalfBytes = size_t(16) << 20;
    DeviceModel &m_;
    StagedCopier copier_;
    std::vector<CopySegment> pending_;
    double allocation_seconds_ = 0, upload_seconds_ = 0;
};

}  // namespace

std::shared_ptr<DeviceModel> upload_model(const LoadedModel &model, int32_t device) {
    int count = 0;
    cuda_check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    if (device >= count) fail(RESET_ERR_BACKEND, "CUDA device ", device, " does not exist (", count, " present)");
    use_device(device);
    const ModelConfig &c = model.config;
    const ModelWeights &w = model.weights;
    if (c.head_dim != 16 && c.head_dim != 32 && c.head_dim != 64 && c.head_dim != 128)
        fail(RESET_ERR_UNSUPPORTED, "the CUDA backend supports head_dim 16, 32, 64 and 128; this model has ",
             c.head_dim);
    if (c.n_heads % c.n_kv_heads != 0 || c.n_heads / c.n_kv_heads > 8)
        fail(RESET_ERR_UNSUPPORTED, "the CUDA backend supports up to 8 query heads per KV head; this model has ",
             c.n_heads, " / ", c.n_kv_heads);

    auto m = std::make_shared<DeviceModel>();
    m->device = device;
    m->w4a4 = model.weights_format == RESET_WEIGHTS_NVFP4_W4A4;
    const Nvfp4GemvDecode decode = nvfp4_gemv_device_decode();

    // Repack every layer on all cores (0.33-0.47 s for Qwen3-8B on the H100 machine's host, session 37), then upload.
    // Repacking on a thread of its own while the layers before upload did not pay (session 38 run 6: the two share
    // the host's memory bandwidth, the upload fell from 24-27 to 15-16 GB/s, the load took as long).
    PhaseClock clock;
    std::vector<HostLayer> host(w.layers.size());
    std::string error;
    reset_status error_status = RESET_OK;
    // Nothing may leave an OpenMP loop (it would end the host process): a repack error (a
    // negative block scale) or host memory running out fails the load instead, with the first
    // error's status.
    const auto record_error = [&](reset_status status, const char *message) {
#pragma omp critical
        if (error_status == RESET_OK) {
            error_status = status;
            try {
                error = message;
            } catch (...) {  // no memory for the message: the status says enough
            }
        }
    };
#pragma omp parallel for schedule(dynamic)
    for (size_t l = 0; l < w.layers.size(); ++l) {
        try {
            const LayerWeights &layer = w.layers[l];
            host[l].qkv = prepare_group({&layer.q, &layer.k, &layer.v}, false, decode);
            host[l].o = prepare_group({&layer.o}, false, decode);
            host[l].gate_up = prepare_group({&layer.gate, &layer.up}, true, decode);
            host[l].down = prepare_group({&layer.down}, false, decode);
        } catch (const Error &e) {
            record_error(e.status(), e.what());
        } catch (const std::bad_alloc &) {
            record_error(RESET_ERR_OUT_OF_MEMORY, "out of host memory repacking the weights into the GEMV layout");
        } catch (...) {
            record_error(RESET_ERR_INTERNAL, "an unexpected exception repacking the weights into the GEMV layout");
        }
    }
    if (error_status != RESET_OK)
        fail(error_status, error.empty() ? "repacking the weights into the GEMV layout failed" : error);
    load_trace("repack into the GEMV layout %.3f s", clock.split());

    Uploader up(*m, std::min(openmp_threads(model.threads), 8));  // 8 copy threads saturate the host's memory
    m->embed = static_cast<const uint16_t *>(
        up.bytes(w.embed.data, size_t(w.embed.rows * w.embed.cols) * sizeof(uint16_t), "embeddings"));
    for (size_t l = 0; l < w.layers.size(); ++l) {
        const LayerWeights &layer = w.layers[l];
        const std::string name = "layer " + std::to_string(l);
        DeviceLayer d;
        d.input_norm = up.vector(layer.input_norm, name + " input norm");
        d.post_attention_norm = up.vector(layer.post_attention_norm, name + " post-attention norm");
        d.q_norm = up.vector(layer.q_norm, name + " q norm");
        d.k_norm = up.vector(layer.k_norm, name + " k norm");
        d.qkv = up.linear(host[l].qkv, name + " qkv");
        d.o = up.linear(host[l].o, name + " o_proj");
        d.gate_up = up.linear(host[l].gate_up, name + " gate/up");
        d.down = up.linear(host[l].down, name + " down_proj");
        d.k_cache_scale = layer.k_cache_scale;
        d.v_cache_scale = layer.v_cache_scale;
        m->layers.push_back(std::move(d));
        up.flush();
        host[l] = HostLayer();  // free the repacked host copy as we go
    }
    m->final_norm = up.vector(w.final_norm, "final norm");
    m->inv_freq = up.vector(model.rope_inv_freq, "RoPE frequencies");
    m->rope_attention_factor = model.rope_attention_factor;
    if (w.lm_head.format == LinearFormat::BF16 && w.lm_head.dense.data == w.embed.data && w.lm_head.bias.empty()) {
        // Tied embeddings: the lm_head reads the embedding table itself.
        DeviceLinearPart part;
        part.out_features = w.lm_head.out_features;
        part.in_features = w.lm_head.in_features;
        part.bf16 = m->embed;
        m->lm_head.parts.push_back(part);
        m->lm_head.out_features = w.lm_head.out_features;
    } else {
        const HostLinear lm_head = prepare_group({&w.lm_head}, false, decode);  // alive until the flush
        m->lm_head = up.linear(lm_head, "lm_head");
        up.flush();
    }
    up.flush();
    // cudaMemset may return before the device has finished it, and it runs on the legacy stream,
    // which a session's non-blocking stream does not wait for: wait here, so no kernel can read a
    // weight that has not landed.
    cuda_check(cudaDeviceSynchronize(), "weight upload");
    const double upload_total = clock.split();
    up.trace();
    load_trace("allocation and upload in all %.3f s", upload_total);
    return m;
}

}  // namespace reset
