// The HTTP plumbing `ladder bench` shares between its probe of the endpoint
// and its requests: where the base URL points, and a blocking HTTP/1.1
// client (Boost.Beast; TLS through OpenSSL for https://) that sends one
// request on a connection of its own, with a connect timeout and a timeout
// for every read and write.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ladder::tools {

struct BaseUrl {
    std::string origin;       // "http://127.0.0.1:8080": scheme, host and port
    std::string path_prefix;  // before "/v1/...": "" or, behind a proxy, "/serve"
};

// Accepts the base URL with or without a trailing "/v1" (OpenAI clients
// take it with, vLLM's bench without). Throws util::InputError when it is
// not an http:// or https:// URL.
BaseUrl parse_base_url(const std::string& base_url);

// What failed, in words ("could not connect ...", "reading the response
// failed ..."); `responded` tells a failure before the status line from one
// in the middle of a body.
class HttpClientError : public std::runtime_error {
public:
    HttpClientError(const std::string& message, bool responded)
        : std::runtime_error(message), responded_(responded) {}
    bool responded() const { return responded_; }

private:
    bool responded_;
};

struct HttpRequestSpec {
    std::string method = "GET";
    std::string path;     // with the prefix
    std::string api_key;  // empty: no Authorization
    std::string body;     // sent as application/json when not empty
};

struct HttpResponseHead {
    int status = 0;
    std::string content_type;
};

// Sends request to url's origin and reads the response: on_head once with
// the status line's code and Content-Type, then on_data with the body as it
// arrives (false stops reading early). timeout_s bounds every read and
// write; connecting may take at most 10 s. Throws HttpClientError.
void send_http_request(const BaseUrl& url, const HttpRequestSpec& request, double timeout_s,
                       const std::function<void(const HttpResponseHead&)>& on_head,
                       const std::function<bool(std::string_view)>& on_data);

}  // namespace ladder::tools
