#include "ladder/tools/bench_endpoint.h"

#include <nlohmann/json.hpp>

#include "ladder/tools/bench_client.h"
#include "ladder/tools/bench_stream.h"
#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

using nlohmann::json;

constexpr int kHttpUnauthorized = 401;
constexpr int kHttpForbidden = 403;
constexpr int kHttpNotFound = 404;
// A model list is a few hundred bytes; a body past this is not one.
constexpr size_t kMaxListBytes = size_t{16} << 20;

}  // namespace

std::string probe_endpoint(const BaseUrl& url, const std::string& api_key, const std::string& given,
                           double timeout_s) {
    const std::string path = url.path_prefix + "/v1/models";
    const std::string where = url.origin + path;
    HttpResponseHead head;
    std::string body;
    try {
        send_http_request(
            url, {.method = "GET", .path = path, .api_key = api_key, .body = ""}, timeout_s,
            [&](const HttpResponseHead& got) { head = got; },
            [&](std::string_view data) {
                body.append(data);
                return body.size() < kMaxListBytes;
            });
    } catch (const HttpClientError& error) {
        util::fail("cannot reach {}: {}", where, error.what());
    }
    const int status = head.status;
    if (status == kHttpUnauthorized || status == kHttpForbidden) {
        util::fail(
            "{} refused {} (HTTP {}: {}): give the key with --api-key, OPENAI_API_KEY or "
            "LADDER_API_KEY",
            where, api_key.empty() ? "a request without an API key" : "the API key", status,
            error_message_of(body));
    }
    if (status == kHttpNotFound && !given.empty()) return given;  // no model list, but a model
    if (status != kHttpOk) {
        util::fail("GET {} answered HTTP {}: {}{}", where, status, error_message_of(body),
                   status == kHttpNotFound ? " (is this an OpenAI-compatible endpoint? give "
                                             "--model if it has no model list)"
                                           : "");
    }
    const json models = json::parse(body, nullptr, false);
    const auto data = models.is_object() ? models.find("data") : models.end();
    if (!models.is_object() || data == models.end() || !data->is_array()) {
        util::fail("{}", not_openai_message("GET " + where, head.content_type, body));
    }
    if (!given.empty()) return given;
    for (const json& model : *data) {
        if (model.is_object() && model.contains("id") && model["id"].is_string()) {
            return model["id"].get<std::string>();
        }
    }
    util::fail("{} lists no model: give --model", where);
}

}  // namespace ladder::tools
