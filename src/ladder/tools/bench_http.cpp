#include "ladder/tools/bench_http.h"

#include <chrono>

#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

constexpr time_t kConnectTimeoutSeconds = 10;

bool starts_with(const std::string& text, const std::string& prefix) {
    return text.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

BaseUrl parse_base_url(const std::string& base_url) {
    const size_t scheme_end = base_url.find("://");
    if (!starts_with(base_url, "http://") && !starts_with(base_url, "https://")) {
        util::fail("--base-url must start with http:// or https://, not '{}'", base_url);
    }
    const size_t path_start = base_url.find('/', scheme_end + 3);
    BaseUrl url;
    url.origin = base_url.substr(0, path_start);
    if (url.origin.size() == scheme_end + 3) util::fail("--base-url '{}' has no host", base_url);
    if (path_start != std::string::npos) url.path_prefix = base_url.substr(path_start);
    while (!url.path_prefix.empty() && url.path_prefix.back() == '/') url.path_prefix.pop_back();
    const std::string v1 = "/v1";
    if (url.path_prefix.size() >= v1.size() &&
        url.path_prefix.compare(url.path_prefix.size() - v1.size(), v1.size(), v1) == 0) {
        url.path_prefix.resize(url.path_prefix.size() - v1.size());
    }
    return url;
}

httplib::Client open_client(const BaseUrl& url, double read_timeout_s) {
    httplib::Client client(url.origin);
    client.set_connection_timeout(kConnectTimeoutSeconds);
    const auto timeout = std::chrono::duration<double>(read_timeout_s);
    client.set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
    client.set_write_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
    return client;
}

httplib::Headers request_headers(const std::string& api_key) {
    httplib::Headers headers = {{"Accept", "application/json, text/event-stream"}};
    if (!api_key.empty()) headers.emplace("Authorization", "Bearer " + api_key);
    return headers;
}

std::string describe_http_error(httplib::Error error) {
    switch (error) {
        case httplib::Error::Connection:
            return "could not connect (nothing listening there, or the host is unreachable)";
        case httplib::Error::ConnectionTimeout:
            return "connecting timed out";
        case httplib::Error::Read:
            return "reading the response failed (the connection closed, or nothing came within "
                   "--timeout)";
        case httplib::Error::Write:
            return "sending the request failed (the connection closed)";
        case httplib::Error::SSLConnection:
        case httplib::Error::SSLLoadingCerts:
        case httplib::Error::SSLServerVerification:
            return "TLS failed (" + httplib::to_string(error) + ")";
        case httplib::Error::Canceled:
            return "the request was canceled";
        default:
            return "HTTP client error " + httplib::to_string(error);
    }
}

}  // namespace ladder::tools
