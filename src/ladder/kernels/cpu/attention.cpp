// Chooses the attention kernel once per process, and stores K/V rows into the
// paged cache in its types. The kernels themselves live in attention_<path>.cpp.
#include "ladder/kernels/cpu/attention.h"

#include "ladder/kernels/cpu/attention_isa.h"
#include "ladder/kernels/cpu/kv_tiles.h"
#include "ladder/kernels/cpu/vec_dot.h"
#include "ladder/tensor/reference_ops.h"
#include "ladder/util/check.h"

namespace ladder::kernels::cpu {

namespace {

int64_t cache_row_bytes(tensor::DType type, int32_t head_dim) {
    const auto bytes = tensor::row_bytes(type, head_dim);
    LADDER_CHECK(bytes.has_value(), "KV row not a whole number of blocks; the planner checks it");
    return static_cast<int64_t>(*bytes);
}

int64_t row_offset(const PagedKvLayer& kv, int64_t block, int32_t kv_head, int32_t in_block,
                   int64_t row_bytes) {
    return ((block * kv.n_kv_heads + kv_head) * kv.block_size + in_block) * row_bytes;
}

// One row in a cache type. Q8_0 rows are what ggml-cpu's quantize_row_q8_0
// (the from_float llama.cpp stores its cache with) writes: the x86 Q8_0
// quantizer of cpu_kernels(), 127 / amax and halves to even, which every path
// gives in the same bytes. The others by tensor's reference, which is ggml's
// for them (Q4_0's from_float is quantize_row_q4_0_ref; F16 and BF16 round
// to nearest even).
void store_row(tensor::DType type, const float* x, uint8_t* row, int32_t n) {
    if (type == tensor::DType::Q8_0) {
        cpu_kernels().quantize_row(type)(x, row, n);
        return;
    }
    tensor::quantize_row(type, x, row, n);
}

}  // namespace

bool kv_cache_type_supported(tensor::DType type) {
    return type == tensor::DType::F16 || type == tensor::DType::BF16 ||
           type == tensor::DType::Q8_0 || type == tensor::DType::Q4_0;
}

int64_t PagedKvLayer::key_row_bytes() const { return cache_row_bytes(key_type, head_dim); }
int64_t PagedKvLayer::value_row_bytes() const { return cache_row_bytes(value_type, head_dim); }

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
    if (!kv.is_f16()) {
        attend_heads_any_type(q, n_heads, block_table, first_visible, n_visible, kv, kv_head, scale,
                              scores, out);
        return;
    }
    static const AttendHeadsFn chosen = attend_heads_for(cpu_kernels().isa);
    chosen(q, n_heads, block_table, first_visible, n_visible, kv, kv_head, scale, scores, out);
}

const SplitAttentionKernels* split_attention_for(Isa isa) {
    LADDER_CHECK(isa_supported(isa, cpu_features()), "kernel path not supported by this CPU");
    switch (isa) {
        case Isa::Scalar:
            return nullptr;
        case Isa::Avx2:
            return &detail::kSplitAttentionAvx2;
        case Isa::Avx512:
            return &detail::kSplitAttentionAvx512;
    }
    return nullptr;
}

const SplitAttentionKernels* split_attention() {
    static const SplitAttentionKernels* chosen = split_attention_for(cpu_kernels().isa);
    return chosen;
}

void store_kv(const float* k, const float* v, int64_t slot, void* keys, void* values,
              const PagedKvLayer& layout) {
    const int64_t block = slot / layout.block_size;
    const auto in_block = static_cast<int32_t>(slot % layout.block_size);
    const int64_t key_bytes = layout.key_row_bytes();
    const int64_t value_bytes = layout.value_row_bytes();
    // One half (K or V) of one head: into its tiles, or into its row of the head's block.
    const auto store_half = [&](tensor::DType type, auto store_in_tiles, const float* x, void* pool,
                                int64_t row_bytes, int32_t h) {
        uint8_t* head_block =
            static_cast<uint8_t*>(pool) + row_offset(layout, block, h, 0, row_bytes);
        if (stored_in_tiles(type)) {
            store_in_tiles(x, reinterpret_cast<uint16_t*>(head_block), in_block, layout.head_dim);
        } else {
            store_row(type, x, head_block + in_block * row_bytes, layout.head_dim);
        }
    };
    for (int32_t h = 0; h < layout.n_kv_heads; ++h) {
        const int64_t dim_offset = static_cast<int64_t>(h) * layout.head_dim;
        store_half(layout.key_type, store_key_in_tiles, k + dim_offset, keys, key_bytes, h);
        store_half(layout.value_type, store_value_in_tiles, v + dim_offset, values, value_bytes, h);
    }
}

}  // namespace ladder::kernels::cpu
