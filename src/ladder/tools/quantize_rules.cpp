// llama-quantize's per-tensor type rules, for the file types ladder makes.
// The branches and their order follow llama_tensor_get_type_impl so the two
// can be read side by side; rules for types ladder does not make (the IQ and
// MXFP4 families, importance-matrix variants) are left out.
#include "ladder/tools/quantize_rules.h"

#include <cctype>
#include <cstdlib>
#include <string_view>

#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

using tensor::DType;

enum class Category {
    TokenEmbedding,
    AttentionQ,
    AttentionV,
    AttentionK,
    AttentionQkv,
    AttentionKvB,
    AttentionOutput,
    FfnUp,
    FfnGate,
    FfnDown,
    Output,
    Other,
};

bool contains(std::string_view name, std::string_view part) {
    return name.find(part) != std::string_view::npos;
}

Category category_of(std::string_view name) {
    if (name == "output.weight") return Category::Output;
    if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") {
        return Category::TokenEmbedding;
    }
    if (contains(name, "attn_qkv.weight")) return Category::AttentionQkv;
    if (contains(name, "attn_kv_b.weight")) return Category::AttentionKvB;
    if (contains(name, "attn_v.weight")) return Category::AttentionV;
    if (contains(name, "attn_k.weight")) return Category::AttentionK;
    if (contains(name, "attn_q.weight")) return Category::AttentionQ;
    if (contains(name, "attn_output.weight")) return Category::AttentionOutput;
    if (contains(name, "ffn_up")) return Category::FfnUp;
    if (contains(name, "ffn_gate")) return Category::FfnGate;
    if (contains(name, "ffn_down")) return Category::FfnDown;
    return Category::Other;
}

// Attention-V-like tensors are the most sensitive to quantization.
bool is_attention_v_like(Category c) {
    return c == Category::AttentionV || c == Category::AttentionQkv || c == Category::AttentionKvB;
}

// ggml_n_dims: trailing dimensions of size 1 do not count.
int n_dims_of(const std::vector<int64_t>& shape) {
    for (int i = static_cast<int>(shape.size()) - 1; i >= 1; --i) {
        if (shape[static_cast<size_t>(i)] > 1) return i + 1;
    }
    return 1;
}

// Substrings of weights llama-quantize never quantizes: small or
// position-like tensors of various architectures.
constexpr std::string_view kNeverQuantized[] = {
    "_norm.weight",
    "ffn_gate_inp.weight",
    "ffn_gate_tid2eid.weight",
    "altup",
    "laurel",
    "per_layer_model_proj",
    "ssm_conv1d",
    "shortconv.conv.weight",
    "indexer.k_proj.weight",
    "indexer.q_proj.weight",
    "time_mix_first.weight",
    "time_mix_w0.weight",
    "time_mix_w1.weight",
    "time_mix_w2.weight",
    "time_mix_v0.weight",
    "time_mix_v1.weight",
    "time_mix_v2.weight",
    "time_mix_a0.weight",
    "time_mix_a1.weight",
    "time_mix_a2.weight",
    "time_mix_g1.weight",
    "time_mix_g2.weight",
    "time_mix_decay_w1.weight",
    "time_mix_decay_w2.weight",
    "time_mix_lerp_fused.weight",
    "attn_rel_b.weight",
    ".position_embd",
    "sam.pos_embd",
    "sam.neck.",
    "sam.net_",
    ".rel_pos",
    ".patch_embd",
    ".patch_merger",
    "a.rvq.codebook",
    "mm.a.code_embd",
};

bool allows_quantization(const TensorToQuantize& t, const TypeRuleOptions& options) {
    if (n_dims_of(t.shape) < 2) return false;
    const std::string_view name = t.name;
    // llama.cpp tests "ends with weight" as rfind == size - 6, in size_t: a
    // name shorter than 6 characters passes (npos == size - 6 wraps). Kept,
    // because byte-identical output is the point.
    if (name.rfind("weight") != name.size() - 6) return false;
    if (!options.quantize_output_tensor && name == "output.weight") return false;
    // Positional embeddings and token types (BERT-like).
    if (name == "position_embd.weight" || name == "token_types.weight") return false;
    for (std::string_view part : kNeverQuantized) {
        if (contains(name, part)) return false;
    }
    return true;
}

int block_of(DType dtype) { return static_cast<int>(tensor::dtype_traits(dtype).block_elements); }

bool is_quantized(DType dtype) { return tensor::dtype_traits(dtype).is_quantized; }

// What sscanf(name, "blk.%d.", &layer) reads: nullopt when there is no number.
std::optional<int> layer_number(std::string_view name) {
    constexpr std::string_view kPrefix = "blk.";
    if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
    size_t at = kPrefix.size();
    while (at < name.size() && std::isspace(static_cast<unsigned char>(name[at]))) ++at;
    const std::string digits(name.substr(at));
    char* end = nullptr;
    const long value = std::strtol(digits.c_str(), &end, 10);
    if (end == digits.c_str()) return std::nullopt;
    return static_cast<int>(value);
}

// Walks the tensors in file order with llama.cpp's counters.
class TypeChooser {
public:
    TypeChooser(const std::vector<TensorToQuantize>& tensors, const QuantizeModelFacts& facts,
                const TypeRuleOptions& options)
        : facts_(facts), options_(options), ftype_(options.file_type) {
        for (const TensorToQuantize& t : tensors) {
            const Category c = category_of(t.name);
            if (is_attention_v_like(c)) ++n_attention_wv_;
            if (c == Category::Output) tied_embeddings_ = false;
        }
        n_layer_ = static_cast<int>(facts.n_layer);
    }

    TensorTypeChoice choose(const TensorToQuantize& t) {
        TensorTypeChoice choice{t.dtype, false, std::nullopt};
        if (!allows_quantization(t, options_)) return choice;
        choice.quantizable = true;
        const Category category = category_of(t.name);
        if (options_.token_embedding_type && category == Category::TokenEmbedding) {
            choice.type = *options_.token_embedding_type;
            return choice;
        }
        if (options_.output_tensor_type && category == Category::Output) {
            choice.type = *options_.output_tensor_type;
            return choice;
        }
        choice.type = options_.default_type;
        if (!is_quantized(options_.default_type)) return choice;
        if (!options_.pure) choice.type = mixed_type(t, category, choice.type);
        // Rows that do not divide into the type's blocks take a type that fits.
        const DType wanted = choice.type;
        choice.type = fallback_for_rows(t.shape[0], wanted);
        if (choice.type != wanted) choice.fell_back_from = wanted;
        return choice;
    }

private:
    static bool use_more_bits(int i_layer, int n_layers) {
        return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 ||
               (i_layer - n_layers / 8) % 3 == 2;
    }

    bool is(FileType f) const { return ftype_ == f; }
    bool is_falcon() const { return facts_.architecture == "falcon"; }

    // Mixture-of-experts files interleave experts, so the layer comes from
    // the name there; otherwise it is the running count.
    std::pair<int, int> layer_info(int counter, const std::string& name) const {
        if (facts_.n_expert <= 1) return {counter, n_layer_};
        const std::optional<int> layer = layer_number(name);
        if (!layer) util::fail("cannot tell the layer of tensor '{}' (expected blk.N.)", name);
        if (*layer < 0 || *layer >= n_layer_) {
            util::fail("tensor '{}' names layer {}, outside the model's {} layers", name, *layer,
                       n_layer_);
        }
        return {*layer, n_layer_};
    }

    static DType fallback_for_rows(int64_t n_cols, DType wanted) {
        if (n_cols % block_of(wanted) == 0) return wanted;
        DType fallback = wanted;
        switch (wanted) {
            case DType::Q2_K:
            case DType::Q3_K:
                fallback = DType::Q4_0;
                break;
            case DType::Q4_K:
                fallback = DType::Q5_0;
                break;
            case DType::Q5_K:
                fallback = DType::Q5_1;
                break;
            case DType::Q6_K:
                fallback = DType::Q8_0;
                break;
            default:
                break;  // a 32-element type: only F16 is left
        }
        return n_cols % block_of(fallback) == 0 ? fallback : DType::F16;
    }

    DType mixed_type(const TensorToQuantize& t, Category category, DType new_type) {
        const bool output_like = category == Category::Output ||
                                 (tied_embeddings_ && category == Category::TokenEmbedding);
        if (output_like) {
            // Models that share the embeddings with the output quantize them as the output.
            if (options_.output_tensor_type) return *options_.output_tensor_type;
            if (is_falcon() || t.shape[0] % block_of(new_type) != 0) return DType::Q8_0;
            return new_type != DType::Q8_0 ? DType::Q6_K : new_type;
        }
        if (category == Category::TokenEmbedding) return new_type;
        if (is_attention_v_like(category)) return attention_v_type(new_type);
        if (category == Category::AttentionK) {
            return facts_.n_expert == 8 ? DType::Q8_0 : new_type;
        }
        if (category == Category::FfnDown) return ffn_down_type(t, new_type);
        if (category == Category::AttentionOutput) return attention_output_type(new_type);
        if (category == Category::AttentionQkv) return attention_qkv_type(new_type);
        if (category == Category::FfnGate || category == Category::FfnUp) {
            int& counter = category == Category::FfnGate ? i_ffn_gate_ : i_ffn_up_;
            layer_info(counter, t.name);  // only checks the name of an expert tensor
            ++counter;
        }
        return new_type;
    }

    DType attention_v_type(DType new_type) {
        if (is(FileType::MostlyQ2_K)) {
            new_type = facts_.n_gqa() >= 4 ? DType::Q4_K : DType::Q3_K;
        } else if (is(FileType::MostlyQ3_K_M)) {
            new_type = i_attention_wv_ < 2 ? DType::Q5_K : DType::Q4_K;
        } else if (is(FileType::MostlyQ3_K_L)) {
            new_type = DType::Q5_K;
        } else if ((is(FileType::MostlyQ4_K_M) || is(FileType::MostlyQ5_K_M)) &&
                   use_more_bits(i_attention_wv_, n_attention_wv_)) {
            new_type = DType::Q6_K;
        } else if (is(FileType::MostlyQ4_K_S) && i_attention_wv_ < 4) {
            new_type = DType::Q5_K;
        }
        // 70B shares each V head among 8 query heads: V is 8x smaller than Q,
        // so more bits there cost little.
        if (facts_.is_70b && (new_type == DType::Q3_K || new_type == DType::Q4_K)) {
            new_type = DType::Q5_K;
        }
        if (facts_.n_expert == 8) new_type = DType::Q8_0;
        ++i_attention_wv_;
        return new_type;
    }

    DType ffn_down_type(const TensorToQuantize& t, DType new_type) {
        const auto [i_layer, n_layer] = layer_info(i_ffn_down_, t.name);
        if (is(FileType::MostlyQ2_K)) {
            new_type = DType::Q3_K;
        } else if (is(FileType::MostlyQ3_K_M)) {
            new_type = i_layer < n_layer / 16                            ? DType::Q5_K
                       : !is_falcon() || use_more_bits(i_layer, n_layer) ? DType::Q4_K
                                                                         : DType::Q3_K;
        } else if (is(FileType::MostlyQ3_K_L)) {
            new_type = is_falcon() ? DType::Q4_K : DType::Q5_K;
        } else if (is(FileType::MostlyQ4_K_M)) {
            if (is_falcon()) {
                new_type = i_layer < n_layer / 16            ? DType::Q6_K
                           : use_more_bits(i_layer, n_layer) ? DType::Q5_K
                                                             : DType::Q4_K;
            } else if (use_more_bits(i_layer, n_layer)) {
                new_type = DType::Q6_K;
            }
        } else if (is(FileType::MostlyQ5_K_M) && use_more_bits(i_layer, n_layer)) {
            new_type = DType::Q6_K;
        } else if (is(FileType::MostlyQ4_K_S) && !is_falcon() && i_layer < n_layer / 8) {
            new_type = DType::Q5_K;
        }
        ++i_ffn_down_;
        return new_type;
    }

    DType attention_output_type(DType new_type) const {
        if (is_falcon()) return is(FileType::MostlyQ3_K_L) ? DType::Q4_K : new_type;
        if (facts_.n_expert == 8) {
            const bool bumped = is(FileType::MostlyQ2_K) || is(FileType::MostlyQ3_K_S) ||
                                is(FileType::MostlyQ3_K_M) || is(FileType::MostlyQ4_K_S) ||
                                is(FileType::MostlyQ4_K_M);
            return bumped ? DType::Q5_K : new_type;
        }
        if (is(FileType::MostlyQ2_K)) return DType::Q3_K;
        if (is(FileType::MostlyQ3_K_M)) return DType::Q4_K;
        if (is(FileType::MostlyQ3_K_L)) return DType::Q5_K;
        return new_type;
    }

    DType attention_qkv_type(DType new_type) const {
        if (is(FileType::MostlyQ3_K_M) || is(FileType::MostlyQ3_K_L)) return DType::Q4_K;
        if (is(FileType::MostlyQ4_K_M)) return DType::Q5_K;
        if (is(FileType::MostlyQ5_K_M)) return DType::Q6_K;
        return new_type;
    }

    const QuantizeModelFacts& facts_;
    const TypeRuleOptions& options_;
    FileType ftype_;
    int n_layer_ = 0;
    int n_attention_wv_ = 0;
    int i_attention_wv_ = 0;
    int i_ffn_down_ = 0;
    int i_ffn_gate_ = 0;
    int i_ffn_up_ = 0;
    bool tied_embeddings_ = true;  // until an output.weight is seen
};

}  // namespace

std::vector<TensorTypeChoice> choose_tensor_types(const std::vector<TensorToQuantize>& tensors,
                                                  const QuantizeModelFacts& facts,
                                                  const TypeRuleOptions& options) {
    TypeChooser chooser(tensors, facts, options);
    std::vector<TensorTypeChoice> choices;
    choices.reserve(tensors.size());
    for (const TensorToQuantize& t : tensors) choices.push_back(chooser.choose(t));
    return choices;
}

bool quantize_order_less(const std::string& a, const std::string& b) {
    const int layer_a = layer_number(a).value_or(-1);
    const int layer_b = layer_number(b).value_or(-1);
    if (layer_a != layer_b) return layer_a < layer_b;
    return a < b;
}

}  // namespace ladder::tools
