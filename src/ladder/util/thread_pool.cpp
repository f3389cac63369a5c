#include "ladder/util/thread_pool.h"

#include <algorithm>
#include <string>

#include "ladder/util/check.h"
#include "ladder/util/trace.h"

namespace ladder::util {

namespace {

// Spin this many times before sleeping: a decode step opens hundreds of short
// parallel regions, and a futex sleep/wake per region would cost more than the
// work in it.
constexpr int kSpinsBeforeSleep = 20000;

// A region's claim word packs [generation:20][n_tasks:22][next task:22], so a
// worker that wakes late can never claim a task of a region it did not see:
// its compare-and-swap fails once the generation has moved on.
constexpr int kTaskBits = 22;
constexpr uint64_t kTaskMask = (uint64_t{1} << kTaskBits) - 1;
constexpr uint64_t kGenerationMask = (uint64_t{1} << 20) - 1;

uint64_t pack(uint64_t generation, uint64_t n_tasks) {
    return ((generation & kGenerationMask) << (2 * kTaskBits)) | (n_tasks << kTaskBits);
}
uint64_t generation_of(uint64_t word) { return word >> (2 * kTaskBits); }
uint64_t n_tasks_of(uint64_t word) { return (word >> kTaskBits) & kTaskMask; }
uint64_t next_of(uint64_t word) { return word & kTaskMask; }

void cpu_relax() {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
}

}  // namespace

int default_thread_count() {
    const unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : static_cast<int>(n);
}

ThreadPool::ThreadPool(int n_threads) : n_threads_(std::max(1, n_threads)) {
    for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
    stopping_.store(true);
    generation_.fetch_add(1);
    wake_sleepers();
    for (auto& worker : workers_) worker.join();
}

void ThreadPool::wake_sleepers() {
    // A sleeper registers in n_sleeping_ before it re-checks the generation
    // under the mutex; both sides use sequentially consistent operations, so
    // either it sees the new generation or this sees it sleeping.
    if (n_sleeping_.load() == 0) return;
    { const std::lock_guard<std::mutex> lock(sleep_mutex_); }
    wake_.notify_all();
}

int64_t ThreadPool::run_tasks(uint32_t generation) {
    int64_t n_run = 0;
    uint64_t word = claim_.load(std::memory_order_acquire);
    for (;;) {
        if (generation_of(word) != (generation & kGenerationMask)) return n_run;
        if (next_of(word) >= n_tasks_of(word)) return n_run;
        if (!claim_.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel,
                                          std::memory_order_acquire)) {
            continue;
        }
        // The region cannot finish while this claimed task is outstanding, so
        // task_ is still the one published with this generation.
        (*task_)(static_cast<int64_t>(next_of(word)));
        ++n_run;
        n_done_.fetch_add(1, std::memory_order_release);
        word = claim_.load(std::memory_order_acquire);
    }
}

void ThreadPool::worker_loop(int index) {
    trace::set_thread_name("pool worker " + std::to_string(index));
    // Generation 0 is the state at construction. Loading it here instead would
    // lose a region (or the shutdown) published before this thread first ran.
    uint32_t seen = 0;
    for (;;) {
        int spins = 0;
        uint32_t now = generation_.load(std::memory_order_acquire);
        while (now == seen) {
            if (++spins < kSpinsBeforeSleep) {
                cpu_relax();
            } else {
                const int64_t sleep_start = trace::enabled() ? trace::now_ns() : 0;
                n_sleeping_.fetch_add(1);
                std::unique_lock<std::mutex> lock(sleep_mutex_);
                wake_.wait(lock, [&] { return generation_.load() != seen || stopping_.load(); });
                n_sleeping_.fetch_sub(1);
                if (sleep_start != 0) {
                    trace::complete("pool", "sleep", sleep_start, trace::now_ns());
                }
            }
            now = generation_.load(std::memory_order_acquire);
        }
        seen = now;
        if (stopping_.load()) return;
        // The worker's track shows the tasks it ran; the gaps between are
        // its spinning (short) and sleeping (marked) time.
        const int64_t start = trace::enabled() ? trace::now_ns() : 0;
        const int64_t n_run = run_tasks(seen);
        if (start != 0 && n_run > 0) {
            trace::complete("pool", "tasks", start, trace::now_ns(), {{"tasks", n_run}});
        }
    }
}

void ThreadPool::parallel_for(int64_t n_tasks, const std::function<void(int64_t)>& task) {
    if (n_tasks <= 0) return;
    if (n_threads_ == 1 || n_tasks == 1) {
        for (int64_t i = 0; i < n_tasks; ++i) task(i);
        return;
    }
    if (static_cast<uint64_t>(n_tasks) > kTaskMask) {
        // Too many for the claim word: group them into contiguous ranges.
        parallel_ranges(n_tasks, 1, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) task(i);
        });
        return;
    }
    const uint32_t generation = generation_.load(std::memory_order_relaxed) + 1;
    task_ = &task;
    n_done_.store(0, std::memory_order_relaxed);
    claim_.store(pack(generation, static_cast<uint64_t>(n_tasks)), std::memory_order_release);
    generation_.store(generation);
    wake_sleepers();
    // The caller works too; a worker that wakes late finds nothing left, and
    // the caller never waits for a worker that has not started.
    run_tasks(generation);
    while (n_done_.load(std::memory_order_acquire) < n_tasks) cpu_relax();
}

void ThreadPool::parallel_ranges(int64_t n, int64_t min_chunk,
                                 const std::function<void(int64_t, int64_t)>& body) {
    if (n <= 0) return;
    min_chunk = std::max<int64_t>(1, min_chunk);
    // A few chunks per thread so an unlucky slow core does not hold up the rest.
    const int64_t target_chunks = static_cast<int64_t>(n_threads_) * 4;
    const int64_t chunk = std::max(min_chunk, (n + target_chunks - 1) / target_chunks);
    const int64_t n_chunks = (n + chunk - 1) / chunk;
    LADDER_CHECK(static_cast<uint64_t>(n_chunks) <= kTaskMask, "too many chunks for one region");
    parallel_for(n_chunks, [&](int64_t c) {
        const int64_t begin = c * chunk;
        body(begin, std::min(n, begin + chunk));
    });
}

}  // namespace ladder::util
