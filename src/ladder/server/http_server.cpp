#include "ladder/server/http_server.h"

#include <fmt/format.h>
#include <pthread.h>
#include <sys/resource.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cstdio>
#include <future>
#include <optional>
#include <thread>

#include "ladder/server/http_connection.h"
#include "ladder/server/routes.h"
#include "ladder/util/error.h"
#include "ladder/util/realtime_priority.h"
#include "ladder/util/short_slice.h"

namespace ladder::server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

// Open files the process needs besides connections: the listening socket,
// the event loop's own, the model and disk-tier files.
constexpr int64_t kReservedFiles = 64;
// The loop's one read buffer: what one readiness can deliver at once.
constexpr size_t kReadBufferBytes = size_t{64} << 10;
// When accepting fails for want of file descriptors, wait this long rather
// than spin on a connection that stays in the backlog.
constexpr std::chrono::milliseconds kAcceptPause{100};
// The event loop's thread (at most 15 characters).
constexpr const char* kLoopThreadName = "ladder-http";
// The loop's turns on a CPU at normal priority. Shorter than the kernel's
// default (about 3 ms), so its wake-ups preempt the engine's threads rather
// than wait out their turn; long enough for a step's chunks (32 streams:
// about 0.4 ms), so the client it wakes with each write does not take the
// CPU mid-step (0.1 ms did: docs/performance.md has the figures).
constexpr std::chrono::microseconds kLoopSlice{1000};

// Sets the calling thread's scheduling as the loop's; returns the errno of a
// refused realtime request (the loop then runs at normal priority), else 0.
int schedule_as_loop(LoopPriority wanted) {
    if (wanted == LoopPriority::Realtime) {
        const int refused = util::request_realtime_priority();
        if (refused == 0) return 0;
        util::request_short_slice(kLoopSlice);
        return refused;
    }
    util::request_short_slice(kLoopSlice);
    return 0;
}

std::chrono::milliseconds milliseconds(double seconds) {
    return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000.0));
}

tcp::endpoint resolve(const ServerConfig& config) {
    asio::io_context io;
    tcp::resolver resolver(io);
    error_code ec;
    const auto results =
        resolver.resolve(config.host, std::to_string(config.port),
                         tcp::resolver::passive | tcp::resolver::numeric_service, ec);
    if (ec || results.empty()) {
        util::fail("cannot listen on {}: the address does not resolve ({})", config.host,
                   ec ? ec.message() : "no address");
    }
    return results.begin()->endpoint();
}

BrowserPolicy browser_policy(const ServerConfig& config, const tcp::endpoint& endpoint) {
    BrowserPolicy policy;
    policy.loopback_listen = endpoint.address().is_loopback();
    policy.allowed_hosts = config.allowed_hosts;
    policy.allowed_origins = config.allowed_origins;
    return policy;
}

TransportSettings transport_settings(const ServerConfig& config) {
    TransportSettings settings;
    settings.limits.max_header_bytes = config.max_header_bytes;
    settings.limits.max_body_bytes = config.max_body_bytes;
    settings.request_timeout = milliseconds(config.request_timeout_seconds);
    settings.keep_alive_timeout = milliseconds(config.keep_alive_timeout_seconds);
    settings.write_timeout = milliseconds(config.io_timeout_seconds);
    return settings;
}

// The address a connection counts against (an IPv4 client of a dual-stack
// socket as IPv4).
std::string address_of(const tcp::endpoint& remote) {
    const asio::ip::address address = remote.address();
    if (address.is_v6() && address.to_v6().is_v4_mapped()) {
        return asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6()).to_string();
    }
    return address.to_string();
}

}  // namespace

int64_t raise_open_files_limit() {
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
    if (limit.rlim_cur < limit.rlim_max) {
        rlimit raised = limit;
        raised.rlim_cur = limit.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
    }
    return limit.rlim_cur == RLIM_INFINITY ? int64_t{1} << 30
                                           : static_cast<int64_t>(limit.rlim_cur);
}

struct HttpServer::Impl {
    Impl(ServerContext& server_context, const tcp::endpoint& where)
        : context(server_context),
          endpoint(where),
          router(context.config.api_keys, browser_policy(context.config, where)),
          open_files(raise_open_files_limit()),
          table(std::max<int64_t>(
              1, std::min<int64_t>(context.config.max_connections, open_files - kReservedFiles))),
          read_buffer(kReadBufferBytes),
          loop(std::make_unique<asio::io_context>(1)),
          gate(std::make_shared<LoopGate>(*loop)),
          handlers(std::make_unique<asio::thread_pool>(
              static_cast<size_t>(std::max(1, context.config.n_http_threads)))),
          acceptor(std::make_unique<tcp::acceptor>(*loop)),
          accept_pause(std::make_unique<asio::steady_timer>(*loop)),
          services{*loop,
                   *handlers,
                   gate,
                   router,
                   table,
                   transport_settings(context.config),
                   context.metrics.http,
                   [&admission = context.admission] { return admission.closed(); },
                   n_open_bodies,
                   read_buffer} {}

    ~Impl() {
        // Sockets and timers die before the loop they belong to; queued
        // handlers (holding connections) with it.
        handlers.reset();
        accept_pause.reset();
        acceptor.reset();
        loop.reset();
    }

    void accept();
    void admit(tcp::socket socket);
    void close_everything();

    ServerContext& context;
    tcp::endpoint endpoint;
    Router router;
    int64_t open_files;
    ConnectionTable table;
    std::atomic<int64_t> n_open_bodies{0};
    std::vector<char> read_buffer;
    std::unique_ptr<asio::io_context> loop;
    std::shared_ptr<LoopGate> gate;
    std::unique_ptr<asio::thread_pool> handlers;
    std::unique_ptr<tcp::acceptor> acceptor;
    std::unique_ptr<asio::steady_timer> accept_pause;
    ConnectionServices services;
    std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
    std::thread loop_thread;
    std::atomic<bool> loop_exited{false};
    bool started = false;
    bool stopped = false;
    int loop_priority_refused = 0;  // errno of a refused --loop-priority realtime
};

void HttpServer::Impl::accept() {
    acceptor->async_accept([this](error_code ec, tcp::socket socket) {
        if (!acceptor->is_open()) return;
        if (!ec) {
            admit(std::move(socket));
            accept();
            return;
        }
        if (ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space ||
            ec == asio::error::no_memory || ec.value() == ENFILE) {
            // Out of file descriptors: the connection stays in the backlog;
            // try again once some have closed.
            accept_pause->expires_after(kAcceptPause);
            accept_pause->async_wait([this](error_code wait_error) {
                if (!wait_error) accept();
            });
            return;
        }
        accept();  // a connection that went away before it was accepted
    });
}

void HttpServer::Impl::admit(tcp::socket socket) {
    error_code ec;
    const tcp::endpoint remote = socket.remote_endpoint(ec);
    if (ec) return;  // gone already
    auto connection = std::make_shared<HttpConnection>(std::move(socket), services);
    if (!table.admit(address_of(remote), connection.get())) {
        ++context.metrics.http.n_connections_refused;
        connection->refuse(ApiError(
            503, "service_unavailable",
            fmt::format("the server holds its {} connections; retry later", table.capacity()), "",
            "too_many_connections"));
        return;
    }
    connection->start();
}

void HttpServer::Impl::close_everything() {
    error_code ec;
    acceptor->close(ec);
    accept_pause->cancel();
    std::vector<HttpConnection*> connections;
    table.for_each(
        [&](TableMember* member) { connections.push_back(static_cast<HttpConnection*>(member)); });
    for (HttpConnection* connection : connections) connection->close();
}

HttpServer::HttpServer(ServerContext& context)
    : impl_(std::make_unique<Impl>(context, resolve(context.config))) {
    add_completions_routes(impl_->router, context);
    add_chat_routes(impl_->router, context);
    add_model_routes(impl_->router, context);
    add_tokenize_routes(impl_->router, context);
    add_metrics_routes(impl_->router, context);
    if (context.config.web_ui) add_web_routes(impl_->router);
    add_profile_routes(impl_->router, context);
}

HttpServer::~HttpServer() { stop(); }

int HttpServer::bind() {
    tcp::acceptor& acceptor = *impl_->acceptor;
    const tcp::endpoint& endpoint = impl_->endpoint;
    error_code ec;
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
        util::fail("cannot listen on {}:{}: {}", impl_->context.config.host,
                   impl_->context.config.port, ec.message());
    }
    return acceptor.local_endpoint().port();
}

void HttpServer::start() {
    Impl& impl = *impl_;
    impl.started = true;
    impl.work.emplace(impl.loop->get_executor());
    asio::post(*impl.loop, [&impl] { impl.accept(); });
    std::promise<int> scheduled;
    impl.loop_thread = std::thread([&impl, &scheduled] {
        scheduled.set_value(schedule_as_loop(impl.context.config.loop_priority));
        while (true) {
            try {
                impl.loop->run();
                break;
            } catch (const std::exception& error) {
                // One connection's bug: the others go on.
                std::fprintf(stderr, "ladder serve: internal error on the event loop: %s\n",
                             error.what());
            }
        }
        impl.loop_exited = true;
    });
    // Named here, before the ready line, so that top, perf and
    // scripts/bench_serve.py can tell the transport's CPU time from the
    // engine's from the start.
    pthread_setname_np(impl.loop_thread.native_handle(), kLoopThreadName);
    impl.loop_priority_refused = scheduled.get_future().get();
}

void HttpServer::stop() {
    Impl& impl = *impl_;
    if (impl.stopped) return;
    impl.stopped = true;
    if (!impl.started) {
        error_code ec;
        impl.acceptor->close(ec);
        return;
    }
    auto closed = std::make_shared<std::promise<void>>();
    std::future<void> all_closed = closed->get_future();
    asio::post(*impl.loop, [&impl, closed] {
        impl.close_everything();
        closed->set_value();
    });
    if (!impl.loop_exited) all_closed.wait_for(std::chrono::seconds(10));
    impl.handlers->join();
    impl.work.reset();
    impl.loop->stop();
    if (impl.loop_thread.joinable()) impl.loop_thread.join();
    impl.gate->close();
}

bool HttpServer::running() const { return !impl_->loop_exited; }

int64_t HttpServer::connection_capacity() const { return impl_->table.capacity(); }

int64_t HttpServer::open_files_limit() const { return impl_->open_files; }

int HttpServer::loop_priority_refused() const { return impl_->loop_priority_refused; }

int64_t HttpServer::n_open_bodies() const { return impl_->n_open_bodies.load(); }

}  // namespace ladder::server
