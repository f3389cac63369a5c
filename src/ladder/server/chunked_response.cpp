#include "ladder/server/chunked_response.h"

namespace ladder::server {

void start_chunked_response(httplib::Response& response, const char* content_type,
                            std::function<bool(httplib::DataSink&)> pump,
                            std::function<void()> on_failure, std::atomic<int64_t>& n_open) {
    ++n_open;
    response.set_chunked_content_provider(
        content_type,
        [pump = std::move(pump), on_failure](size_t /*offset*/, httplib::DataSink& sink) {
            try {
                if (pump(sink)) return true;
            } catch (const std::exception&) {
            }
            on_failure();
            return false;
        },
        [on_failure, &n_open](bool success) {
            if (!success) on_failure();
            --n_open;
        });
}

}  // namespace ladder::server
