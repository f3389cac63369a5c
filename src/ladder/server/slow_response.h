// A whole (non-streaming) response that is not ready at once. It goes out
// with chunked transfer: a space every second while the choices run (JSON
// allows leading whitespace), then the body. A client that hung up makes
// such a write fail, and its request is aborted instead of running on to
// max_tokens with nobody waiting.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <httplib.h>

#include "ladder/server/completion_job.h"

namespace ladder::server {

// body renders the finished job. n_open_responses counts the responses
// still being written, which a drain waits for.
void start_slow_response(httplib::Response& response, std::shared_ptr<CompletionJob> job,
                         std::function<std::string(const CompletionJob&)> body,
                         std::atomic<int64_t>& n_open_responses);

}  // namespace ladder::server
