// Admission with a real engine: all-or-nothing submission, requests larger
// than the queue, the drain's close and abort_all, and the live count that
// a drain waits on.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <thread>

#include "ladder/server/admission.h"
#include "ladder/server/api_error.h"
#include "ladder/util/thread_pool.h"
#include "server_test_support.h"

namespace ladder::server {
namespace {

class ServerAdmissionTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        bundle_ = testing::shared_bundle();
        pool_ = new util::ThreadPool(2);
    }
    static void TearDownTestSuite() {
        delete pool_;
        pool_ = nullptr;
    }
    void SetUp() override {
        if (bundle_ == nullptr) GTEST_SKIP() << "default model not present; run `make model`";
        engine_ = make_engine(256);
    }

    static std::unique_ptr<engine::Engine> make_engine(int32_t max_num_seqs) {
        engine::EngineConfig config;
        config.kv_cache_bytes = int64_t{32} << 20;
        config.max_model_len = 256;
        config.max_num_seqs = max_num_seqs;
        return std::make_unique<engine::Engine>(*bundle_->model, *bundle_->tokenizer, *pool_,
                                                config);
    }

    static engine::RequestParams request(int32_t max_tokens) {
        engine::RequestParams params;
        params.prompt = bundle_->tokenizer->encode("Hello there", true, false);
        params.max_tokens = max_tokens;
        params.ignore_eos = true;
        return params;
    }
    static std::function<engine::OutputSink(size_t)> ignore_outputs() {
        return [](size_t) { return [](engine::RequestOutput&&) {}; };
    }
    static void wait_until(const std::function<bool()>& done) {
        for (int i = 0; i < 1000 && !done(); ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    static void wait_until_idle(const Admission& admission) {
        wait_until([&] { return admission.n_live() == 0; });
    }
    static int status_of_submit(Admission& admission, std::vector<engine::RequestParams> requests) {
        try {
            admission.submit(std::move(requests), ignore_outputs());
        } catch (const ApiError& error) {
            return error.status();
        }
        return 200;
    }

    static engine::ModelBundle* bundle_;
    static util::ThreadPool* pool_;
    std::unique_ptr<engine::Engine> engine_;
};

engine::ModelBundle* ServerAdmissionTest::bundle_ = nullptr;
util::ThreadPool* ServerAdmissionTest::pool_ = nullptr;

TEST_F(ServerAdmissionTest, FinishedRequestsLeaveTheLiveSet) {
    Admission admission(*engine_, std::nullopt);
    const auto ids = admission.submit({request(2), request(3)}, ignore_outputs());
    EXPECT_EQ(ids.size(), 2u);
    wait_until_idle(admission);
    EXPECT_EQ(admission.n_live(), 0);
}

TEST_F(ServerAdmissionTest, ARefusedRequestLeavesNothingRunning) {
    Admission admission(*engine_, std::nullopt);
    // The second is over the context: the first, already submitted, is taken back.
    EXPECT_EQ(status_of_submit(admission, {request(200), request(10000)}), 400);
    wait_until_idle(admission);
    EXPECT_EQ(admission.n_live(), 0);
    EXPECT_EQ(engine_->n_in_flight(), 0);
}

TEST_F(ServerAdmissionTest, MoreChoicesThanTheQueueHoldsIsTheRequestsFault) {
    Admission admission(*engine_, int64_t{2});
    EXPECT_EQ(status_of_submit(admission, {request(1), request(1), request(1)}), 400);
    EXPECT_EQ(status_of_submit(admission, {request(1), request(1)}), 200);
}

TEST_F(ServerAdmissionTest, AQueueOfZeroTakesNoRequest) {
    Admission admission(*engine_, int64_t{0});
    // Nothing may wait, and every new request waits until the engine takes it.
    EXPECT_EQ(status_of_submit(admission, {}), 200);
    EXPECT_EQ(status_of_submit(admission, {request(1)}), 400);
}

TEST_F(ServerAdmissionTest, AFullQueueIs429UntilItEmpties) {
    // One sequence runs at a time, so of two requests in flight one waits.
    engine_ = make_engine(1);
    Admission admission(*engine_, int64_t{2});
    EXPECT_EQ(status_of_submit(admission, {request(100), request(100)}), 200);
    EXPECT_EQ(status_of_submit(admission, {request(1), request(1)}), 429);
    admission.abort_all();
    wait_until_idle(admission);
    EXPECT_EQ(status_of_submit(admission, {request(1), request(1)}), 200);
}

TEST_F(ServerAdmissionTest, CloseRefusesWith503AndAbortAllEndsWhatRuns) {
    Admission admission(*engine_, std::nullopt);
    admission.submit({request(200), request(200)}, ignore_outputs());
    admission.close();
    EXPECT_TRUE(admission.closed());
    EXPECT_EQ(status_of_submit(admission, {request(1)}), 503);
    admission.abort_all();
    wait_until_idle(admission);
    EXPECT_EQ(admission.n_live(), 0);
    // A request leaves the live set when its last output is delivered, which
    // comes before the engine's step frees its blocks and publishes stats.
    wait_until([&] { return engine_->stats().n_blocks_used == 0; });
    EXPECT_EQ(engine_->stats().n_blocks_used, 0);
}

}  // namespace
}  // namespace ladder::server
