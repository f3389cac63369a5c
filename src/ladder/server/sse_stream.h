// Writes one API request's choices to its client as server-sent events, as
// the engine produces them: opening chunks, one chunk per output, the usage
// chunk when asked for, then `data: [DONE]`. A failed write means the client
// went away: its requests are aborted, which frees their KV blocks.
#pragma once

#include <httplib.h>

#include <chrono>
#include <memory>
#include <vector>

#include "ladder/server/completion_job.h"
#include "ladder/server/response_format.h"

namespace ladder::server {

class SseStream {
public:
    SseStream(std::shared_ptr<CompletionJob> job, std::shared_ptr<const ResponseFormat> format,
              ResponseMeta meta, const tokenizer::Tokenizer& tokenizer);

    // One call of httplib's chunked content provider: writes what is ready
    // (waiting a little for it); false ends the connection.
    bool pump(httplib::DataSink& sink);
    // The client is gone or the response failed.
    void abort() { job_->abort(); }

private:
    std::string opening_events() const;
    std::string closing_events() const;

    std::shared_ptr<CompletionJob> job_;
    std::shared_ptr<const ResponseFormat> format_;
    ResponseMeta meta_;
    const tokenizer::Tokenizer& tokenizer_;
    std::vector<size_t> text_offsets_;  // per choice, for completions logprobs
    bool opened_ = false;
    std::chrono::steady_clock::time_point last_write_;
};

// Sets response to stream job; the context counts the streams still open.
void start_sse_response(httplib::Response& response, std::shared_ptr<SseStream> stream,
                        std::atomic<int64_t>& n_open_responses);

}  // namespace ladder::server
