#include "ladder/server/slow_response.h"

#include "ladder/server/chunked_response.h"

namespace ladder::server {

namespace {

constexpr std::chrono::milliseconds kHeartbeatInterval{1000};
// Not plain "application/json": httplib would gzip the body for a client that
// accepts it, and the compressor would hold the spaces back.
constexpr const char* kContentType = "application/json; charset=utf-8";

}  // namespace

void start_slow_response(httplib::Response& response, std::shared_ptr<CompletionJob> job,
                         std::function<std::string(const CompletionJob&)> body,
                         std::atomic<int64_t>& n_open_responses) {
    auto pump = [job, body = std::move(body)](httplib::DataSink& sink) {
        const bool finished = job->collect_for(kHeartbeatInterval);
        const std::string bytes = finished ? body(*job) : std::string(" ");
        if (!sink.write(bytes.data(), bytes.size())) return false;
        if (finished) sink.done();
        return true;
    };
    start_chunked_response(
        response, kContentType, std::move(pump), [job] { job->abort(); }, n_open_responses);
}

}  // namespace ladder::server
