#include "ladder/tools/bench_runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "ladder/tools/bench_arrivals.h"
#include "ladder/tools/bench_progress.h"

namespace ladder::tools {

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kProgressTick = std::chrono::milliseconds(100);

double seconds_between(Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double>(to - from).count();
}

// Requests released by arrival time and taken by the workers in order.
class ReleaseQueue {
public:
    explicit ReleaseQueue(size_t n_total) : n_total_(n_total) {}

    void release_up_to(size_t n_released) {
        {
            std::lock_guard lock(mutex_);
            n_released_ = n_released;
        }
        released_.notify_all();
    }
    // The next request to send, or n_total when every one has been taken.
    size_t take() {
        std::unique_lock lock(mutex_);
        released_.wait(lock, [this] { return next_ < n_released_ || next_ >= n_total_; });
        return next_ < n_total_ ? next_++ : n_total_;
    }

private:
    std::mutex mutex_;
    std::condition_variable released_;
    size_t n_total_;
    size_t n_released_ = 0;
    size_t next_ = 0;
};

}  // namespace

BenchRun run_load(const BenchTarget& target, const std::vector<BenchPrompt>& prompts,
                  const LoadOptions& options) {
    const size_t n_total = prompts.size();
    ArrivalOptions arrival_options;
    arrival_options.request_rate = options.request_rate;
    arrival_options.burstiness = options.burstiness;
    const std::vector<double> arrivals =
        arrival_times(static_cast<int64_t>(n_total), arrival_options, options.seed);
    const size_t n_workers = options.max_concurrency > 0
                                 ? std::min(n_total, static_cast<size_t>(options.max_concurrency))
                                 : n_total;
    BenchRun run;
    run.results.resize(n_total);
    run.max_concurrency = options.max_concurrency;
    run.request_rate = options.request_rate;

    ReleaseQueue queue(n_total);
    std::atomic<int64_t> live_tokens{0};
    std::atomic<int64_t> n_done{0};
    std::atomic<int64_t> n_failed{0};
    const Clock::time_point start = Clock::now();
    std::vector<std::thread> workers;
    for (size_t w = 0; w < n_workers; ++w) {
        workers.emplace_back([&] {
            for (size_t i = queue.take(); i < n_total; i = queue.take()) {
                const double sent_s = seconds_between(start, Clock::now());
                run.results[i] = send_streaming_request(target, prompts[i], live_tokens);
                run.results[i].start_s = sent_s;
                if (!run.results[i].success) ++n_failed;
                ++n_done;
            }
        });
    }
    std::thread progress_thread([&] {
        ProgressLine progress(options.show_progress, options.label, static_cast<int64_t>(n_total));
        while (n_done.load() < static_cast<int64_t>(n_total)) {
            std::this_thread::sleep_for(kProgressTick);
            progress.update(seconds_between(start, Clock::now()), n_done, n_failed, live_tokens);
        }
        progress.finish(seconds_between(start, Clock::now()), n_done, n_failed, live_tokens);
    });
    for (size_t i = 0; i < n_total; ++i) {
        std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>(arrivals[i])));
        // Release every request due by now in one step (all of them at an infinite rate).
        size_t due = i + 1;
        while (due < n_total && arrivals[due] <= arrivals[i]) ++due;
        queue.release_up_to(due);
        i = due - 1;
    }
    for (std::thread& worker : workers) worker.join();
    run.duration_s = seconds_between(start, Clock::now());
    progress_thread.join();
    return run;
}

}  // namespace ladder::tools
