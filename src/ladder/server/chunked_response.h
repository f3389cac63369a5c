// httplib's chunked content provider with what every long response of the
// server needs: no exception escapes into httplib's connection thread, a
// response that fails (a write to a client that left, or an error) calls
// on_failure, which aborts its requests, and n_open counts the response
// until httplib lets go of it, so that a drain can wait for it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include <httplib.h>

namespace ladder::server {

// pump is called again and again: it writes what is ready (sink.done() at
// the end) and returns false when a write failed.
void start_chunked_response(httplib::Response& response, const char* content_type,
                            std::function<bool(httplib::DataSink&)> pump,
                            std::function<void()> on_failure, std::atomic<int64_t>& n_open);

}  // namespace ladder::server
