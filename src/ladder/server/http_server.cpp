#include "ladder/server/http_server.h"

#include <fmt/format.h>
#include <sys/socket.h>

#include <cstdio>

#include "ladder/server/http_io.h"
#include "ladder/server/routes.h"
#include "ladder/util/error.h"

namespace ladder::server {

namespace {

// httplib listens with a backlog of 5; a burst of hundreds of connections
// would see refused or retried SYNs, so the socket is given a deeper one.
constexpr int kListenBacklog = 1024;
// Requests one keep-alive connection may carry before it is closed.
constexpr size_t kKeepAliveMaxCount = 1000;

std::string join(const std::vector<std::string>& items, const char* separator) {
    std::string out;
    for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
    return out;
}

// The error for a status httplib set itself (no route matched, a body too
// large, a request it could not parse).
ApiError routing_error(int status, const httplib::Request& request, const Router& router,
                       size_t max_body_bytes, httplib::Response& response) {
    switch (status) {
        case 404: {
            const std::vector<std::string> methods = router.methods_for(request.path);
            if (!methods.empty()) {
                response.set_header("Allow", join(methods, ", "));
                return ApiError(405, "invalid_request_error",
                                fmt::format("{} is not allowed on {}: use {}", request.method,
                                            request.path, join(methods, " or ")),
                                "", "method_not_allowed");
            }
            return ApiError(404, "invalid_request_error",
                            fmt::format("no route {} {}", request.method, request.path), "",
                            "not_found");
        }
        case 413:
            return ApiError(413, "invalid_request_error",
                            fmt::format("the request body is larger than {} bytes", max_body_bytes),
                            "", "request_too_large");
        case 414:
            return ApiError(414, "invalid_request_error", "the request URI is too long");
        case 400:
            return ApiError(400, "invalid_request_error", "malformed HTTP request");
        default:
            return ApiError(status, status >= 500 ? "internal_error" : "invalid_request_error",
                            fmt::format("HTTP error {}", status));
    }
}

}  // namespace

HttpServer::HttpServer(ServerContext& context)
    : context_(context), router_(server_, context.config.api_keys) {
    const ServerConfig& config = context.config;
    // A stream holds its connection's thread for its whole life; the pool
    // must hold every stream the server promises to serve at once.
    const auto n_threads = static_cast<size_t>(config.n_http_threads);
    server_.new_task_queue = [n_threads] { return new httplib::ThreadPool(n_threads); };
    server_.set_read_timeout(config.io_timeout_seconds, 0);
    server_.set_write_timeout(config.io_timeout_seconds, 0);
    server_.set_payload_max_length(config.max_body_bytes);
    server_.set_keep_alive_max_count(kKeepAliveMaxCount);
    server_.set_tcp_nodelay(true);  // SSE chunks are small and must leave at once
    server_.set_socket_options([this](socket_t socket) {
        httplib::default_socket_options(socket);
        listen_socket_ = socket;
    });
    add_completions_routes(router_, context);
    add_chat_routes(router_, context);
    add_model_routes(router_, context);
    add_tokenize_routes(router_, context);
    add_metrics_routes(router_, context);
    set_error_handlers();
}

HttpServer::~HttpServer() { stop(); }

void HttpServer::set_error_handlers() {
    const httplib::Server::HandlerWithResponse on_error = [this](const httplib::Request& request,
                                                                 httplib::Response& response) {
        // A route that answered an error has written its own body.
        if (!response.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        send_error(response, routing_error(response.status, request, router_,
                                           context_.config.max_body_bytes, response));
        return httplib::Server::HandlerResponse::Handled;
    };
    server_.set_error_handler(on_error);
    server_.set_exception_handler(
        [](const httplib::Request& request, httplib::Response& response, std::exception_ptr) {
            std::fprintf(stderr, "ladder serve: internal error on %s %s\n", request.method.c_str(),
                         request.path.c_str());
            send_error(response, ApiError(500, "internal_error", "internal error"));
        });
}

int HttpServer::bind() {
    const ServerConfig& config = context_.config;
    const int port = config.port == 0
                         ? server_.bind_to_any_port(config.host)
                         : (server_.bind_to_port(config.host, config.port) ? config.port : -1);
    if (port <= 0) {
        util::fail("cannot listen on {}:{} (address in use, or not an address of this machine)",
                   config.host, config.port);
    }
    // Listening again on a listening socket only changes its backlog.
    if (listen_socket_ >= 0) ::listen(listen_socket_, kListenBacklog);
    return port;
}

void HttpServer::start() {
    listener_ = std::thread([this] {
        server_.listen_after_bind();
        listener_exited_ = true;
    });
}

void HttpServer::stop() {
    // httplib's stop() does nothing before its accept loop has begun.
    while (listener_.joinable() && !server_.is_running() && !listener_exited_) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    server_.stop();
    if (listener_.joinable()) listener_.join();
}

}  // namespace ladder::server
