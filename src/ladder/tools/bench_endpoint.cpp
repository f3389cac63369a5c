#include "ladder/tools/bench_endpoint.h"

#include <nlohmann/json.hpp>

#include "ladder/tools/bench_client.h"
#include "ladder/tools/bench_stream.h"
#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

using nlohmann::json;

constexpr int kHttpOk = 200;
constexpr int kHttpUnauthorized = 401;
constexpr int kHttpForbidden = 403;
constexpr int kHttpNotFound = 404;

}  // namespace

std::string probe_endpoint(const BaseUrl& url, const std::string& api_key, const std::string& given,
                           double timeout_s) {
    httplib::Client client = open_client(url, timeout_s);
    const std::string path = url.path_prefix + "/v1/models";
    const std::string where = url.origin + path;
    const httplib::Result response = client.Get(path, request_headers(api_key));
    if (!response) util::fail("cannot reach {}: {}", where, describe_http_error(response.error()));
    const int status = response->status;
    if (status == kHttpUnauthorized || status == kHttpForbidden) {
        util::fail(
            "{} refused {} (HTTP {}: {}): give the key with --api-key, OPENAI_API_KEY or "
            "LADDER_API_KEY",
            where, api_key.empty() ? "a request without an API key" : "the API key", status,
            error_message_of(response->body));
    }
    if (status == kHttpNotFound && !given.empty()) return given;  // no model list, but a model
    if (status != kHttpOk) {
        util::fail("GET {} answered HTTP {}: {}{}", where, status, error_message_of(response->body),
                   status == kHttpNotFound ? " (is this an OpenAI-compatible endpoint? give "
                                             "--model if it has no model list)"
                                           : "");
    }
    const json models = json::parse(response->body, nullptr, false);
    const auto data = models.is_object() ? models.find("data") : models.end();
    if (!models.is_object() || data == models.end() || !data->is_array()) {
        util::fail("{}",
                   not_openai_message("GET " + where, response->get_header_value("Content-Type"),
                                      response->body));
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
