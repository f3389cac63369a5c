// llama-quantize's per-tensor rules on hand-made models, with the expected
// types worked out from the rules as llama.cpp documents them (which layers
// get more bits, what a row that does not divide into blocks falls back to).
// Byte identity with llama-quantize itself is tested on whole files
// (tests/model/test_quantize.py).
#include "ladder/tools/quantize_rules.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "ladder/util/error.h"

namespace ladder::tools {
namespace {

using tensor::DType;

struct TinyModel {
    std::vector<TensorToQuantize> tensors;
    QuantizeModelFacts facts;
};

// A Llama-shaped model: n_layer blocks with rows of `cols`, ffn_down rows of
// down_cols, tied embeddings unless with_output.
TinyModel llama_model(int n_layer, int64_t cols, int64_t down_cols, bool with_output,
                      int64_t n_head = 4, int64_t n_head_kv = 4) {
    TinyModel m;
    m.facts = {"llama", n_layer, n_head, n_head_kv, 0, false};
    const auto add = [&](const std::string& name, std::vector<int64_t> shape) {
        m.tensors.push_back({name, DType::F32, std::move(shape)});
    };
    add("output_norm.weight", {cols});
    if (with_output) add("output.weight", {cols, 8});
    add("token_embd.weight", {cols, 8});
    for (int i = 0; i < n_layer; ++i) {
        const std::string b = "blk." + std::to_string(i) + ".";
        add(b + "attn_k.weight", {cols, 4});
        add(b + "attn_norm.weight", {cols});
        add(b + "attn_output.weight", {cols, 4});
        add(b + "attn_q.weight", {cols, 4});
        add(b + "attn_v.weight", {cols, 4});
        add(b + "ffn_down.weight", {down_cols, 4});
        add(b + "ffn_gate.weight", {cols, 4});
        add(b + "ffn_up.weight", {cols, 4});
    }
    return m;
}

std::map<std::string, TensorTypeChoice> choose(const TinyModel& m, FileType file_type,
                                               DType default_type, TypeRuleOptions options = {}) {
    options.file_type = file_type;
    options.default_type = default_type;
    const auto choices = choose_tensor_types(m.tensors, m.facts, options);
    std::map<std::string, TensorTypeChoice> by_name;
    for (size_t i = 0; i < m.tensors.size(); ++i) by_name.emplace(m.tensors[i].name, choices[i]);
    return by_name;
}

std::string layer(int i, const char* name) { return "blk." + std::to_string(i) + "." + name; }

TEST(QuantizeRules, q4_k_m_gives_more_bits_to_the_first_last_and_every_third_layer) {
    // use_more_bits over 8 layers: i < 1, i >= 7, or (i - 1) % 3 == 2: layers 0, 3, 6, 7.
    const auto types = choose(llama_model(8, 256, 256, true), FileType::MostlyQ4_K_M, DType::Q4_K);
    for (int i = 0; i < 8; ++i) {
        const DType expected = (i == 0 || i == 3 || i == 6 || i == 7) ? DType::Q6_K : DType::Q4_K;
        EXPECT_EQ(types.at(layer(i, "ffn_down.weight")).type, expected) << "layer " << i;
        EXPECT_EQ(types.at(layer(i, "attn_v.weight")).type, expected) << "layer " << i;
        EXPECT_EQ(types.at(layer(i, "attn_q.weight")).type, DType::Q4_K);
        EXPECT_EQ(types.at(layer(i, "ffn_gate.weight")).type, DType::Q4_K);
    }
    EXPECT_EQ(types.at("output.weight").type, DType::Q6_K);
    EXPECT_EQ(types.at("token_embd.weight").type, DType::Q4_K);  // not shared: the default
}

TEST(QuantizeRules, norms_and_one_dimensional_tensors_keep_their_type) {
    const auto types = choose(llama_model(2, 256, 256, true), FileType::MostlyQ4_0, DType::Q4_0);
    EXPECT_EQ(types.at("output_norm.weight").type, DType::F32);
    EXPECT_FALSE(types.at("output_norm.weight").quantizable);
    EXPECT_EQ(types.at(layer(0, "attn_norm.weight")).type, DType::F32);
    EXPECT_EQ(types.at(layer(0, "attn_q.weight")).type, DType::Q4_0);
}

TEST(QuantizeRules, shared_embeddings_are_quantized_like_the_output) {
    const auto tied = choose(llama_model(2, 256, 256, false), FileType::MostlyQ4_0, DType::Q4_0);
    EXPECT_EQ(tied.at("token_embd.weight").type, DType::Q6_K);
    const auto q8 = choose(llama_model(2, 256, 256, false), FileType::MostlyQ8_0, DType::Q8_0);
    EXPECT_EQ(q8.at("token_embd.weight").type, DType::Q8_0);
    // Rows that do not divide into the file type's blocks: Q8_0.
    const auto k = choose(llama_model(2, 96, 256, false), FileType::MostlyQ4_K_M, DType::Q4_K);
    EXPECT_EQ(k.at("token_embd.weight").type, DType::Q8_0);
}

TEST(QuantizeRules, rows_that_do_not_fit_fall_back_to_a_smaller_block) {
    // 96 elements: no 256-element K-quant fits, a 32-element legacy type does.
    const auto q4 = choose(llama_model(2, 256, 96, true), FileType::MostlyQ4_K_S, DType::Q4_K);
    const TensorTypeChoice& down = q4.at(layer(1, "ffn_down.weight"));
    EXPECT_EQ(down.type, DType::Q5_0);
    EXPECT_EQ(down.fell_back_from, DType::Q4_K);
    EXPECT_EQ(choose(llama_model(2, 256, 96, true), FileType::MostlyQ2_K, DType::Q2_K)
                  .at(layer(1, "ffn_down.weight"))  // Q2_K makes ffn_down Q3_K first
                  .type,
              DType::Q4_0);
    EXPECT_EQ(choose(llama_model(2, 256, 96, true), FileType::MostlyQ5_K_S, DType::Q5_K)
                  .at(layer(1, "ffn_down.weight"))
                  .type,
              DType::Q5_1);
    EXPECT_EQ(choose(llama_model(2, 256, 96, true), FileType::MostlyQ6_K, DType::Q6_K)
                  .at(layer(1, "ffn_down.weight"))
                  .type,
              DType::Q8_0);
    // 40 elements: not even 32 fits: F16.
    const auto odd = choose(llama_model(2, 256, 40, true), FileType::MostlyQ4_0, DType::Q4_0);
    EXPECT_EQ(odd.at(layer(0, "ffn_down.weight")).type, DType::F16);
    EXPECT_EQ(odd.at(layer(0, "ffn_down.weight")).fell_back_from, DType::Q4_0);
    EXPECT_FALSE(odd.at(layer(0, "attn_q.weight")).fell_back_from.has_value());
}

TEST(QuantizeRules, pure_uses_one_type_rows_permitting) {
    TypeRuleOptions options;
    options.pure = true;
    const auto types =
        choose(llama_model(8, 256, 96, true), FileType::MostlyQ4_K_M, DType::Q4_K, options);
    EXPECT_EQ(types.at("output.weight").type, DType::Q4_K);
    EXPECT_EQ(types.at(layer(0, "attn_v.weight")).type, DType::Q4_K);
    EXPECT_EQ(types.at(layer(0, "ffn_down.weight")).type, DType::Q5_0);
}

TEST(QuantizeRules, grouped_attention_gets_a_larger_v_in_q2_k) {
    const auto grouped =
        choose(llama_model(2, 256, 256, true, 8, 2), FileType::MostlyQ2_K, DType::Q2_K);
    EXPECT_EQ(grouped.at(layer(0, "attn_v.weight")).type, DType::Q4_K);
    const auto plain = choose(llama_model(2, 256, 256, true), FileType::MostlyQ2_K, DType::Q2_K);
    EXPECT_EQ(plain.at(layer(0, "attn_v.weight")).type, DType::Q3_K);
    EXPECT_EQ(plain.at(layer(0, "attn_output.weight")).type, DType::Q3_K);
    EXPECT_EQ(plain.at(layer(0, "ffn_down.weight")).type, DType::Q3_K);
    EXPECT_EQ(plain.at(layer(0, "attn_q.weight")).type, DType::Q2_K);
}

TEST(QuantizeRules, q3_k_m_raises_the_first_two_v_and_the_first_sixteenth_of_ffn_down) {
    const auto types = choose(llama_model(16, 256, 256, true), FileType::MostlyQ3_K_M, DType::Q3_K);
    EXPECT_EQ(types.at(layer(0, "attn_v.weight")).type, DType::Q5_K);
    EXPECT_EQ(types.at(layer(1, "attn_v.weight")).type, DType::Q5_K);
    EXPECT_EQ(types.at(layer(2, "attn_v.weight")).type, DType::Q4_K);
    EXPECT_EQ(types.at(layer(0, "ffn_down.weight")).type, DType::Q5_K);
    EXPECT_EQ(types.at(layer(1, "ffn_down.weight")).type, DType::Q4_K);
    EXPECT_EQ(types.at(layer(0, "attn_output.weight")).type, DType::Q4_K);
}

TEST(QuantizeRules, explicit_output_and_embedding_types_win) {
    TypeRuleOptions options;
    options.output_tensor_type = DType::Q8_0;
    options.token_embedding_type = DType::F16;
    const auto types =
        choose(llama_model(2, 256, 256, true), FileType::MostlyQ4_K_M, DType::Q4_K, options);
    EXPECT_EQ(types.at("output.weight").type, DType::Q8_0);
    EXPECT_EQ(types.at("token_embd.weight").type, DType::F16);
}

TEST(QuantizeRules, leave_output_tensor_keeps_it_as_it_is) {
    TypeRuleOptions options;
    options.quantize_output_tensor = false;
    const auto types =
        choose(llama_model(2, 256, 256, true), FileType::MostlyQ4_K_M, DType::Q4_K, options);
    EXPECT_EQ(types.at("output.weight").type, DType::F32);
    EXPECT_FALSE(types.at("output.weight").quantizable);
}

TEST(QuantizeRules, float_file_types_convert_every_weight_without_mixes) {
    const auto types = choose(llama_model(2, 96, 40, false), FileType::MostlyF16, DType::F16);
    EXPECT_EQ(types.at("token_embd.weight").type, DType::F16);
    EXPECT_EQ(types.at(layer(0, "ffn_down.weight")).type, DType::F16);
    EXPECT_EQ(types.at(layer(0, "attn_norm.weight")).type, DType::F32);
}

TEST(QuantizeRules, an_expert_tensor_needs_a_layer_number) {
    TinyModel m = llama_model(2, 256, 256, true);
    m.facts.n_expert = 4;
    m.tensors.push_back({"ffn_down_exps.weight", DType::F32, {256, 4, 4}});
    EXPECT_THROW(choose(m, FileType::MostlyQ4_K_M, DType::Q4_K), util::InputError);
}

TEST(QuantizeRules, order_is_by_layer_number_then_name) {
    std::vector<std::string> names = {"blk.10.attn_q.weight", "output.weight",
                                      "blk.2.ffn_up.weight",  "blk.2.attn_k.weight",
                                      "token_embd.weight",    "blk.1.attn_q.weight"};
    std::sort(names.begin(), names.end(), quantize_order_less);
    const std::vector<std::string> expected = {"output.weight",       "token_embd.weight",
                                               "blk.1.attn_q.weight", "blk.2.attn_k.weight",
                                               "blk.2.ffn_up.weight", "blk.10.attn_q.weight"};
    EXPECT_EQ(names, expected);
}

}  // namespace
}  // namespace ladder::tools
