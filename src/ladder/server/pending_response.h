// A whole (non-streaming) response whose choices are still running. Nothing
// is sent until they finish; then the body goes out in one piece with its
// length. The transport watches the connection meanwhile: a client that
// hangs up has its requests aborted at once instead of running on to
// max_tokens with nobody waiting.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "ladder/server/completion_job.h"
#include "ladder/server/http_message.h"

namespace ladder::server {

// render turns the finished job into the body (JSON), on a handler thread.
void start_pending_response(HttpResponse& response, std::shared_ptr<CompletionJob> job,
                            std::function<std::string(const CompletionJob&)> render);

}  // namespace ladder::server
