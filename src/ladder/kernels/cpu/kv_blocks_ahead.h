// Internal to kernels/cpu: asking for one KV head's cache blocks ahead of a
// pass that walks a sequence's positions in order. A sequence's blocks lie
// anywhere in the pool and one head's rows of a block are short (2 KiB of
// SmolLM2's F16 keys, about 1 KiB of its Q8_0 ones), so the hardware
// prefetcher stops at every block's end and a pass over a long context waits
// on memory (docs/performance.md, "At depth on AVX-512 with BF16").
#pragma once

#include <xmmintrin.h>

#include <algorithm>
#include <cstdint>

#include "ladder/kernels/cpu/attention.h"

namespace ladder::kernels::cpu::detail {

class BlocksAhead {
public:
    // How far ahead of the pass, in bytes of the head's rows: a quarter of
    // L1, so what is asked for does not evict what is being read (64 rows of
    // SmolLM2's F16 heads, 16 of Gemma 3's; 64 rows of Gemma's, 32 KiB, made
    // its decode slower, tg32 @ d4096 82 against 90 t/s).
    static constexpr int64_t kAheadBytes = 8 << 10;

    // A pass over the rows of kv_head in `pool` (the layer's keys or values,
    // rows of row_bytes) for the n_rows positions from `first`.
    BlocksAhead(const PagedKvLayer& kv, const void* pool, int64_t row_bytes,
                const int32_t* block_table, int32_t kv_head, int32_t first, int32_t n_rows)
        : BlocksAhead(static_cast<const char*>(pool) + int64_t{kv_head} * kv.block_size * row_bytes,
                      block_table, int64_t{kv.n_kv_heads} * kv.block_size * row_bytes,
                      kv.block_size, row_bytes, first, n_rows) {}

    // The same from the head's rows in the pool's block 0 and the bytes
    // from one pool block to the next.
    BlocksAhead(const void* head_rows, const int32_t* block_table, int64_t block_stride,
                int32_t block_size, int64_t row_bytes, int32_t first, int32_t n_rows)
        : head_rows_(static_cast<const char*>(head_rows)),
          block_table_(block_table),
          block_stride_(block_stride),
          row_bytes_(row_bytes),
          block_size_(block_size),
          rows_ahead_(static_cast<int32_t>(std::max<int64_t>(1, kAheadBytes / row_bytes))),
          first_(first),
          end_(first + std::max(n_rows, 0)),
          // The first rows are read at once: asking for them would only
          // queue their misses twice.
          asked_(std::min(end_, first + rows_ahead_)) {}

    // The pass is about to read its row i (position first + i): asks for the
    // rows up to kAheadBytes past it, none past the pass's last position
    // (the block table may hold no entry there). A few lines at a time, as
    // the pass goes: a whole block's at once was slower (kernels_bench
    // attention_depth exact 13.3 against 12.2 ms), as bursts fill the
    // core's queue of misses.
    void ask(int32_t i) {
        const int32_t want = std::min(end_, first_ + i + rows_ahead_);
        while (asked_ < want) {
            const int32_t block = asked_ / block_size_;
            const int32_t run_end = std::min(want, (block + 1) * block_size_);
            const char* rows = head_rows_ + block_table_[block] * block_stride_;
            fetch(rows + (asked_ - block * block_size_) * row_bytes_,
                  rows + (run_end - block * block_size_) * row_bytes_);
            asked_ = run_end;
        }
    }

private:
    // The lines of [begin, end): rows of 68 bytes (Q8_0) start anywhere in one.
    static void fetch(const char* begin, const char* end) {
        const auto first_line = reinterpret_cast<uintptr_t>(begin) & ~uintptr_t{63};
        for (auto line = first_line; line < reinterpret_cast<uintptr_t>(end); line += 64) {
            _mm_prefetch(reinterpret_cast<const char*>(line), _MM_HINT_T0);
        }
    }

    const char* head_rows_;
    const int32_t* block_table_;
    int64_t block_stride_;
    int64_t row_bytes_;
    int32_t block_size_;
    int32_t rows_ahead_;
    int32_t first_;
    int32_t end_;
    int32_t asked_;
};

}  // namespace ladder::kernels::cpu::detail
