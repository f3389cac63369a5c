// The HTTP plumbing `ladder bench` shares between its probe of the endpoint
// and its requests: where the base URL points, an httplib client for it,
// and what httplib's error codes mean in words.
#pragma once

#include <httplib.h>

#include <string>

namespace ladder::tools {

struct BaseUrl {
    std::string origin;       // "http://127.0.0.1:8080": scheme, host and port
    std::string path_prefix;  // before "/v1/...": "" or, behind a proxy, "/serve"
};

// Accepts the base URL with or without a trailing "/v1" (OpenAI clients
// take it with, vLLM's bench without). Throws util::InputError when it is
// not an http:// or https:// URL.
BaseUrl parse_base_url(const std::string& base_url);

// A client for the origin with the given read timeout; connecting may take
// at most 10 seconds.
httplib::Client open_client(const BaseUrl& url, double read_timeout_s);
// Authorization (when a key is given) and JSON content headers.
httplib::Headers request_headers(const std::string& api_key);

// "could not connect ..." rather than httplib's "Connection".
std::string describe_http_error(httplib::Error error);

}  // namespace ladder::tools
