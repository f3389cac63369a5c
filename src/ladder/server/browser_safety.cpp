#include "ladder/server/browser_safety.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>

#include <algorithm>

#include "ladder/server/api_error.h"

namespace ladder::server {

namespace {

// How long a browser may cache a preflight's answer.
constexpr const char* kPreflightMaxAgeSeconds = "600";

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; });
    return out;
}

bool ends_with(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// The port of a Host value or URL authority ("host:8080", "[::1]:8080"),
// or fallback when it names none.
std::string port_of(std::string_view authority, std::string_view fallback) {
    authority = trim_ows(authority);
    const size_t bracket = authority.rfind(']');
    const size_t colon = authority.rfind(':');
    const bool has_port =
        colon != std::string_view::npos &&
        (bracket != std::string_view::npos ? colon > bracket : authority.find(':') == colon);
    if (!has_port || colon + 1 == authority.size()) return std::string(fallback);
    return std::string(authority.substr(colon + 1));
}

bool listed(const std::vector<std::string>& list, std::string_view value) {
    return std::any_of(list.begin(), list.end(), [&](const std::string& item) {
        return item == "*" || equals_ignoring_case(item, value);
    });
}

std::string without_trailing_slash(std::string_view text) {
    while (!text.empty() && text.back() == '/') text.remove_suffix(1);
    return std::string(text);
}

// An Origin that is the server's own: same scheme's default port or the
// same explicit one, and the host the request was sent to.
bool same_origin(std::string_view origin, std::string_view host_header) {
    std::string_view scheme;
    for (const std::string_view candidate : {"http://", "https://"}) {
        if (origin.substr(0, candidate.size()) == candidate) scheme = candidate;
    }
    if (scheme.empty()) return false;
    const std::string_view authority = origin.substr(scheme.size());
    const std::string_view default_port = scheme == "https://" ? "443" : "80";
    return host_name_of(authority) == host_name_of(host_header) &&
           port_of(authority, default_port) == port_of(host_header, default_port);
}

}  // namespace

std::string host_name_of(std::string_view host_header) {
    std::string_view value = trim_ows(host_header);
    std::string_view host = value;
    if (!value.empty() && value.front() == '[') {
        const size_t close = value.find(']');
        host =
            value.substr(1, close == std::string_view::npos ? std::string_view::npos : close - 1);
    } else if (const size_t colon = value.rfind(':');
               colon != std::string_view::npos && value.find(':') == colon) {
        host = value.substr(0, colon);
    }
    std::string name = lower(host);
    while (!name.empty() && name.back() == '.') name.pop_back();
    return name;
}

bool is_loopback_name(std::string_view host) {
    if (host == "localhost" || ends_with(host, ".localhost")) return true;
    const std::string text(host);
    in_addr v4{};
    if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
    in6_addr v6{};
    if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
        if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
        return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
    }
    return false;
}

void check_host(const HttpRequest& request, const BrowserPolicy& policy) {
    if (!request.headers.has("Host")) return;  // HTTP/1.0; no browser sends it
    const std::string& value = request.headers.get("Host");
    const std::string host = host_name_of(value);
    if (is_loopback_name(host) || listed(policy.allowed_hosts, host) ||
        listed(policy.allowed_hosts, trim_ows(value))) {
        return;
    }
    if (!policy.loopback_listen && policy.allowed_hosts.empty()) return;
    throw ApiError(403, "invalid_request_error",
                   fmt::format("the Host '{}' is not allowed: this server answers only to {}; "
                               "add the name with --allowed-hosts",
                               value,
                               policy.loopback_listen ? "loopback names (localhost, 127.0.0.1, ::1)"
                                                      : "the names given with --allowed-hosts"),
                   "", "host_not_allowed");
}

OriginCheck check_origin(const HttpRequest& request, const BrowserPolicy& policy) {
    if (!request.headers.has("Origin")) return OriginCheck::None;
    const std::string origin = without_trailing_slash(trim_ows(request.headers.get("Origin")));
    if (listed(policy.allowed_origins, origin)) return OriginCheck::Allowed;
    if (same_origin(origin, request.headers.get("Host"))) return OriginCheck::SameOrigin;
    return OriginCheck::Refused;
}

void refuse_origin(const HttpRequest& request) {
    throw ApiError(403, "invalid_request_error",
                   fmt::format("requests from the web page at '{}' are not allowed: start the "
                               "server with --allowed-origins to allow it",
                               request.headers.get("Origin")),
                   "", "origin_not_allowed");
}

bool is_preflight(const HttpRequest& request) {
    return request.method == "OPTIONS" && request.headers.has("Origin") &&
           request.headers.has("Access-Control-Request-Method");
}

void answer_preflight(const HttpRequest& request, const std::vector<std::string>& methods,
                      HttpResponse& response) {
    response.status = 204;
    add_cors_headers(request, response);
    std::string allowed;
    for (const std::string& method : methods) allowed += (allowed.empty() ? "" : ", ") + method;
    response.set_header("Access-Control-Allow-Methods", allowed);
    // The page's SDK may send headers of its own (x-stainless-*): the
    // origin is trusted, so whatever it asked for is allowed.
    const std::string& asked = request.headers.get("Access-Control-Request-Headers");
    response.set_header("Access-Control-Allow-Headers",
                        asked.empty() ? std::string("Authorization, Content-Type") : asked);
    response.set_header("Access-Control-Max-Age", kPreflightMaxAgeSeconds);
    // Chrome asks before a public page may reach a private or loopback address.
    if (request.headers.has("Access-Control-Request-Private-Network")) {
        response.set_header("Access-Control-Allow-Private-Network", "true");
    }
    response.set_header("Vary",
                        "Origin, Access-Control-Request-Method, Access-Control-Request-Headers");
}

void add_cors_headers(const HttpRequest& request, HttpResponse& response) {
    response.set_header("Access-Control-Allow-Origin",
                        std::string(trim_ows(request.headers.get("Origin"))));
    response.set_header("Vary", "Origin");
}

void check_json_content_type(const HttpRequest& request) {
    if (request.method != "POST") return;
    const std::string& value = request.headers.get("Content-Type");
    const std::string media_type = lower(trim_ows(std::string_view(value).substr(0, value.find(';'))));
    if (media_type == "application/json") return;
    throw ApiError(415, "invalid_request_error",
                   fmt::format("the request body must be JSON with 'Content-Type: "
                               "application/json', not {}",
                               value.empty() ? std::string("no Content-Type") : "'" + value + "'"),
                   "", "unsupported_media_type");
}

}  // namespace ladder::server
