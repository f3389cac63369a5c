// What keeps a web page the user happens to visit from using a server on
// their machine: the Host must name loopback when the server listens there
// (a DNS-rebinding page sends its own name), an Origin must be allowed (or be
// the server's own), CORS preflights are answered only for allowed origins,
// and a POST must say `Content-Type: application/json`, which no form or
// "simple" cross-origin request can send without a preflight.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ladder/server/http_message.h"

namespace ladder::server {

struct BrowserPolicy {
    bool loopback_listen = true;  // the listening address is a loopback one
    // Host names (or host:port) accepted besides loopback ones; "*": any.
    // Empty on a non-loopback address: any host.
    std::vector<std::string> allowed_hosts;
    // Origins ("https://app.example", "http://localhost:3000") that may call
    // from a browser; "*": any. The server's own origin always may.
    std::vector<std::string> allowed_origins;
};

// The host part of a Host header value ("[::1]:8080" gives "::1"),
// lower-case and without a trailing dot.
std::string host_name_of(std::string_view host_header);
// localhost, *.localhost, 127.0.0.0/8, ::1 (and IPv4-mapped 127/8).
bool is_loopback_name(std::string_view host);

// Throws ApiError 403 when the Host header is not one the policy accepts.
void check_host(const HttpRequest& request, const BrowserPolicy& policy);

enum class OriginCheck { None, SameOrigin, Allowed, Refused };
// None: no Origin header (not a browser, or a same-origin GET).
OriginCheck check_origin(const HttpRequest& request, const BrowserPolicy& policy);
// ApiError 403 naming the origin and the flag that would allow it.
[[noreturn]] void refuse_origin(const HttpRequest& request);

// An OPTIONS request with Origin and Access-Control-Request-Method.
bool is_preflight(const HttpRequest& request);
// 204 with the methods the route answers and the headers the page asked to
// send; the origin must have been allowed.
void answer_preflight(const HttpRequest& request, const std::vector<std::string>& methods,
                      HttpResponse& response);
// Access-Control-Allow-Origin on the response to an allowed cross-origin request.
void add_cors_headers(const HttpRequest& request, HttpResponse& response);

// Throws ApiError 415 unless a POST's Content-Type is application/json.
void check_json_content_type(const HttpRequest& request);

}  // namespace ladder::server
