// Storage types: bytes per weight must come from ggml's block layouts (the
// numbers in ggml-common.h), not from a rounded "4 bits".
#include "ladder/tools/storage_type.h"

#include <gtest/gtest.h>

#include "ladder/util/error.h"

namespace ladder::tools {
namespace {

TEST(StorageType, block_quants_cost_what_their_block_layout_says) {
    // ggml-common.h: block_q4_K is 2 + 2 + 12 + 128 = 144 bytes per 256 weights.
    const StorageType q4_k = parse_weight_type("q4_k");
    EXPECT_EQ(q4_k.block_elements, 256);
    EXPECT_EQ(q4_k.block_bytes, 144);
    EXPECT_DOUBLE_EQ(q4_k.bits_per_element(), 4.5);
    // block_q8_0: an f16 scale and 32 int8 = 34 bytes per 32.
    EXPECT_DOUBLE_EQ(parse_weight_type("q8_0").bits_per_element(), 8.5);
    // block_q6_K: 128 + 64 + 16 + 2 = 210 bytes per 256.
    EXPECT_DOUBLE_EQ(parse_weight_type("q6_k").bits_per_element(), 210.0 * 8 / 256);
    EXPECT_DOUBLE_EQ(parse_weight_type("q2_k").bits_per_element(), 84.0 * 8 / 256);
    EXPECT_DOUBLE_EQ(parse_weight_type("bf16").bits_per_element(), 16.0);
    EXPECT_DOUBLE_EQ(parse_weight_type("fp8").bits_per_element(), 8.0);
}

TEST(StorageType, bytes_round_up_to_whole_blocks) {
    const StorageType q4_k = parse_weight_type("q4_k");
    EXPECT_EQ(q4_k.bytes_for(256), 144u);
    EXPECT_EQ(q4_k.bytes_for(257), 288u);
    EXPECT_EQ(q4_k.bytes_for(0), 0u);
    EXPECT_EQ(parse_weight_type("f16").bytes_for(1000), 2000u);
}

TEST(StorageType, names_are_case_insensitive) {
    EXPECT_EQ(parse_weight_type("Q4_K").name, "q4_k");
    EXPECT_EQ(parse_kv_type("F16").name, "f16");
}

TEST(StorageType, lists_are_largest_first) {
    for (const auto* types : {&weight_storage_types(), &kv_storage_types()}) {
        for (size_t i = 1; i < types->size(); ++i) {
            EXPECT_GE((*types)[i - 1].bits_per_element(), (*types)[i].bits_per_element())
                << (*types)[i - 1].name << " before " << (*types)[i].name;
        }
    }
}

TEST(StorageType, unknown_name_is_one_line_listing_valid_names) {
    try {
        parse_weight_type("q9_z");
        FAIL() << "q9_z was accepted";
    } catch (const util::InputError& error) {
        const std::string message = error.what();
        EXPECT_NE(message.find("q9_z"), std::string::npos) << message;
        EXPECT_NE(message.find("q4_k"), std::string::npos) << message;
        EXPECT_NE(message.find("bf16"), std::string::npos) << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
    // K-quants are not KV cache types in llama.cpp.
    EXPECT_THROW(parse_kv_type("q4_k"), util::InputError);
    EXPECT_THROW(parse_weight_type("q8_k"), util::InputError);
}

}  // namespace
}  // namespace ladder::tools
