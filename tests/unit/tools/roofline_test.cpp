// Decode's roofline by hand: KV read and attention ops per token with
// sliding-window layers, the bound at each batch size, the knee where compute
// takes over, and the case where KV reads keep every batch memory-bound.
#include "ladder/tools/roofline.h"

#include <gtest/gtest.h>

#include "ladder/tools/decode_traffic.h"

namespace ladder::tools {
namespace {

// 4 layers of 4 query heads and 2 KV heads of 16 (K and V); the first three
// keep only the last 8 tokens.
FitModel four_layer_shape() {
    FitModel shape;
    shape.n_heads = 4;
    shape.sliding_window = 8;
    for (int i = 0; i < 4; ++i) shape.layers.push_back({2, 16, 16, i < 3});
    return shape;
}

ModelTraffic hundred_megabyte_weights() {
    ModelTraffic weights;
    weights.decode_bytes_per_token = 100'000'000;
    weights.layer_matmul_params = 90'000'000;
    weights.output_matmul_params = 10'000'000;
    return weights;
}

// 100 MB of weights, 200 M ops and kv_bytes of KV per token.
DecodeTraffic traffic_with_kv(double kv_bytes) {
    DecodeTraffic traffic;
    traffic.context = 1;
    traffic.weight_bytes_per_step = 100e6;
    traffic.matmul_ops_per_token = 200e6;
    traffic.kv_bytes_per_token = kv_bytes;
    return traffic;
}

constexpr MachineCeilings kMachine{50e9, 200e9};  // ridge at 4 ops/byte

TEST(DecodeTraffic, sliding_layers_read_at_most_their_window) {
    const DecodeTraffic traffic =
        decode_traffic(hundred_megabyte_weights(), four_layer_shape(), 100);
    // Positions read: 3 local layers × 8 + 1 global layer × 100 = 124; each
    // is 2 KV heads × (16 + 16) F16 values, and 4 query heads × (16 + 16)
    // multiply-adds.
    EXPECT_DOUBLE_EQ(traffic.kv_bytes_per_token, 124.0 * 2 * 32 * 2);
    EXPECT_DOUBLE_EQ(traffic.attention_ops_per_token, 124.0 * 4 * 32 * 2);
    EXPECT_DOUBLE_EQ(traffic.weight_bytes_per_step, 100e6);
    EXPECT_DOUBLE_EQ(traffic.matmul_ops_per_token, 200e6);
    EXPECT_DOUBLE_EQ(traffic.ops_per_token(), 200e6 + 124.0 * 256);
}

TEST(DecodeTraffic, a_context_inside_the_window_is_read_whole_by_every_layer) {
    const DecodeTraffic traffic = decode_traffic(hundred_megabyte_weights(), four_layer_shape(), 5);
    EXPECT_DOUBLE_EQ(traffic.kv_bytes_per_token, 4 * 5.0 * 2 * 32 * 2);
}

TEST(Roofline, single_ceilings_divide_the_machine_figure_by_the_cost_per_token) {
    EXPECT_DOUBLE_EQ(memory_ceiling_tokens_per_second(100e6, 50e9), 500.0);
    EXPECT_DOUBLE_EQ(compute_ceiling_tokens_per_second(200e6, 100e9), 500.0);
    EXPECT_DOUBLE_EQ(kMachine.ridge_ops_per_byte(), 4.0);
}

TEST(Roofline, batch_one_is_memory_bound_and_batching_amortizes_the_weights) {
    const DecodeTraffic traffic = traffic_with_kv(0);
    const RooflinePoint one = roofline_point(traffic, kMachine, 1);
    EXPECT_FALSE(one.compute_bound);
    EXPECT_DOUBLE_EQ(one.ops_per_byte, 2.0);
    EXPECT_DOUBLE_EQ(one.tokens_per_second, 500.0) << "2 ms to read 100 MB at 50 GB/s";

    // At batch 2 reading (2 ms) and computing (2 × 1 ms) take the same time:
    // compute is the bound from there, and total tokens/s stops growing.
    const RooflinePoint two = roofline_point(traffic, kMachine, 2);
    EXPECT_TRUE(two.compute_bound);
    EXPECT_DOUBLE_EQ(two.tokens_per_second, 1000.0);
    const RooflinePoint four = roofline_point(traffic, kMachine, 4);
    EXPECT_TRUE(four.compute_bound);
    EXPECT_DOUBLE_EQ(four.ops_per_byte, 8.0);
    EXPECT_DOUBLE_EQ(four.tokens_per_second, 1000.0);
    EXPECT_DOUBLE_EQ(four.tokens_per_second_per_sequence, 250.0);
    EXPECT_EQ(knee_batch(traffic, kMachine), 2);
}

TEST(Roofline, kv_reads_push_the_knee_out) {
    // 1 MB of KV per sequence adds 20 us per sequence to the read: batch 2
    // reads for 2.04 ms against 2 ms of compute, batch 3 is compute-bound.
    const DecodeTraffic traffic = traffic_with_kv(1e6);
    EXPECT_FALSE(roofline_point(traffic, kMachine, 2).compute_bound);
    EXPECT_TRUE(roofline_point(traffic, kMachine, 3).compute_bound);
    EXPECT_EQ(knee_batch(traffic, kMachine), 3);
}

TEST(Roofline, kv_heavier_than_the_ops_keeps_every_batch_memory_bound) {
    // 100 MB of KV per sequence reads for 2 ms, longer than its 1 ms of ops.
    const DecodeTraffic traffic = traffic_with_kv(100e6);
    EXPECT_EQ(knee_batch(traffic, kMachine), std::nullopt);
    for (const int64_t batch : {1, 16, 4096}) {
        EXPECT_FALSE(roofline_point(traffic, kMachine, batch).compute_bound) << "batch " << batch;
    }
    EXPECT_DOUBLE_EQ(roofline_point(traffic, kMachine, 1).tokens_per_second, 250.0);
}

}  // namespace
}  // namespace ladder::tools
