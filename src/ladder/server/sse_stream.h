// Writes one API request's choices to its client as server-sent events, as
// the engine produces them: opening chunks, one chunk per output, the usage
// chunk when asked for, then `data: [DONE]`. The transport polls it on its
// event loop when the engine has news and the socket can take more, so a
// client that reads slowly gets several outputs in one write; one that
// leaves or stops reading has its requests aborted, which frees their KV
// blocks.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "ladder/server/completion_job.h"
#include "ladder/server/http_message.h"
#include "ladder/server/response_format.h"
#include "ladder/server/server_metrics.h"

namespace ladder::server {

class SseStream final : public StreamedBody {
public:
    SseStream(std::shared_ptr<CompletionJob> job, std::shared_ptr<const ResponseFormat> format,
              const ResponseMeta& meta, const tokenizer::Tokenizer& tokenizer,
              ServerMetrics& metrics);

    void start(std::function<void()> wake) override { job_->on_output(std::move(wake)); }
    bool poll(std::string& out) override;
    void cancel() override { job_->abort(); }

private:
    std::string opening_events() const;
    std::string closing_events() const;

    std::shared_ptr<CompletionJob> job_;
    std::shared_ptr<const ResponseFormat> format_;
    ChunkRenderer renderer_;
    const tokenizer::Tokenizer& tokenizer_;
    ServerMetrics& metrics_;
    std::vector<size_t> text_offsets_;  // per choice, for completions logprobs
    bool opened_ = false;
    std::chrono::steady_clock::time_point last_write_;
    std::vector<double> delays_;  // scratch: engine-to-write delay of each output
};

// Sets response to stream through sse.
void start_sse_response(HttpResponse& response, std::shared_ptr<SseStream> sse);

}  // namespace ladder::server
