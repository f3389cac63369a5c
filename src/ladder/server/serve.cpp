#include "ladder/server/serve.h"

#include <signal.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>

#include "ladder/server/http_server.h"
#include "ladder/util/thread_pool.h"

namespace ladder::server {

namespace {

using Clock = std::chrono::steady_clock;

// SIGINT and SIGTERM, blocked in every thread (they inherit the mask from
// this one) and taken by sigtimedwait, so that a signal is a plain value
// here and never interrupts the engine or a connection.
class ShutdownSignals {
public:
    ShutdownSignals() {
        sigemptyset(&signals_);
        sigaddset(&signals_, SIGINT);
        sigaddset(&signals_, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
    }
    // The mask stays: a shutdown, once begun, finishes. A stop script may
    // signal again and again (fleet.sh did); unblocked, such a signal would
    // end the process before its last writes (the trace's end, written after
    // serve() returns). SIGKILL still ends it at once.
    ~ShutdownSignals() = default;
    ShutdownSignals(const ShutdownSignals&) = delete;
    ShutdownSignals& operator=(const ShutdownSignals&) = delete;

    // The signal that came within timeout, or 0.
    int wait(std::chrono::milliseconds timeout) {
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
        const timespec wait_for{static_cast<time_t>(ns / 1000000000),
                                static_cast<long>(ns % 1000000000)};
        const int signal = sigtimedwait(&signals_, nullptr, &wait_for);
        return signal > 0 ? signal : 0;
    }

private:
    sigset_t signals_;
};

// Waits until done() or the deadline; a second signal cuts the wait short.
// Returns true when done() held.
bool wait_until(const std::function<bool()>& done, Clock::time_point deadline,
                ShutdownSignals& signals) {
    while (!done()) {
        if (Clock::now() >= deadline) return false;
        if (signals.wait(std::chrono::milliseconds(50)) != 0) return done();
    }
    return true;
}

void drain(ServerContext& context, HttpServer& http, ShutdownSignals& signals, int signal) {
    const double timeout = context.config.drain_timeout_seconds;
    std::fprintf(stderr, "ladder serve: %s: draining %lld requests (up to %g s)\n",
                 signal == SIGINT ? "SIGINT" : "SIGTERM",
                 static_cast<long long>(context.admission.n_live()), timeout);
    context.admission.close();  // new requests get 503, /health says 503
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(timeout));
    auto idle = [&] { return context.admission.n_live() == 0; };
    if (!wait_until(idle, deadline, signals)) {
        std::fprintf(stderr, "ladder serve: aborting %lld requests still running\n",
                     static_cast<long long>(context.admission.n_live()));
        context.admission.abort_all();
        // Aborts take effect at the next engine step.
        wait_until(idle, Clock::now() + std::chrono::seconds(10), signals);
    }
    // Responses write their last bytes (chunks and [DONE], or a whole body)
    // after their requests end.
    wait_until([&] { return http.n_open_bodies() == 0; }, Clock::now() + std::chrono::seconds(5),
               signals);
    http.stop();
}

}  // namespace

void serve(engine::ModelBundle& bundle, const ServeOptions& options, const OnReady& on_ready) {
    ShutdownSignals signals;     // before any thread starts
    ::signal(SIGPIPE, SIG_IGN);  // a client that hangs up is a failed write, not a kill

    ServerMetrics metrics;  // outlives the engine, whose last outputs it records
    util::ThreadPool pool(options.n_threads);
    engine::Engine engine(*bundle.model, *bundle.tokenizer, pool, options.engine);
    Admission admission(engine, options.server.max_queue);
    ServerContext context{engine,  bundle,    options.server,
                          metrics, admission, static_cast<int64_t>(std::time(nullptr))};
    HttpServer http(context);
    const int port = http.bind();
    http.start();

    on_ready(
        {port, http.connection_capacity(), http.open_files_limit(), http.loop_priority_refused()},
        engine.kv_plan());

    int signal = 0;
    while (signal == 0) {
        signal = signals.wait(std::chrono::milliseconds(200));
        if (signal == 0 && !http.running()) util::fail("the HTTP server stopped accepting");
    }
    drain(context, http, signals, signal);
    // What the prefix cache saved over the server's life, for the operator's log.
    const engine::EngineStats stats = engine.stats();
    const double hit_rate = stats.n_prefix_queried_tokens > 0
                                ? static_cast<double>(stats.n_prefix_hit_tokens) /
                                      static_cast<double>(stats.n_prefix_queried_tokens)
                                : 0.0;
    std::fprintf(stderr,
                 "ladder serve: prefix cache: %lld of %lld prompt tokens found (%.1f%%), "
                 "%lld blocks read from disk\n",
                 static_cast<long long>(stats.n_prefix_hit_tokens),
                 static_cast<long long>(stats.n_prefix_queried_tokens), 100.0 * hit_rate,
                 static_cast<long long>(stats.n_disk_blocks_loaded));
    std::fprintf(stderr, "ladder serve: stopped\n");
}

}  // namespace ladder::server
