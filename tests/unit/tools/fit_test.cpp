// fit's arithmetic: the classic sizing rules of thumb, exact formulas on
// small synthetic models, sliding windows, tensor parallelism and bad input.
#include "ladder/tools/fit.h"

#include <gtest/gtest.h>

#include "ladder/tools/device_presets.h"
#include "ladder/util/error.h"

namespace ladder::tools {
namespace {

constexpr double kGB = 1e9;

FitRequest on_device(const char* name, int32_t n_devices = 1) {
    const Device device = find_device(name);
    FitRequest request;
    request.device_name = device.name;
    request.device_memory_bytes = device.memory_bytes;
    request.n_devices = n_devices;
    return request;
}

FitModel preset(const char* name, const char* weights = "bf16") {
    return fit_model_from_preset(find_model_preset(name), parse_weight_type(weights));
}

bool suggests(const std::vector<FitSuggestion>& suggestions, const std::string& flag) {
    for (const auto& s : suggestions) {
        if (s.flag == flag) return true;
    }
    return false;
}

// n_layers layers of n_kv_heads heads of head_dim, f16 cache unless changed.
FitModel synthetic(int32_t n_layers, int32_t n_kv_heads, int32_t head_dim, uint64_t weights_bytes) {
    FitModel model;
    model.name = "synthetic";
    model.source = "test";
    model.n_params = static_cast<int64_t>(weights_bytes / 2);
    model.weights_type = "f16";
    model.weights_bytes = weights_bytes;
    model.n_heads = 4 * n_kv_heads;
    model.context_length = 1024;
    for (int32_t i = 0; i < n_layers; ++i)
        model.layers.push_back({n_kv_heads, head_dim, head_dim, false});
    return model;
}

// Exactly `bytes` usable per device: no utilization cut, no reserve.
FitRequest exact_memory(uint64_t bytes, int64_t context, int64_t concurrency = 1) {
    FitRequest request;
    request.device_name = "test";
    request.device_memory_bytes = bytes;
    request.memory_utilization = 1.0;
    request.reserve_bytes = 0;
    request.context = context;
    request.concurrency = concurrency;
    return request;
}

TEST(FitClassic, llama3_8b_at_16_bit_is_16_gb_and_fits_one_80_gb_gpu_with_room_for_kv) {
    const FitPlan plan = plan_fit(preset("llama3-8b"), on_device("h100-80g"));
    EXPECT_EQ(plan.weights_bytes, 8'030'261'248u * 2);
    EXPECT_NEAR(static_cast<double>(plan.weights_bytes) / kGB, 16.0, 0.5);
    // 2 × 32 layers × 8 KV heads × 128 × 2 bytes.
    EXPECT_EQ(plan.kv_bytes_per_token, 2u * 32 * 8 * 128 * 2);
    EXPECT_TRUE(plan.fits);
    EXPECT_GT(plan.kv_budget_bytes, 50 * kGiB) << "room for KV after 16 GB of weights";
    EXPECT_GE(plan.max_concurrent_sequences, 50);  // of the 8192-token trained context
}

TEST(FitClassic, llama3_70b_at_16_bit_is_140_gb_and_needs_two_80_gb_gpus) {
    const FitModel model = preset("llama3-70b");
    const FitPlan one = plan_fit(model, on_device("h100-80g"));
    EXPECT_NEAR(static_cast<double>(one.weights_bytes) / kGB, 141.1, 0.1);
    EXPECT_FALSE(one.weights_fit);
    EXPECT_FALSE(one.fits);
    EXPECT_EQ(one.max_concurrent_sequences, 0);
    EXPECT_GT(one.shortfall_bytes, 50 * kGiB);
    EXPECT_TRUE(suggests(suggest_fits(model, on_device("h100-80g"), one), "--tp 2"));

    const FitPlan two = plan_fit(model, on_device("h100-80g", 2));
    EXPECT_TRUE(two.fits);
    EXPECT_EQ(two.weights_bytes_per_device, two.weights_bytes / 2);
    EXPECT_GE(two.max_concurrent_sequences, 1);
    // The same on A100s.
    EXPECT_FALSE(plan_fit(model, on_device("a100-80g")).fits);
    EXPECT_TRUE(plan_fit(model, on_device("a100-80g", 2)).fits);
}

TEST(FitClassic, llama3_70b_at_4_bit_is_about_35_gb_and_fits_one_80_gb_gpu) {
    const FitModel model = preset("llama3-70b", "q4_k");
    const FitPlan plan = plan_fit(model, on_device("h100-80g"));
    // 4.5 bits per weight (q4_k's block layout): 144 bytes per 256 weights.
    EXPECT_EQ(plan.weights_bytes, 70'553'706'496u / 256 * 144);
    EXPECT_GT(static_cast<double>(plan.weights_bytes) / kGB, 35.0);
    EXPECT_LT(static_cast<double>(plan.weights_bytes) / kGB, 40.0);
    EXPECT_TRUE(plan.fits);
    // And a 4-bit 70B is what suggest_fits offers when bf16 does not fit.
    const FitModel bf16 = preset("llama3-70b");
    const FitRequest one = on_device("h100-80g");
    const auto suggestions = suggest_fits(bf16, one, plan_fit(bf16, one));
    bool smaller_dtype = false;
    for (const auto& s : suggestions) smaller_dtype |= s.flag.starts_with("--weights-dtype");
    EXPECT_TRUE(smaller_dtype);
}

TEST(FitArithmetic, budget_sequences_and_context_follow_the_formulas) {
    // 4 layers × 2 (K, V) × 2 heads × 8 × 2 bytes = 256 bytes per token.
    const FitModel model = synthetic(4, 2, 8, 1000);
    const FitPlan plan = plan_fit(model, exact_memory(10'000, 10));
    EXPECT_EQ(plan.kv_bytes_per_token, 256u);
    EXPECT_EQ(plan.kv_bytes_per_sequence, 2560u);
    EXPECT_EQ(plan.kv_budget_bytes, 9000u);
    EXPECT_EQ(plan.max_concurrent_sequences, 3);  // 9000 / 2560
    EXPECT_EQ(plan.max_context, 35);              // 9000 / 256
    EXPECT_TRUE(plan.fits);

    const FitPlan two = plan_fit(model, exact_memory(10'000, 10, 2));
    EXPECT_EQ(two.max_context, 17);  // 4500 / 256
    const FitPlan four = plan_fit(model, exact_memory(10'000, 10, 4));
    EXPECT_FALSE(four.fits);
    EXPECT_TRUE(four.weights_fit);
}

TEST(FitArithmetic, utilization_and_reserve_come_off_each_device) {
    const FitModel model = synthetic(4, 2, 8, 1000);
    FitRequest request = exact_memory(10'000, 10);
    request.memory_utilization = 0.9;
    request.reserve_bytes = 500;
    const FitPlan plan = plan_fit(model, request);
    EXPECT_EQ(plan.usable_bytes, 8500u);  // 9000 - 500
    EXPECT_EQ(plan.kv_budget_bytes, 7500u);
}

TEST(FitArithmetic, sliding_window_layers_hold_at_most_the_window) {
    FitModel model = synthetic(4, 2, 8, 1000);  // 64 bytes per token per layer
    model.sliding_window = 4;
    for (int i = 0; i < 3; ++i) model.layers[static_cast<size_t>(i)].sliding = true;
    const FitPlan plan = plan_fit(model, exact_memory(10'000, 10));
    EXPECT_EQ(plan.kv_bytes_per_token, 256u);            // the plain formula, unchanged
    EXPECT_EQ(plan.kv_bytes_per_sequence, 640u + 768u);  // 1 × 64 × 10 + 3 × 64 × 4
    EXPECT_EQ(plan.max_concurrent_sequences, 6);         // 9000 / 1408
    EXPECT_EQ(plan.max_context, 128);                    // (9000 - 768) / 64
    // Below the window every layer grows with the context.
    EXPECT_EQ(plan_fit(model, exact_memory(1000 + 3 * 256, 3)).max_context, 3);
}

TEST(FitArithmetic, only_sliding_layers_make_the_context_unbounded) {
    FitModel model = synthetic(2, 2, 8, 1000);
    model.sliding_window = 4;
    for (auto& layer : model.layers) layer.sliding = true;
    const FitPlan plan = plan_fit(model, exact_memory(10'000, 100));
    EXPECT_FALSE(plan.max_context.has_value());
    EXPECT_EQ(plan.kv_bytes_per_sequence, 2u * 64 * 4);
}

TEST(FitArithmetic, tensor_parallel_replicates_kv_heads_when_devices_outnumber_them) {
    const FitModel model = synthetic(4, 2, 8, 4000);  // 2 KV heads, 8 query heads
    const FitPlan two = plan_fit(model, exact_memory(10'000, 10));
    FitRequest request = exact_memory(10'000, 10);
    request.n_devices = 2;
    const FitPlan split = plan_fit(model, request);
    EXPECT_EQ(split.kv_bytes_per_sequence, two.kv_bytes_per_sequence);  // one head each
    EXPECT_EQ(split.weights_bytes_per_device, 2000u);
    EXPECT_EQ(split.kv_budget_bytes, 2 * (10'000u - 2000));
    request.n_devices = 4;
    const FitPlan replicated = plan_fit(model, request);
    EXPECT_EQ(replicated.kv_bytes_per_sequence, 2 * two.kv_bytes_per_sequence);
    EXPECT_EQ(replicated.kv_bytes_per_token, two.kv_bytes_per_token);
}

TEST(FitArithmetic, quantized_kv_uses_its_block_layout) {
    const FitModel model = synthetic(2, 1, 64, 1000);
    FitRequest request = exact_memory(100'000, 10);
    request.kv_type = parse_kv_type("q8_0");
    // A row of 64 values is two q8_0 blocks of 34 bytes; K and V, 2 layers.
    EXPECT_EQ(plan_fit(model, request).kv_bytes_per_token, 2u * 2 * 68);
    // head_dim 8 is not a whole block of 32.
    EXPECT_THROW(plan_fit(synthetic(2, 1, 8, 1000), request), util::InputError);
}

TEST(FitArithmetic, default_context_is_the_trained_one) {
    const FitModel model = synthetic(4, 2, 8, 1000);
    EXPECT_EQ(plan_fit(model, exact_memory(1'000'000, 0)).context, 1024);
    FitModel unknown = model;
    unknown.context_length = 0;
    EXPECT_THROW(plan_fit(unknown, exact_memory(1'000'000, 0)), util::InputError);
}

TEST(FitSuggestions, short_kv_suggests_kv_dtype_context_and_concurrency) {
    const FitModel model = synthetic(4, 2, 32, 1000);            // 1024 bytes per token in f16
    const FitRequest request = exact_memory(1000 + 6000, 4, 2);  // 2 × 4096 > 6000
    const FitPlan plan = plan_fit(model, request);
    ASSERT_FALSE(plan.fits);
    const auto suggestions = suggest_fits(model, request, plan);
    EXPECT_TRUE(suggests(suggestions, "--kv-dtype q8_0"));  // 2 × 2176 = 4352 <= 6000
    EXPECT_TRUE(suggests(suggestions, "--context 2"));      // 3000 / 1024
    EXPECT_TRUE(suggests(suggestions, "--concurrency 1"));
    EXPECT_TRUE(
        suggest_fits(model, exact_memory(100'000, 4), plan_fit(model, exact_memory(100'000, 4)))
            .empty());
}

TEST(FitInput, bad_requests_are_input_errors) {
    const FitModel model = synthetic(4, 2, 8, 1000);
    FitRequest request = exact_memory(10'000, 10);
    request.n_devices = 3;  // does not divide 8 query heads
    EXPECT_THROW(plan_fit(model, request), util::InputError);
    request = exact_memory(10'000, 10);
    request.memory_utilization = 1.5;
    EXPECT_THROW(plan_fit(model, request), util::InputError);
    request = exact_memory(10'000, 10);
    request.concurrency = 0;
    EXPECT_THROW(plan_fit(model, request), util::InputError);
    request = exact_memory(10'000, -1);
    EXPECT_THROW(plan_fit(model, request), util::InputError);
    EXPECT_THROW(plan_fit(model, exact_memory(0, 10)), util::InputError);
}

TEST(FitDevices, sizes_are_what_the_cards_report) {
    EXPECT_EQ(find_device("h100-80g").memory_bytes, 81559ull << 20);
    EXPECT_EQ(find_device("h200-141g").memory_bytes, 143771ull << 20);
    EXPECT_EQ(find_device("a100-80g").memory_bytes, 81920ull << 20);
    EXPECT_EQ(find_device("cpu").memory_bytes, host_memory_bytes());
    EXPECT_GT(host_memory_bytes(), 0u);
    try {
        find_device("tpu-v5");
        FAIL() << "unknown device accepted";
    } catch (const util::InputError& error) {
        const std::string message = error.what();
        EXPECT_NE(message.find("h100-80g"), std::string::npos) << message;
        EXPECT_NE(message.find("cpu"), std::string::npos) << message;
    }
}

}  // namespace
}  // namespace ladder::tools
