// fit from GGUF metadata: generic keys, per-layer arrays, sliding-window
// patterns, MLA, broken files, and the real default model's numbers (read
// independently with gguf-py).
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "ladder/gguf/gguf_file.h"
#include "ladder/gguf/gguf_writer.h"
#include "ladder/tools/fit.h"
#include "ladder/util/error.h"

namespace ladder::tools {
namespace {

using gguf::Value;
using gguf::ValueType;

// A file with one small F32 tensor and the metadata a test sets.
class SyntheticGguf {
public:
    explicit SyntheticGguf(const std::string& arch) : arch_(arch) {
        writer_.set("general.architecture", Value::string(arch));
        writer_.add_tensor("token_embd.weight", tensor::DType::F32, {64, 10},
                           std::vector<uint8_t>(64 * 10 * 4));
    }
    SyntheticGguf& set(const std::string& suffix, Value value) {
        writer_.set(arch_ + "." + suffix, std::move(value));
        return *this;
    }
    SyntheticGguf& llama_shape(uint32_t n_layers) {
        return set("block_count", Value::uint32(n_layers))
            .set("embedding_length", Value::uint32(64))
            .set("attention.head_count", Value::uint32(4))
            .set("context_length", Value::uint32(256));
    }
    FitModel fit_model() {
        bytes_ = writer_.serialize();
        file_ = gguf::GgufFile::parse(bytes_, "synthetic.gguf");
        return fit_model_from_gguf(*file_);
    }

private:
    std::string arch_;
    gguf::GgufWriter writer_;
    std::vector<uint8_t> bytes_;
    std::unique_ptr<gguf::GgufFile> file_;
};

Value int_array(std::initializer_list<int32_t> values) {
    std::vector<Value> elements;
    for (const int32_t v : values) elements.push_back(Value::int32(v));
    return Value::array(ValueType::Int32, std::move(elements));
}

std::vector<int> global_layers(const FitModel& model) {
    std::vector<int> out;
    for (size_t i = 0; i < model.layers.size(); ++i) {
        if (!model.layers[i].sliding) out.push_back(static_cast<int>(i));
    }
    return out;
}

FitRequest big_device(int64_t context) {
    FitRequest request;
    request.device_memory_bytes = 64 * kGiB;
    request.context = context;
    return request;
}

TEST(FitGguf, weights_are_the_files_tensor_bytes) {
    SyntheticGguf gguf("llama");
    const FitModel model = gguf.llama_shape(2).fit_model();
    EXPECT_EQ(model.weights_bytes, 64u * 10 * 4);
    EXPECT_EQ(model.n_params, 640);
    EXPECT_EQ(model.context_length, 256);
    EXPECT_EQ(model.n_heads, 4);
    // No head_count_kv: one KV head per query head; no key_length: 64 / 4.
    ASSERT_EQ(model.layers.size(), 2u);
    EXPECT_EQ(model.layers[0].n_kv_heads, 4);
    EXPECT_EQ(model.layers[0].key_length, 16);
    EXPECT_EQ(plan_fit(model, big_device(10)).kv_bytes_per_token, 2u * 2 * 4 * 16 * 2);
}

TEST(FitGguf, per_layer_kv_head_arrays_are_summed) {
    SyntheticGguf gguf("llama");
    const FitModel model = gguf.llama_shape(3)
                               .set("attention.head_count_kv", int_array({2, 1, 0}))
                               .set("attention.key_length", Value::uint32(32))
                               .set("attention.value_length", Value::uint32(16))
                               .fit_model();
    // (2 + 1 + 0) heads × (32 + 16) values × 2 bytes.
    EXPECT_EQ(plan_fit(model, big_device(10)).kv_bytes_per_token, 3u * 48 * 2);
}

TEST(FitGguf, gemma3_window_uses_llama_cpps_pattern_of_six) {
    SyntheticGguf gguf("gemma3");
    const FitModel model =
        gguf.llama_shape(12).set("attention.sliding_window", Value::uint32(8)).fit_model();
    EXPECT_EQ(model.sliding_window, 8);
    EXPECT_EQ(global_layers(model), (std::vector<int>{5, 11}));
    // 2 global layers hold 100 tokens, 10 local ones hold 8; 4 heads × 16 × 2 (K, V) × 2 bytes.
    const uint64_t per_layer_token = 4 * 16 * 2 * 2;
    EXPECT_EQ(plan_fit(model, big_device(100)).kv_bytes_per_sequence,
              per_layer_token * (2 * 100 + 10 * 8));
}

TEST(FitGguf, the_files_own_pattern_wins_as_period_or_flags) {
    SyntheticGguf by_period("gemma3");
    const FitModel periodic = by_period.llama_shape(6)
                                  .set("attention.sliding_window", Value::uint32(8))
                                  .set("attention.sliding_window_pattern", Value::uint32(3))
                                  .fit_model();
    EXPECT_EQ(global_layers(periodic), (std::vector<int>{2, 5}));

    SyntheticGguf by_flags("somearch");
    std::vector<Value> flags;
    for (const bool local : {true, false, false, true}) flags.push_back(Value::boolean(local));
    const FitModel flagged = by_flags.llama_shape(4)
                                 .set("attention.sliding_window", Value::uint32(8))
                                 .set("attention.sliding_window_pattern",
                                      Value::array(ValueType::Bool, std::move(flags)))
                                 .fit_model();
    EXPECT_EQ(global_layers(flagged), (std::vector<int>{1, 2}));
}

TEST(FitGguf, a_window_without_a_known_pattern_counts_every_layer_in_full) {
    SyntheticGguf gguf("llama");
    const FitModel model =
        gguf.llama_shape(4).set("attention.sliding_window", Value::uint32(8)).fit_model();
    EXPECT_EQ(global_layers(model).size(), 4u);
    EXPECT_EQ(model.sliding_window, 0);
    ASSERT_FALSE(model.notes.empty());
    EXPECT_NE(model.notes.back().find("upper bound"), std::string::npos);
}

TEST(FitGguf, mla_caches_the_compressed_latent) {
    SyntheticGguf gguf("deepseek2");
    const FitModel model = gguf.llama_shape(2)
                               .set("attention.head_count_kv", Value::uint32(4))
                               .set("attention.kv_lora_rank", Value::uint32(512))
                               .set("rope.dimension_count", Value::uint32(64))
                               .fit_model();
    EXPECT_EQ(plan_fit(model, big_device(10)).kv_bytes_per_token, 2u * (512 + 64) * 2);
}

TEST(FitGguf, missing_or_malformed_keys_name_the_key) {
    SyntheticGguf no_layers("llama");
    no_layers.set("embedding_length", Value::uint32(64))
        .set("attention.head_count", Value::uint32(4));
    try {
        no_layers.fit_model();
        FAIL() << "a file without block_count was accepted";
    } catch (const util::InputError& error) {
        EXPECT_NE(std::string(error.what()).find("llama.block_count"), std::string::npos)
            << error.what();
    }
    SyntheticGguf short_array("llama");
    short_array.llama_shape(3).set("attention.head_count_kv", int_array({2, 1}));
    EXPECT_THROW(short_array.fit_model(), util::InputError);
    SyntheticGguf zero_heads("llama");
    zero_heads.llama_shape(3).set("attention.head_count", Value::uint32(0));
    EXPECT_THROW(zero_heads.fit_model(), util::InputError);
}

TEST(FitGguf, default_model_matches_gguf_py) {
    const auto path =
        std::filesystem::path(LADDER_SOURCE_DIR) / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf";
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "run `make model`";
    const auto file = gguf::GgufFile::open(path.string());
    const FitModel model = fit_model_from_gguf(*file);
    // Sums of n_bytes and n_elements over GGUFReader(path).tensors.
    EXPECT_EQ(model.weights_bytes, 96'576'768u);
    EXPECT_EQ(model.n_params, 134'515'008);
    EXPECT_EQ(model.context_length, 8192);
    // 2 × 30 layers × 3 KV heads × 64 × 2 bytes.
    EXPECT_EQ(plan_fit(model, big_device(0)).kv_bytes_per_token, 2u * 30 * 3 * 64 * 2);
    EXPECT_NE(model.weights_type.find("q4_1"), std::string::npos) << model.weights_type;
}

}  // namespace
}  // namespace ladder::tools
