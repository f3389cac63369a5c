// The HTTP side of `ladder serve`: an event loop (Boost.Asio, one thread)
// that holds every connection, so thousands of idle or slow clients cost no
// threads, and a few handler threads for the routes' work (parsing bodies,
// tokenizing, rendering large bodies). It binds the address, sizes how many
// connections it can hold from --max-connections and the open-files limit,
// and closes everything on stop.
#pragma once

#include <cstdint>
#include <memory>

#include "ladder/server/server_context.h"

namespace ladder::server {

class HttpServer {
public:
    // Throws util::InputError when the address cannot be resolved.
    explicit HttpServer(ServerContext& context);
    // Stops, closing every connection.
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    // Binds the configured address (port 0: a free one) and returns the
    // port. Throws util::InputError when the address cannot be had.
    int bind();
    // Runs the event loop and the handler threads.
    void start();
    // Stops accepting, closes every connection (aborting what they still
    // run: drain first so that they have ended on their own) and joins.
    void stop();
    // False once the event loop has ended.
    bool running() const;

    // Connections held at once: --max-connections, or fewer when the
    // open-files limit allows fewer.
    int64_t connection_capacity() const;
    // The open-files limit that capacity was sized from.
    int64_t open_files_limit() const;
    // 0, or the errno with which the kernel refused the realtime priority
    // the configuration asked for (the loop then runs at normal priority).
    int loop_priority_refused() const;
    // Streams and pending bodies not yet written (a drain waits for them).
    int64_t n_open_bodies() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Raises the open-files soft limit to the hard limit; returns the limit now.
int64_t raise_open_files_limit();

}  // namespace ladder::server
