// The Llama family forward pass (Llama 2/3, Mistral, SmolLM2, Qwen2): RMSNorm,
// RoPE, grouped-query attention over the paged KV cache, SwiGLU MLP.
#include <string>
#include <vector>

#include "ladder/gguf/gguf_file.h"
#include "ladder/kernels/cpu/activations.h"
#include "ladder/kernels/cpu/attention.h"
#include "ladder/kernels/cpu/matmul.h"
#include "ladder/kernels/cpu/norms.h"
#include "ladder/kernels/cpu/rope.h"
#include "ladder/model/arch_registry.h"
#include "ladder/model/forward_scratch.h"
#include "ladder/model/paged_attention.h"
#include "ladder/model/weights.h"
#include "ladder/tensor/reference_ops.h"
#include "ladder/util/check.h"
#include "ladder/util/thread_pool.h"
#include "ladder/util/trace.h"

namespace ladder::model {

namespace {

namespace cpu = kernels::cpu;
namespace trace = util::trace;

struct LlamaLayerWeights {
    const float* attn_norm;     // [dim]
    WeightMatrix wq;            // [q_dim, dim]
    WeightMatrix wk;            // [kv_dim, dim]
    WeightMatrix wv;            // [kv_dim, dim]
    const float* bq = nullptr;  // [q_dim], Qwen2 only
    const float* bk = nullptr;  // [kv_dim]
    const float* bv = nullptr;  // [kv_dim]
    WeightMatrix wo;            // [dim, q_dim]
    const float* ffn_norm;      // [dim]
    WeightMatrix w_gate;        // [hidden_dim, dim]
    WeightMatrix w_up;          // [hidden_dim, dim]
    WeightMatrix w_down;        // [dim, hidden_dim]
};

class LlamaModel final : public Model {
public:
    LlamaModel(const gguf::GgufFile& file, RopeStyle rope_style)
        : config_(read_llama_family_config(file, rope_style)) {
        load_weights(file);
    }

    const ModelConfig& config() const override { return config_; }

    void forward(const Batch& batch, KvCacheStorage& kv, util::ThreadPool& pool,
                 std::span<float> logits) override;

private:
    void load_weights(const gguf::GgufFile& file);

    ModelConfig config_;
    WeightMatrix token_embd_;  // [vocab_size, dim]
    WeightMatrix output_;      // [vocab_size, dim] (token_embd_ when tied)
    const float* output_norm_ = nullptr;
    std::vector<LlamaLayerWeights> layers_;
    cpu::RopeParams rope_;
    ForwardScratch scratch_;
};

void LlamaModel::load_weights(const gguf::GgufFile& file) {
    const WeightLoader loader(file);
    const int64_t dim = config_.dim;
    token_embd_ = loader.matrix("token_embd.weight", config_.vocab_size, dim);
    output_ = config_.tied_embeddings ? token_embd_
                                      : loader.matrix("output.weight", config_.vocab_size, dim);
    output_norm_ = loader.vector("output_norm.weight", dim);
    layers_.resize(static_cast<size_t>(config_.n_layers));
    for (int32_t i = 0; i < config_.n_layers; ++i) {
        const std::string prefix = "blk." + std::to_string(i) + ".";
        LlamaLayerWeights& layer = layers_[static_cast<size_t>(i)];
        layer.attn_norm = loader.vector(prefix + "attn_norm.weight", dim);
        layer.wq = loader.matrix(prefix + "attn_q.weight", config_.q_dim(), dim);
        layer.wk = loader.matrix(prefix + "attn_k.weight", config_.kv_dim(), dim);
        layer.wv = loader.matrix(prefix + "attn_v.weight", config_.kv_dim(), dim);
        if (loader.has(prefix + "attn_q.bias")) {
            layer.bq = loader.vector(prefix + "attn_q.bias", config_.q_dim());
            layer.bk = loader.vector(prefix + "attn_k.bias", config_.kv_dim());
            layer.bv = loader.vector(prefix + "attn_v.bias", config_.kv_dim());
        }
        layer.wo = loader.matrix(prefix + "attn_output.weight", dim, config_.q_dim());
        layer.ffn_norm = loader.vector(prefix + "ffn_norm.weight", dim);
        layer.w_gate = loader.matrix(prefix + "ffn_gate.weight", config_.hidden_dim, dim);
        layer.w_up = loader.matrix(prefix + "ffn_up.weight", config_.hidden_dim, dim);
        layer.w_down = loader.matrix(prefix + "ffn_down.weight", dim, config_.hidden_dim);
    }
    rope_.head_dim = config_.head_dim;
    rope_.rope_dim = config_.rope_dim;
    rope_.freq_base = config_.rope_freq_base;
    rope_.freq_scale = config_.rope_freq_scale;
    rope_.neox = config_.rope_style == RopeStyle::NeoX;
}

void LlamaModel::forward(const Batch& batch, KvCacheStorage& kv, util::ThreadPool& pool,
                         std::span<float> logits) {
    const int64_t n_rows = batch.n_tokens();
    const int64_t dim = config_.dim;
    const int64_t q_dim = config_.q_dim();
    const int64_t kv_dim = config_.kv_dim();
    const int64_t hidden_dim = config_.hidden_dim;
    LADDER_CHECK(logits.size() >= batch.logit_rows.size() * static_cast<size_t>(config_.vocab_size),
                 "logits buffer smaller than logit_rows x vocab_size");
    ForwardScratch& s = scratch_;
    s.ensure(config_, std::max<int64_t>(n_rows, static_cast<int64_t>(batch.logit_rows.size())));

    {
        const trace::Scope scope("op", "embed");
        for (int64_t row = 0; row < n_rows; ++row) {
            const int32_t token = batch.tokens[static_cast<size_t>(row)];
            LADDER_CHECK(token >= 0 && token < config_.vocab_size,
                         "token id outside the vocabulary");
            tensor::dequantize_row(token_embd_.dtype, token_embd_.row(token),
                                   s.x.data() + row * dim, dim);
        }
    }

    for (int32_t l = 0; l < config_.n_layers; ++l) {
        const LlamaLayerWeights& layer = layers_[static_cast<size_t>(l)];
        const trace::Scope layer_scope("layer", "layer", {"layer", l});
        {
            const trace::Scope scope("op", "norm", {"layer", l});
            for (int64_t row = 0; row < n_rows; ++row) {
                cpu::rms_norm(s.x.data() + row * dim, layer.attn_norm, s.xb.data() + row * dim,
                              dim, config_.rms_norm_eps);
            }
        }
        {
            const trace::Scope scope("op", "qkv", {"layer", l});
            s.project({{&layer.wq, s.q.data()}, {&layer.wk, s.k.data()}, {&layer.wv, s.v.data()}},
                      s.xb.data(), n_rows, pool);
            for (int64_t row = 0; row < n_rows; ++row) {
                float* q = s.q.data() + row * q_dim;
                float* k = s.k.data() + row * kv_dim;
                float* v = s.v.data() + row * kv_dim;
                if (layer.bq != nullptr) {
                    cpu::add_in_place(q, layer.bq, q_dim);
                    cpu::add_in_place(k, layer.bk, kv_dim);
                    cpu::add_in_place(v, layer.bv, kv_dim);
                }
                const int32_t position = batch.positions[static_cast<size_t>(row)];
                cpu::rope(q, config_.n_heads, position, rope_);
                cpu::rope(k, config_.n_kv_heads, position, rope_);
                store_kv_row(k, v, batch.slots[static_cast<size_t>(row)], kv, l);
            }
        }
        {
            const trace::Scope scope("op", "attention", {"layer", l});
            paged_attention(batch, kv, l, config_, config_.attention_scale, 0, attention_path_, s,
                            pool);
        }
        {
            const trace::Scope scope("op", "out_proj", {"layer", l});
            s.project({{&layer.wo, s.out.data()}}, s.attn.data(), n_rows, pool);
            cpu::add_in_place(s.x.data(), s.out.data(), n_rows * dim);
        }
        {
            const trace::Scope scope("op", "norm", {"layer", l});
            for (int64_t row = 0; row < n_rows; ++row) {
                cpu::rms_norm(s.x.data() + row * dim, layer.ffn_norm, s.xb.data() + row * dim,
                              dim, config_.rms_norm_eps);
            }
        }
        const trace::Scope scope("op", "mlp", {"layer", l});
        s.project({{&layer.w_gate, s.gate.data()}, {&layer.w_up, s.up.data()}}, s.xb.data(), n_rows,
                  pool);
        cpu::silu_mul(s.gate.data(), s.up.data(), n_rows * hidden_dim);
        s.project({{&layer.w_down, s.out.data()}}, s.gate.data(), n_rows, pool);
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
}

}  // namespace

std::unique_ptr<Model> build_llama(const gguf::GgufFile& file) {
    return std::make_unique<LlamaModel>(file, RopeStyle::Normal);
}

std::unique_ptr<Model> build_qwen2(const gguf::GgufFile& file) {
    return std::make_unique<LlamaModel>(file, RopeStyle::NeoX);
}

}  // namespace ladder::model
