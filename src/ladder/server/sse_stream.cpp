#include "ladder/server/sse_stream.h"

namespace ladder::server {

namespace {

// A stream that has sent nothing for this long (its request still waits
// for a place in the batch) sends an SSE comment, so that a proxy in front
// does not take the silence for a dead upstream.
constexpr std::chrono::seconds kKeepAliveInterval{5};

}  // namespace

SseStream::SseStream(std::shared_ptr<CompletionJob> job,
                     std::shared_ptr<const ResponseFormat> format, const ResponseMeta& meta,
                     const tokenizer::Tokenizer& tokenizer, ServerMetrics& metrics)
    : job_(std::move(job)),
      format_(std::move(format)),
      renderer_(meta, *format_, job_->request().include_usage),
      tokenizer_(tokenizer),
      metrics_(metrics),
      last_write_(std::chrono::steady_clock::now()) {
    for (const ChoiceState& choice : job_->choices()) text_offsets_.push_back(choice.echo.size());
}

std::string SseStream::opening_events() const {
    std::string events;
    const std::vector<ChoiceState>& choices = job_->choices();
    for (size_t i = 0; i < choices.size(); ++i) {
        if (auto choice = format_->opening_choice(static_cast<int32_t>(i), choices[i])) {
            renderer_.append_choice(events, *choice);
        }
    }
    return events;
}

std::string SseStream::closing_events() const {
    std::string events;
    if (job_->request().include_usage) renderer_.append_usage(events, job_->usage());
    return events + kSseDone;
}

bool SseStream::poll(std::string& out) {
    if (!opened_) {
        out += opening_events();
        opened_ = true;
    }
    const std::vector<ChoiceOutput> taken = job_->take();
    for (const ChoiceOutput& news : taken) {
        if (news.output.finish_reason == engine::FinishReason::Error) {
            out += sse_error_event(news.output.error);
            continue;
        }
        size_t& text_offset = text_offsets_[static_cast<size_t>(news.choice)];
        if (auto choice = format_->chunk_choice(news, tokenizer_, text_offset)) {
            renderer_.append_choice(out, *choice);
        }
    }
    const bool finished = job_->finished();
    if (finished) out += closing_events();

    // The transport writes what this returns at once: the time from each
    // output's arrival to here is what the server adds to its latency.
    const auto now = std::chrono::steady_clock::now();
    delays_.clear();
    for (const ChoiceOutput& news : taken) {
        delays_.push_back(std::chrono::duration<double>(now - news.pushed).count());
    }
    if (!delays_.empty()) metrics_.record_stream_delays(delays_);

    if (out.empty() && now - last_write_ >= kKeepAliveInterval) out = ": keep-alive\n\n";
    if (!out.empty()) last_write_ = now;
    return finished;
}

void start_sse_response(HttpResponse& response, std::shared_ptr<SseStream> sse) {
    response.status = 200;
    response.set_header("Content-Type", "text/event-stream");
    response.set_header("Cache-Control", "no-cache");
    response.stream = std::move(sse);
}

}  // namespace ladder::server
