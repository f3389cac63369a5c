#include "ladder/server/sse_stream.h"

#include "ladder/server/chunked_response.h"

namespace ladder::server {

namespace {

// How long one pump waits for the engine before returning to httplib.
constexpr std::chrono::milliseconds kPollInterval{200};
// A stream that has sent nothing for this long sends an SSE comment, so that
// a client that left while its request waited is noticed.
constexpr std::chrono::seconds kKeepAliveInterval{5};

}  // namespace

SseStream::SseStream(std::shared_ptr<CompletionJob> job,
                     std::shared_ptr<const ResponseFormat> format, ResponseMeta meta,
                     const tokenizer::Tokenizer& tokenizer)
    : job_(std::move(job)),
      format_(std::move(format)),
      meta_(std::move(meta)),
      tokenizer_(tokenizer),
      last_write_(std::chrono::steady_clock::now()) {
    for (const ChoiceState& choice : job_->choices()) text_offsets_.push_back(choice.echo.size());
}

std::string SseStream::opening_events() const {
    std::string events;
    const std::vector<ChoiceState>& choices = job_->choices();
    for (size_t i = 0; i < choices.size(); ++i) {
        if (auto choice = format_->opening_choice(static_cast<int32_t>(i), choices[i])) {
            events += sse_event(
                chunk_json(meta_, *format_, std::move(choice), job_->request().include_usage));
        }
    }
    return events;
}

std::string SseStream::closing_events() const {
    std::string events;
    if (job_->request().include_usage) {
        events += sse_event(chunk_json(meta_, *format_, std::nullopt, true, job_->usage()));
    }
    return events + kSseDone;
}

bool SseStream::pump(httplib::DataSink& sink) {
    std::string events;
    if (!opened_) {
        events = opening_events();
        opened_ = true;
    }
    for (const ChoiceOutput& news : job_->take(kPollInterval)) {
        size_t& text_offset = text_offsets_[static_cast<size_t>(news.choice)];
        if (auto choice = format_->chunk_choice(news, tokenizer_, text_offset)) {
            events += sse_event(
                chunk_json(meta_, *format_, std::move(choice), job_->request().include_usage));
        }
    }
    const bool finished = job_->finished();
    if (finished) events += closing_events();

    const auto now = std::chrono::steady_clock::now();
    if (events.empty() && now - last_write_ >= kKeepAliveInterval) events = ": keep-alive\n\n";
    if (!events.empty()) {
        if (!sink.write(events.data(), events.size())) return false;
        last_write_ = now;
    }
    if (finished) sink.done();
    return true;
}

void start_sse_response(httplib::Response& response, std::shared_ptr<SseStream> stream,
                        std::atomic<int64_t>& n_open_responses) {
    response.set_header("Cache-Control", "no-cache");
    start_chunked_response(
        response, "text/event-stream",
        [stream](httplib::DataSink& sink) { return stream->pump(sink); },
        [stream] { stream->abort(); }, n_open_responses);
}

}  // namespace ladder::server
