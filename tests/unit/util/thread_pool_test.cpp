// The thread pool runs every task of every region exactly once, and shuts
// down cleanly whether its workers are spinning or asleep.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "ladder/util/thread_pool.h"

namespace ladder::util {
namespace {

TEST(ThreadPool, runs_every_task_exactly_once_across_many_regions) {
    ThreadPool pool(3);
    std::vector<std::atomic<int>> hits(97);
    for (int region = 0; region < 2000; ++region) {
        const int64_t n_tasks = 1 + region % 97;
        pool.parallel_for(n_tasks, [&](int64_t i) { hits[static_cast<size_t>(i)].fetch_add(1); });
    }
    int64_t expected_total = 0;
    for (int region = 0; region < 2000; ++region) expected_total += 1 + region % 97;
    int64_t total = 0;
    for (auto& h : hits) total += h.load();
    EXPECT_EQ(total, expected_total) << "a task was skipped or run twice";
}

TEST(ThreadPool, parallel_ranges_cover_the_range_without_overlap) {
    ThreadPool pool(2);
    std::vector<std::atomic<int>> covered(1001);
    pool.parallel_ranges(1001, 7, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) covered[static_cast<size_t>(i)].fetch_add(1);
    });
    for (size_t i = 0; i < covered.size(); ++i) ASSERT_EQ(covered[i].load(), 1) << "index " << i;
}

TEST(ThreadPool, wakes_sleeping_workers_and_shuts_down) {
    for (int round = 0; round < 3; ++round) {
        ThreadPool pool(3);
        // Long enough for the workers to stop spinning and sleep.
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        std::atomic<int> n{0};
        pool.parallel_for(64, [&](int64_t) { n.fetch_add(1); });
        EXPECT_EQ(n.load(), 64);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }  // each destructor must return: a lost wake-up would hang here
}

}  // namespace
}  // namespace ladder::util
