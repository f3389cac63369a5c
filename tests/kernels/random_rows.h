// Test helpers for tests/kernels: random weight rows of each dtype, and an
// exact (double) dot product of dequantized rows to bound kernel error.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "ladder/tensor/dtype.h"
#include "ladder/tensor/half.h"
#include "ladder/tensor/quant_blocks.h"
#include "ladder/tensor/reference_ops.h"

namespace ladder::kernels::cpu::testing {

using tensor::DType;

inline size_t bytes_of(DType dtype, int64_t n) {
    return *tensor::row_bytes(dtype, n);
}

inline std::vector<float> random_floats(std::mt19937& rng, int64_t n, float scale = 1.0f) {
    std::normal_distribution<float> normal(0.0f, scale);
    std::vector<float> x(static_cast<size_t>(n));
    for (auto& v : x) v = normal(rng);
    return x;
}

inline uint16_t random_half(std::mt19937& rng, float lo, float hi) {
    return tensor::fp32_to_fp16(std::uniform_real_distribution<float>(lo, hi)(rng));
}

// A weight row of n elements: random codes (every bit pattern is a valid code)
// with block scales set to sane finite halves.
inline std::vector<uint8_t> random_weight_row(std::mt19937& rng, DType dtype, int64_t n) {
    std::vector<uint8_t> row(bytes_of(dtype, n));
    for (auto& b : row) b = static_cast<uint8_t>(rng());
    const int64_t n_blocks = n / tensor::dtype_traits(dtype).block_elements;
    switch (dtype) {
        case DType::F32: {
            const auto x = random_floats(rng, n);
            std::memcpy(row.data(), x.data(), row.size());
            break;
        }
        case DType::F16: {
            auto* h = reinterpret_cast<uint16_t*>(row.data());
            for (int64_t i = 0; i < n; ++i) h[i] = random_half(rng, -1.0f, 1.0f);
            break;
        }
        case DType::BF16: {
            auto* h = reinterpret_cast<uint16_t*>(row.data());
            const auto x = random_floats(rng, n);
            for (int64_t i = 0; i < n; ++i) h[i] = tensor::fp32_to_bf16(x[i]);
            break;
        }
        case DType::Q4_0: {
            auto* b = reinterpret_cast<tensor::BlockQ4_0*>(row.data());
            for (int64_t i = 0; i < n_blocks; ++i) b[i].d = random_half(rng, -0.1f, 0.1f);
            break;
        }
        case DType::Q5_1: {
            auto* b = reinterpret_cast<tensor::BlockQ5_1*>(row.data());
            for (int64_t i = 0; i < n_blocks; ++i) {
                b[i].d = random_half(rng, 0.001f, 0.05f);
                b[i].m = random_half(rng, -0.8f, 0.0f);
            }
            break;
        }
        case DType::Q2_K: {
            auto* b = reinterpret_cast<tensor::BlockQ2_K*>(row.data());
            for (int64_t i = 0; i < n_blocks; ++i) {
                b[i].d = random_half(rng, 0.0001f, 0.002f);
                b[i].dmin = random_half(rng, 0.0001f, 0.002f);
            }
            break;
        }
        case DType::Q3_K: {
            auto* b = reinterpret_cast<tensor::BlockQ3_K*>(row.data());
            for (int64_t i = 0; i < n_blocks; ++i) b[i].d = random_half(rng, -0.001f, 0.001f);
            break;
        }
        case DType::Q5_K: {
            auto* b = reinterpret_cast<tensor::BlockQ5_K*>(row.data());
            for (int64_t i = 0; i < n_blocks; ++i) {
                b[i].d = random_half(rng, 0.0001f, 0.002f);
                b[i].dmin = random_half(rng, 0.0001f, 0.002f);
            }
            break;
        }
        case DType::Q4_1: {
            auto* b = reinterpret_cast<tensor::BlockQ4_1*>(row.data());
            for (int64_t i = 0; i < n_blocks; ++i) {
                b[i].d = random_half(rng, 0.001f, 0.1f);
                b[i].m = random_half(rng, -0.8f, 0.0f);
            }
            break;
        }
        case DType::Q5_0: {
            auto* b = reinterpret_cast<tensor::BlockQ5_0*>(row.data());
            for (int64_t i = 0; i < n_blocks; ++i) b[i].d = random_half(rng, -0.1f, 0.1f);
            break;
        }
        case DType::Q8_0: {
            auto* b = reinterpret_cast<tensor::BlockQ8_0*>(row.data());
            for (int64_t i = 0; i < n_blocks; ++i) {
                b[i].d = random_half(rng, -0.01f, 0.01f);
                for (auto& q : b[i].qs) q = q == -128 ? int8_t{-127} : q;  // as quantize makes
            }
            break;
        }
        case DType::Q4_K: {
            auto* b = reinterpret_cast<tensor::BlockQ4_K*>(row.data());
            for (int64_t i = 0; i < n_blocks; ++i) {
                b[i].d = random_half(rng, 0.0001f, 0.002f);
                b[i].dmin = random_half(rng, 0.0001f, 0.002f);
            }
            break;
        }
        case DType::Q6_K: {
            auto* b = reinterpret_cast<tensor::BlockQ6_K*>(row.data());
            for (int64_t i = 0; i < n_blocks; ++i) b[i].d = random_half(rng, -0.001f, 0.001f);
            break;
        }
        default: break;
    }
    return row;
}

// Dequantized values of a row, by tensor's reference.
inline std::vector<float> dequantize(DType dtype, const void* data, int64_t n) {
    std::vector<float> out(static_cast<size_t>(n));
    tensor::dequantize_row(dtype, data, out.data(), n);
    return out;
}

struct ExactDot {
    double value;      // sum of w_i * a_i in double
    double magnitude;  // sum of |w_i * a_i|: the scale float rounding error is relative to
};

inline ExactDot exact_dot(const std::vector<float>& w, const std::vector<float>& a) {
    ExactDot r{0.0, 0.0};
    for (size_t i = 0; i < w.size(); ++i) {
        const double p = static_cast<double>(w[i]) * static_cast<double>(a[i]);
        r.value += p;
        r.magnitude += std::fabs(p);
    }
    return r;
}

}  // namespace ladder::kernels::cpu::testing
