// libFuzzer target: HTTP request parsing with the server's limits, as a
// connection does it. The first input byte picks the size of the pieces the
// rest arrives in and whether the limits are the server's or small ones
// (so that inputs of a few KiB reach the 431 and 413 paths); every request
// parsed is then screened by a router like the server's, so the Host,
// Origin, CORS and Content-Type checks see hostile headers too.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ladder/server/request_reader.h"
#include "ladder/server/router.h"

namespace {

using ladder::server::BrowserPolicy;
using ladder::server::HttpLimits;
using ladder::server::HttpRequest;
using ladder::server::HttpResponse;
using ladder::server::RequestReader;
using ladder::server::Router;

// A request a connection would carry at most (pipelined in one input).
constexpr int kMaxRequests = 8;

const Router& test_router() {
    // The router keeps a view of the keys: they live as long as it.
    static const std::vector<ladder::server::ApiKey> keys{{"fuzz-key", "fuzz"}};
    static const Router router = [] {
        Router built(keys, BrowserPolicy{.loopback_listen = true,
                                               .allowed_hosts = {"box.lan"},
                                               .allowed_origins = {"http://localhost:3000"}});
        const auto answer = [](const HttpRequest& request, HttpResponse& response) {
            response.set_content(request.body, "application/json");
        };
        built.get("/health", Router::Access::Public, answer);
        built.get(R"(/v1/models/(.+))", Router::Access::ApiKey, answer);
        built.post("/v1/completions", Router::Access::ApiKey, answer);
        return built;
    }();
    return router;
}

void check(bool holds) {
    if (!holds) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const size_t piece = 1 + (data[0] & 0x3f);
    HttpLimits limits;
    if (data[0] & 0x40) {
        limits.max_header_bytes = 256;
        limits.max_body_bytes = 512;
    }
    const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);

    std::string held;
    size_t next = 0;
    for (int n_requests = 0; n_requests < kMaxRequests; ++n_requests) {
        RequestReader reader(limits);
        bool header_seen = false;
        while (true) {
            const size_t used = reader.feed(held);
            check(used <= held.size());
            held.erase(0, used);
            const RequestReader::Stage stage = reader.stage();
            if (stage == RequestReader::Stage::Failed) {
                const int status = reader.error().status();
                check(status == 400 || status == 413 || status == 415 || status == 431 ||
                      status == 501);
                return 0;  // the connection answers and closes
            }
            if (stage != RequestReader::Stage::Header && !header_seen) {
                header_seen = true;
                HttpResponse answer;
                if (test_router().screen(reader.request(), answer) == nullptr) {
                    check(answer.status >= 200 && answer.status < 600);
                }
            }
            if (stage == RequestReader::Stage::Done) break;
            // What the reader holds back (a partial line) stays bounded.
            check(held.size() <= limits.max_header_bytes + piece);
            if (next >= input.size()) {
                reader.feed_end();
                check(reader.stage() == RequestReader::Stage::Failed);
                return 0;
            }
            if (used == 0 || held.empty()) {
                held.append(input.substr(next, piece));
                next += piece;
            }
        }
        check(reader.request().body.size() <= limits.max_body_bytes);
        if (held.empty() && next >= input.size()) return 0;
    }
    return 0;
}
