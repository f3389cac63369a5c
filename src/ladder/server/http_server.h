// The HTTP side of `ladder serve`: httplib set up for many long streams (one
// thread per connection, read and write timeouts, a body limit, a deep
// accept backlog), every route group, and OpenAI-shaped errors for requests
// that match no route.
#pragma once

#include <httplib.h>

#include <atomic>
#include <thread>

#include "ladder/server/router.h"
#include "ladder/server/server_context.h"

namespace ladder::server {

class HttpServer {
public:
    explicit HttpServer(ServerContext& context);
    // Stops accepting and joins the connection threads.
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    // Binds the configured address (port 0: a free one) and returns the
    // port. Throws util::InputError when the address cannot be had.
    int bind();
    // Accepts connections on a thread of its own until stop().
    void start();
    // Stops accepting; waits for the connection threads, whose streams end
    // (drain first so that they have ended on their own).
    void stop();
    // False once the accept loop has ended (stopped, or failed).
    bool running() const { return !listener_exited_; }

private:
    void set_error_handlers();

    ServerContext& context_;
    httplib::Server server_;
    Router router_;
    int listen_socket_ = -1;
    std::atomic<bool> listener_exited_{false};
    std::thread listener_;
};

}  // namespace ladder::server
