// Agreement with independent references, from the committed golden data
// (tests/data/quant/, written by scripts/goldens/quant_goldens.py): gguf.quants
// (ggml's Python reference) for dequantize and quantize, a numpy port of
// ggml's Q8_1/Q8_K reference checked against ggml's C library, and ggml's own
// scalar vec_dot. A missing file is a failure, not a skip.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ladder/tensor/dtype.h"
#include "ladder/tensor/reference_ops.h"

namespace ladder::tensor {
namespace quant_golden_test {

using nlohmann::json;

std::optional<json> load_golden(const std::string& name) {
    const std::string path = std::string(LADDER_SOURCE_DIR) + "/tests/data/quant/" + name;
    std::ifstream in(path);
    if (!in) return std::nullopt;
    return json::parse(in);
}

#define LOAD_GOLDEN_OR_FAIL(var, name)                                                    \
    const std::optional<json> var = load_golden(name);                                    \
    ASSERT_TRUE(var.has_value()) << "golden file tests/data/quant/" << name               \
                                 << " is missing; regenerate it with "                    \
                                    "scripts/goldens/quant_goldens.py (see its --help)"

std::vector<uint8_t> from_hex(const std::string& hex) {
    std::vector<uint8_t> bytes(hex.size() / 2);
    for (size_t i = 0; i < bytes.size(); ++i) {
        bytes[i] = static_cast<uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
    }
    return bytes;
}

std::vector<float> floats_from_hex(const std::string& hex) {
    const std::vector<uint8_t> bytes = from_hex(hex);
    std::vector<float> values(bytes.size() / 4);
    std::memcpy(values.data(), bytes.data(), bytes.size());
    return values;
}

uint32_t bits_of(float f) {
    uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
}

DType dtype_named(const std::string& name) {
    for (uint32_t id = 0; id < 64; ++id) {
        const auto traits = dtype_traits(id);
        if (traits && traits->name == name) return traits->dtype;
    }
    ADD_FAILURE() << "golden names unknown type " << name;
    return DType::F32;
}

TEST(QuantGolden, dequantize_row_matches_gguf_bit_for_bit) {
    LOAD_GOLDEN_OR_FAIL(golden, "dequantize.json");
    int n_cases = 0;
    for (const json& c : (*golden)["cases"]) {
        const DType dtype = dtype_named(c["type"]);
        const int64_t n = c["n"];
        const std::vector<uint8_t> data = from_hex(c["data"]);
        const std::vector<float> expected = floats_from_hex(c["expected_f32"]);
        ASSERT_EQ(data.size(), *row_bytes(dtype, n)) << c["type"];
        std::vector<float> got(static_cast<size_t>(n));
        dequantize_row(dtype, data.data(), got.data(), n);
        for (int64_t i = 0; i < n; ++i) {
            ASSERT_EQ(bits_of(got[i]), bits_of(expected[i]))
                << c["type"] << " element " << i << ": got " << got[i] << ", gguf says "
                << expected[i];
        }
        ++n_cases;
    }
    EXPECT_EQ(n_cases, 12) << "one case per dequantizable file type";
}

TEST(QuantGolden, quantize_row_matches_the_reference_bit_for_bit) {
    LOAD_GOLDEN_OR_FAIL(golden, "quantize.json");
    int n_checked = 0;
    for (const json& row : (*golden)["rows"]) {
        const std::vector<float> input = floats_from_hex(row["input_f32"]);
        const int64_t n = row["n"];
        ASSERT_EQ(input.size(), static_cast<size_t>(n));
        for (const auto& [type_name, hex] : row["expected"].items()) {
            const DType dtype = dtype_named(type_name);
            const std::vector<uint8_t> expected = from_hex(hex);
            std::vector<uint8_t> got(*row_bytes(dtype, n));
            ASSERT_EQ(got.size(), expected.size()) << type_name;
            quantize_row(dtype, input.data(), got.data(), n);
            for (size_t i = 0; i < got.size(); ++i) {
                ASSERT_EQ(got[i], expected[i])
                    << type_name << " of row '" << row["case"].get<std::string>() << "': byte "
                    << i << " (block " << i / dtype_traits(dtype).block_bytes << ") differs";
            }
            ++n_checked;
        }
    }
    EXPECT_EQ(n_checked, 3 * 9) << "three rows, nine quantizable types";
}

// ggml's generic dot products, compiled as llama.cpp ships them (native
// flags, C's default FMA contraction), round differently from ladder's plain
// multiply-then-add even where the formula is the same (legacy quants, Q2_K);
// for Q3_K..Q6_K ggml also spreads the float part over 8 partial sums. So the
// check is agreement to float rounding of the magnitude sum(|w_i * a_i|): a
// few ulps, far below what any wrong code, scale or sign would produce.
TEST(QuantGolden, vec_dot_matches_ggml_generic_dot_products) {
    LOAD_GOLDEN_OR_FAIL(golden, "vec_dot.json");
    int n_cases = 0;
    for (const json& c : (*golden)["cases"]) {
        const std::string name = c["weight_type"];
        const DType wtype = dtype_named(name);
        const DType atype = dtype_named(c["activation_type"]);
        ASSERT_EQ(atype, vec_dot_type(wtype)) << name;
        const int64_t n = c["n"];
        const std::vector<uint8_t> w = from_hex(c["weights"]);
        const std::vector<uint8_t> a = from_hex(c["activations"]);
        const float expected = floats_from_hex(c["expected_f32"]).at(0);
        const float got = vec_dot(wtype, w.data(), a.data(), n);

        std::vector<float> wf(static_cast<size_t>(n));
        std::vector<float> af(static_cast<size_t>(n));
        dequantize_row(wtype, w.data(), wf.data(), n);
        dequantize_row(atype, a.data(), af.data(), n);
        double magnitude = 0.0;
        for (int64_t i = 0; i < n; ++i) magnitude += std::fabs(double{wf[i]} * af[i]);
        EXPECT_NEAR(got, expected, 1e-6 * magnitude)
            << name << ": got " << got << ", ggml says " << expected;
        ++n_cases;
    }
    EXPECT_EQ(n_cases, 10) << "one case per quantized weight type";
}

}  // namespace quant_golden_test
}  // namespace ladder::tensor
