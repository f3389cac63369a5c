// One persistent pool of worker threads that kernels split rows over. Threads
// are started once; each parallel region costs a wake-up, not a thread start.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ladder::util {

class ThreadPool {
public:
    // n_threads counts the calling thread: a pool of 1 runs everything inline.
    explicit ThreadPool(int n_threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int n_threads() const { return n_threads_; }

    // Calls task(i) for every i in [0, n_tasks) across the pool and returns when
    // all are done. Tasks are handed out dynamically; callers that need a fixed
    // reduction order must make each task's result independent of which thread
    // ran it (kernels do: one task owns whole output rows).
    void parallel_for(int64_t n_tasks, const std::function<void(int64_t)>& task);

    // Splits [0, n) into contiguous chunks of at least min_chunk and calls
    // body(begin, end) for each.
    void parallel_ranges(int64_t n, int64_t min_chunk,
                         const std::function<void(int64_t, int64_t)>& body);

private:
    void worker_loop(int index);
    void wake_sleepers();
    // Claims and runs tasks of the region published with this generation;
    // returns how many it ran.
    int64_t run_tasks(uint32_t generation);

    int n_threads_;
    std::vector<std::thread> workers_;
    const std::function<void(int64_t)>* task_ = nullptr;
    std::atomic<uint64_t> claim_{0};       // generation, task count and next task, packed
    std::atomic<int64_t> n_done_{0};       // tasks of the current region finished
    std::atomic<uint32_t> generation_{0};  // bumped to wake workers for a new region
    // Workers that stop spinning sleep on this condition variable, not on
    // std::atomic::wait: GCC 12's atomic wait can lose a wake-up and hang.
    std::mutex sleep_mutex_;
    std::condition_variable wake_;
    std::atomic<int> n_sleeping_{0};
    std::atomic<bool> stopping_{false};
};

// Default thread count: the machine's cores.
int default_thread_count();

}  // namespace ladder::util
