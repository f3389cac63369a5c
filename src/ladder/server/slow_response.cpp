#include "ladder/server/slow_response.h"

namespace ladder::server {

namespace {

constexpr std::chrono::milliseconds kHeartbeatInterval{1000};

}  // namespace

void start_slow_response(httplib::Response& response, std::shared_ptr<CompletionJob> job,
                         std::function<std::string(const CompletionJob&)> body,
                         std::atomic<int64_t>& n_open_responses) {
    ++n_open_responses;
    response.set_chunked_content_provider(
        // Not plain "application/json": httplib would gzip the body for a
        // client that accepts it, and the compressor holds the spaces back.
        "application/json; charset=utf-8",
        [job, body = std::move(body)](size_t /*offset*/, httplib::DataSink& sink) {
            // Nothing may escape into httplib's connection thread.
            try {
                const bool finished = job->collect_for(kHeartbeatInterval);
                const std::string bytes = finished ? body(*job) : std::string(" ");
                if (!sink.write(bytes.data(), bytes.size())) {
                    job->abort();
                    return false;
                }
                if (finished) sink.done();
                return true;
            } catch (const std::exception&) {
                job->abort();
                return false;
            }
        },
        [job, &n_open_responses](bool success) {
            if (!success) job->abort();
            --n_open_responses;
        });
}

}  // namespace ladder::server
