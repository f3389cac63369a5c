// The Gemma 3 forward pass: scaled embeddings, RMSNorm before and after both
// attention and MLP, per-head RMSNorm of Q and K, NeoX RoPE with one base for
// local (sliding-window) layers and another for global ones, GeGLU MLP.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ladder/gguf/gguf_file.h"
#include "ladder/kernels/cpu/activations.h"
#include "ladder/kernels/cpu/attention.h"
#include "ladder/kernels/cpu/gelu_table.h"
#include "ladder/kernels/cpu/matmul.h"
#include "ladder/kernels/cpu/norms.h"
#include "ladder/kernels/cpu/rope.h"
#include "ladder/model/arch_registry.h"
#include "ladder/model/forward_scratch.h"
#include "ladder/model/paged_attention.h"
#include "ladder/model/weights.h"
#include "ladder/tensor/reference_ops.h"
#include "ladder/util/check.h"
#include "ladder/util/error.h"
#include "ladder/util/thread_pool.h"
#include "ladder/util/trace.h"

namespace ladder::model {

namespace {

namespace cpu = kernels::cpu;
namespace trace = util::trace;

// Gemma 3 interleaves five local layers with one global layer; the GGUF does
// not store the pattern (llama.cpp fixes it per architecture too).
constexpr int32_t kGlobalLayerPeriod = 6;
// RoPE base of the local layers when the file does not name one.
constexpr double kDefaultLocalRopeBase = 10000.0;
// The one Gemma 3 size whose query_pre_attn_scalar is dim / n_heads rather than
// head_dim (27B, 62 layers); llama.cpp tells it apart by its layer count.
constexpr int32_t kLayersOf27b = 62;

ModelConfig read_gemma3_config(const gguf::GgufFile& file) {
    ModelConfig config = read_llama_family_config(file, RopeStyle::NeoX);
    const std::string& arch = config.architecture;
    const auto value_length = file.get_int(arch + ".attention.value_length");
    if (value_length && *value_length != config.head_dim) {
        util::fail("{}: value length {} differs from key length {}, which ladder does not support",
                   file.name(), *value_length, config.head_dim);
    }
    const int64_t window = file.get_int(arch + ".attention.sliding_window").value_or(0);
    if (window < 0 || window > (int64_t{1} << 24)) {
        util::fail("{}: sliding window {} is out of range", file.name(), window);
    }
    config.sliding_window = static_cast<int32_t>(window);
    config.global_layer_period = kGlobalLayerPeriod;
    config.rope_freq_base_local = static_cast<float>(
        file.get_float(arch + ".rope.freq_base_swa").value_or(kDefaultLocalRopeBase));
    if (!(config.rope_freq_base_local > 1.0f)) {
        util::fail("{}: local RoPE frequency base {} must be > 1", file.name(),
                   config.rope_freq_base_local);
    }
    // Linear RoPE scaling (the larger Gemma 3 models) stretches global layers only.
    config.rope_freq_scale_local = 1.0f;
    const float query_pre_attn_scalar =
        config.n_layers == kLayersOf27b ? static_cast<float>(config.dim / config.n_heads)
                                        : static_cast<float>(config.head_dim);
    config.attention_scale = 1.0f / std::sqrt(query_pre_attn_scalar);
    config.final_logit_softcap =
        static_cast<float>(file.get_float(arch + ".final_logit_softcapping").value_or(0.0));
    if (!(config.final_logit_softcap >= 0.0f)) {
        util::fail("{}: final logit soft-cap {} must be >= 0", file.name(),
                   config.final_logit_softcap);
    }
    return config;
}

struct Gemma3LayerWeights {
    const float* attn_norm;       // [dim]
    WeightMatrix wq;              // [q_dim, dim]
    WeightMatrix wk;              // [kv_dim, dim]
    WeightMatrix wv;              // [kv_dim, dim]
    const float* q_norm;          // [head_dim], shared by all query heads
    const float* k_norm;          // [head_dim]
    WeightMatrix wo;              // [dim, q_dim]
    const float* attn_post_norm;  // [dim]
    const float* ffn_norm;        // [dim]
    WeightMatrix w_gate;          // [hidden_dim, dim]
    WeightMatrix w_up;            // [hidden_dim, dim]
    WeightMatrix w_down;          // [dim, hidden_dim]
    const float* ffn_post_norm;   // [dim]
};

class Gemma3Model final : public Model {
public:
    explicit Gemma3Model(const gguf::GgufFile& file) : config_(read_gemma3_config(file)) {
        load_weights(file);
    }

    const ModelConfig& config() const override { return config_; }

    void forward(const Batch& batch, KvCacheStorage& kv, util::ThreadPool& pool,
                 std::span<float> logits) override;

private:
    void load_weights(const gguf::GgufFile& file);
    // q, k, v of every row from the normed input xb; q and k normed per head,
    // rotated, q scaled; k and v stored in the cache.
    void project_qkv(const Batch& batch, KvCacheStorage& kv, int32_t layer, util::ThreadPool& pool);
    void mlp(const Gemma3LayerWeights& layer, int64_t n_rows, util::ThreadPool& pool);
    void rms_norm_rows(const float* x, const float* weight, float* out, int64_t n_rows,
                       int64_t n) const;

    ModelConfig config_;
    float embedding_scale_ = 1.0f;
    WeightMatrix token_embd_;  // [vocab_size, dim]
    WeightMatrix output_;      // [vocab_size, dim] (token_embd_ when tied)
    const float* output_norm_ = nullptr;
    std::vector<Gemma3LayerWeights> layers_;
    cpu::RopeParams rope_global_;
    cpu::RopeParams rope_local_;
    ForwardScratch scratch_;
};

void Gemma3Model::load_weights(const gguf::GgufFile& file) {
    const WeightLoader loader(file);
    const int64_t dim = config_.dim;
    const int64_t head_dim = config_.head_dim;
    token_embd_ = loader.matrix("token_embd.weight", config_.vocab_size, dim);
    output_ = config_.tied_embeddings ? token_embd_
                                      : loader.matrix("output.weight", config_.vocab_size, dim);
    output_norm_ = loader.vector("output_norm.weight", dim);
    layers_.resize(static_cast<size_t>(config_.n_layers));
    for (int32_t i = 0; i < config_.n_layers; ++i) {
        const std::string prefix = "blk." + std::to_string(i) + ".";
        Gemma3LayerWeights& layer = layers_[static_cast<size_t>(i)];
        // Gemma's norms scale by (1 + w); the GGUF converter stores 1 + w, so
        // these are used as they are.
        layer.attn_norm = loader.vector(prefix + "attn_norm.weight", dim);
        layer.wq = loader.matrix(prefix + "attn_q.weight", config_.q_dim(), dim);
        layer.wk = loader.matrix(prefix + "attn_k.weight", config_.kv_dim(), dim);
        layer.wv = loader.matrix(prefix + "attn_v.weight", config_.kv_dim(), dim);
        layer.q_norm = loader.vector(prefix + "attn_q_norm.weight", head_dim);
        layer.k_norm = loader.vector(prefix + "attn_k_norm.weight", head_dim);
        layer.wo = loader.matrix(prefix + "attn_output.weight", dim, config_.q_dim());
        layer.attn_post_norm = loader.vector(prefix + "post_attention_norm.weight", dim);
        layer.ffn_norm = loader.vector(prefix + "ffn_norm.weight", dim);
        layer.w_gate = loader.matrix(prefix + "ffn_gate.weight", config_.hidden_dim, dim);
        layer.w_up = loader.matrix(prefix + "ffn_up.weight", config_.hidden_dim, dim);
        layer.w_down = loader.matrix(prefix + "ffn_down.weight", dim, config_.hidden_dim);
        layer.ffn_post_norm = loader.vector(prefix + "post_ffw_norm.weight", dim);
    }
    // sqrt(dim) in float, as the reference scales the embeddings.
    embedding_scale_ = std::sqrt(static_cast<float>(dim));
    rope_global_.head_dim = config_.head_dim;
    rope_global_.rope_dim = config_.rope_dim;
    rope_global_.freq_base = config_.rope_freq_base;
    rope_global_.freq_scale = config_.rope_freq_scale;
    rope_global_.neox = true;
    rope_local_ = rope_global_;
    rope_local_.freq_base = config_.rope_freq_base_local;
    rope_local_.freq_scale = config_.rope_freq_scale_local;
}

void Gemma3Model::rms_norm_rows(const float* x, const float* weight, float* out, int64_t n_rows,
                                int64_t n) const {
    for (int64_t row = 0; row < n_rows; ++row) {
        cpu::rms_norm(x + row * n, weight, out + row * n, n, config_.rms_norm_eps);
    }
}

void Gemma3Model::project_qkv(const Batch& batch, KvCacheStorage& kv, int32_t l,
                              util::ThreadPool& pool) {
    const Gemma3LayerWeights& layer = layers_[static_cast<size_t>(l)];
    ForwardScratch& s = scratch_;
    const int64_t n_rows = batch.n_tokens();
    const int64_t q_dim = config_.q_dim();
    const int64_t kv_dim = config_.kv_dim();
    const int32_t head_dim = config_.head_dim;
    s.project({{&layer.wq, s.q.data()}, {&layer.wk, s.k.data()}, {&layer.wv, s.v.data()}},
              s.xb.data(), n_rows, pool);

    const cpu::RopeParams& rope = config_.is_local_layer(l) ? rope_local_ : rope_global_;
    for (int64_t row = 0; row < n_rows; ++row) {
        float* q = s.q.data() + row * q_dim;
        float* k = s.k.data() + row * kv_dim;
        rms_norm_rows(q, layer.q_norm, q, config_.n_heads, head_dim);
        rms_norm_rows(k, layer.k_norm, k, config_.n_kv_heads, head_dim);
        const int32_t position = batch.positions[static_cast<size_t>(row)];
        cpu::rope(q, config_.n_heads, position, rope);
        cpu::rope(k, config_.n_kv_heads, position, rope);
        // The scale goes on q before attention (the reference's order): q is
        // rounded to F16 there, so scaling the scores afterwards would differ
        // wherever the scale is not a power of two.
        for (int64_t i = 0; i < q_dim; ++i) q[i] *= config_.attention_scale;
        store_kv_row(k, s.v.data() + row * kv_dim,
                     batch.slot(static_cast<int32_t>(row), kv.in_window_group(l)), kv, l);
    }
}

void Gemma3Model::mlp(const Gemma3LayerWeights& layer, int64_t n_rows, util::ThreadPool& pool) {
    ForwardScratch& s = scratch_;
    s.project({{&layer.w_gate, s.gate.data()}, {&layer.w_up, s.up.data()}}, s.xb.data(), n_rows,
              pool);
    cpu::gelu_mul_f16_table(s.gate.data(), s.up.data(), n_rows * config_.hidden_dim);
    s.project({{&layer.w_down, s.out.data()}}, s.gate.data(), n_rows, pool);
}

void Gemma3Model::forward(const Batch& batch, KvCacheStorage& kv, util::ThreadPool& pool,
                          std::span<float> logits) {
    const int64_t n_rows = batch.n_tokens();
    const int64_t dim = config_.dim;
    const int64_t vocab_size = config_.vocab_size;
    LADDER_CHECK(logits.size() >= batch.logit_rows.size() * static_cast<size_t>(vocab_size),
                 "logits buffer smaller than logit_rows x vocab_size");
    ForwardScratch& s = scratch_;
    s.ensure(config_, std::max<int64_t>(n_rows, static_cast<int64_t>(batch.logit_rows.size())));

    {
        const trace::Scope scope("op", "embed");
        for (int64_t row = 0; row < n_rows; ++row) {
            const int32_t token = batch.tokens[static_cast<size_t>(row)];
            LADDER_CHECK(token >= 0 && token < config_.vocab_size,
                         "token id outside the vocabulary");
            float* x = s.x.data() + row * dim;
            tensor::dequantize_row(token_embd_.dtype, token_embd_.row(token), x, dim);
            for (int64_t i = 0; i < dim; ++i) x[i] *= embedding_scale_;
        }
    }

    for (int32_t l = 0; l < config_.n_layers; ++l) {
        const Gemma3LayerWeights& layer = layers_[static_cast<size_t>(l)];
        const trace::Scope layer_scope("layer", "layer", {"layer", l});
        {
            const trace::Scope scope("op", "norm", {"layer", l});
            rms_norm_rows(s.x.data(), layer.attn_norm, s.xb.data(), n_rows, dim);
        }
        {
            const trace::Scope scope("op", "qkv", {"layer", l});
            project_qkv(batch, kv, l, pool);
        }
        {
            // q is already scaled (project_qkv), so the scores are not scaled again.
            const trace::Scope scope("op", "attention", {"layer", l});
            const int32_t window = config_.is_local_layer(l) ? config_.sliding_window : 0;
            paged_attention(batch, kv, l, config_, 1.0f, window, attention_path_, s, pool);
        }
        {
            const trace::Scope scope("op", "out_proj", {"layer", l});
            s.project({{&layer.wo, s.out.data()}}, s.attn.data(), n_rows, pool);
        }
        {
            const trace::Scope scope("op", "norm", {"layer", l});
            rms_norm_rows(s.out.data(), layer.attn_post_norm, s.out.data(), n_rows, dim);
            cpu::add_in_place(s.x.data(), s.out.data(), n_rows * dim);
            rms_norm_rows(s.x.data(), layer.ffn_norm, s.xb.data(), n_rows, dim);
        }
        {
            const trace::Scope scope("op", "mlp", {"layer", l});
            mlp(layer, n_rows, pool);
        }
        const trace::Scope scope("op", "norm", {"layer", l});
        rms_norm_rows(s.out.data(), layer.ffn_post_norm, s.out.data(), n_rows, dim);
        cpu::add_in_place(s.x.data(), s.out.data(), n_rows * dim);
    }

    // Only the rows that need logits pay for the final norm and the vocabulary product.
    const trace::Scope scope("op", "logits");
    const auto n_logit_rows = static_cast<int64_t>(batch.logit_rows.size());
    for (int64_t i = 0; i < n_logit_rows; ++i) {
        const int32_t row = batch.logit_rows[static_cast<size_t>(i)];
        LADDER_CHECK(row >= 0 && row < n_rows, "logit row outside the batch");
        cpu::rms_norm(s.x.data() + row * dim, output_norm_, s.xb.data() + i * dim, dim,
                      config_.rms_norm_eps);
    }
    if (n_logit_rows == 0) return;
    s.project({{&output_, logits.data()}}, s.xb.data(), n_logit_rows, pool);
    if (config_.final_logit_softcap > 0.0f) {
        // cap * tanh(logit / cap), with 1/cap as one factor as the reference scales.
        const float cap = config_.final_logit_softcap;
        const float inverse_cap = 1.0f / cap;
        for (float& logit : logits.first(static_cast<size_t>(n_logit_rows * vocab_size))) {
            logit = std::tanh(logit * inverse_cap) * cap;
        }
    }
}

}  // namespace

std::unique_ptr<Model> build_gemma3(const gguf::GgufFile& file) {
    return std::make_unique<Gemma3Model>(file);
}

}  // namespace ladder::model
