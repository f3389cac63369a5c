// Chooses the attention kernel once per process, and stores K/V rows into the
// paged F16 cache. The kernels themselves live in attention_<path>.cpp.
#include "ladder/kernels/cpu/attention.h"

#include "ladder/kernels/cpu/attention_isa.h"
#include "ladder/kernels/cpu/vec_dot.h"
#include "ladder/tensor/half.h"
#include "ladder/util/check.h"

namespace ladder::kernels::cpu {

AttendHeadFn attend_head_for(Isa isa) {
    LADDER_CHECK(isa_supported(isa, cpu_features()), "kernel path not supported by this CPU");
    return isa == Isa::Scalar ? detail::attend_head_scalar : detail::attend_head_avx2;
}

void attend_head(const float* q, const int32_t* block_table, int32_t first_visible,
                 int32_t n_visible, const PagedKvLayer& kv, int32_t kv_head, float scale,
                 float* scores, float* out) {
    // The same path as the matrix products, so LADDER_CPU=scalar runs the reference everywhere.
    static const AttendHeadFn chosen = attend_head_for(cpu_kernels().isa);
    chosen(q, block_table, first_visible, n_visible, kv, kv_head, scale, scores, out);
}

AttendHeadsFn attend_heads_for(Isa isa) {
    LADDER_CHECK(isa_supported(isa, cpu_features()), "kernel path not supported by this CPU");
    switch (isa) {
        case Isa::Scalar:
            return detail::attend_heads_scalar;
        case Isa::Avx2:
            return detail::attend_heads_avx2;
        case Isa::Avx512:
            return detail::attend_heads_avx512;
    }
    return detail::attend_heads_scalar;
}

void attend_heads(const float* q, int32_t n_heads, const int32_t* block_table,
                  int32_t first_visible, int32_t n_visible, const PagedKvLayer& kv,
                  int32_t kv_head, float scale, float* scores, float* out) {
    static const AttendHeadsFn chosen = attend_heads_for(cpu_kernels().isa);
    chosen(q, n_heads, block_table, first_visible, n_visible, kv, kv_head, scale, scores, out);
}

void store_kv(const float* k, const float* v, int64_t slot, uint16_t* keys, uint16_t* values,
              int32_t n_kv_heads, int32_t block_size, int32_t head_dim) {
    const int64_t block = slot / block_size;
    const int64_t offset = slot % block_size;
    for (int32_t h = 0; h < n_kv_heads; ++h) {
        const int64_t base =
            ((block * n_kv_heads + h) * block_size + offset) * static_cast<int64_t>(head_dim);
        for (int32_t d = 0; d < head_dim; ++d) {
            keys[base + d] = tensor::fp32_to_fp16(k[h * head_dim + d]);
            values[base + d] = tensor::fp32_to_fp16(v[h * head_dim + d]);
        }
    }
}

}  // namespace ladder::kernels::cpu
