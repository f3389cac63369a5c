// POST /start_profile and /stop_profile (vLLM's routes): a Chrome trace of
// the engine between the two calls, written into --trace-dir. Behind the API
// key, and off (404) unless the server was started with --trace-dir.
#include <chrono>
#include <filesystem>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "ladder/server/api_error.h"
#include "ladder/server/http_io.h"
#include "ladder/server/routes.h"
#include "ladder/util/error.h"
#include "ladder/util/trace.h"

namespace ladder::server {

namespace {

void require_trace_dir(const ServerConfig& config) {
    if (config.trace_dir.empty()) {
        throw ApiError(404, "invalid_request_error",
                       "profiling is off: start the server with --trace-dir DIR", "", "not_found");
    }
}

// ladder-trace-20260101-120000.123.json: one per start, in time order.
std::string new_trace_path(const std::string& dir) {
    const auto now = std::chrono::system_clock::now();
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
    const std::string name =
        fmt::format("ladder-trace-{:%Y%m%d-%H%M%S}.{:03d}.json",
                    fmt::gmtime(std::chrono::system_clock::to_time_t(now)), ms.count());
    return (std::filesystem::path(dir) / name).string();
}

}  // namespace

void add_profile_routes(Router& router, ServerContext& context) {
    router.post("/start_profile", Router::Access::ApiKey,
                [&context](const HttpRequest&, HttpResponse& response) {
                    require_trace_dir(context.config);
                    if (util::trace::active()) {
                        throw ApiError(409, "invalid_request_error",
                                       "a trace is being written already: POST /stop_profile "
                                       "first (or the server runs with --trace)",
                                       "", "conflict");
                    }
                    const std::string path = new_trace_path(context.config.trace_dir);
                    try {
                        util::trace::start(path);
                    } catch (const util::InputError& error) {
                        // Two starts at once: the second finds the first's trace.
                        throw ApiError(409, "invalid_request_error", error.what(), "", "conflict");
                    }
                    send_json(response, 200, {{"status", "profiling"}, {"trace_file", path}});
                });
    router.post("/stop_profile", Router::Access::ApiKey,
                [&context](const HttpRequest&, HttpResponse& response) {
                    require_trace_dir(context.config);
                    const std::string path = util::trace::stop();
                    if (path.empty()) {
                        throw ApiError(409, "invalid_request_error",
                                       "no trace is being written: POST /start_profile first", "",
                                       "conflict");
                    }
                    send_json(response, 200, {{"status", "stopped"}, {"trace_file", path}});
                });
}

}  // namespace ladder::server
