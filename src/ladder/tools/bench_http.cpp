#include "ladder/tools/bench_http.h"

#include <fmt/format.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <chrono>
#include <optional>

#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

constexpr std::chrono::seconds kConnectTimeout{10};
constexpr size_t kReadChunkBytes = 16384;

bool starts_with(const std::string& text, const std::string& prefix) {
    return text.compare(0, prefix.size(), prefix) == 0;
}

struct Origin {
    bool tls = false;
    std::string host;  // without brackets
    std::string port;
    std::string host_header;  // as the Host field sends it
};

Origin split_origin(const std::string& origin) {
    Origin out;
    out.tls = starts_with(origin, "https://");
    std::string authority = origin.substr(origin.find("://") + 3);
    out.host_header = authority;
    out.port = out.tls ? "443" : "80";
    if (!authority.empty() && authority.front() == '[') {
        const size_t close = authority.find(']');
        out.host = authority.substr(1, close - 1);
        if (close + 1 < authority.size() && authority[close + 1] == ':') {
            out.port = authority.substr(close + 2);
        }
    } else if (const size_t colon = authority.rfind(':'); colon != std::string::npos) {
        out.host = authority.substr(0, colon);
        out.port = authority.substr(colon + 1);
    } else {
        out.host = authority;
    }
    return out;
}

std::string describe(const error_code& ec, const char* doing) {
    if (ec == beast::error::timeout) {
        return fmt::format("{} timed out (nothing came within --timeout)", doing);
    }
    return fmt::format("{} failed ({})", doing, ec.message());
}

// One request over any stream (plain TCP, or TLS over it); every operation
// runs on the caller's thread under its own deadline.
class Exchange {
public:
    Exchange(asio::io_context& io, std::chrono::milliseconds timeout)
        : io_(io), timeout_(timeout) {}

    // Runs one asynchronous operation to its end under a deadline on the
    // TCP stream (which closes it when the time is up); returns its error.
    template <typename Start>
    error_code run(beast::tcp_stream& deadline_of, std::chrono::steady_clock::duration timeout,
                   Start start) {
        error_code result;
        bool done = false;
        deadline_of.expires_after(timeout);
        start([&](error_code ec, auto&&...) {
            result = ec;
            done = true;
        });
        io_.restart();
        io_.run();
        if (!done) result = asio::error::operation_aborted;
        return result;
    }

    std::chrono::milliseconds timeout() const { return timeout_; }

private:
    asio::io_context& io_;
    std::chrono::milliseconds timeout_;
};

template <typename Stream>
void exchange(Stream& stream, beast::tcp_stream& lowest, Exchange& ops, const Origin& origin,
              const HttpRequestSpec& spec,
              const std::function<void(const HttpResponseHead&)>& on_head,
              const std::function<bool(std::string_view)>& on_data) {
    http::request<http::string_body> request{
        spec.method == "POST" ? http::verb::post : http::verb::get, spec.path, 11};
    request.set(http::field::host, origin.host_header);
    request.set(http::field::accept, "application/json, text/event-stream");
    request.set(http::field::user_agent, "ladder-bench");
    if (!spec.api_key.empty()) request.set(http::field::authorization, "Bearer " + spec.api_key);
    if (!spec.body.empty()) {
        request.set(http::field::content_type, "application/json");
        request.body() = spec.body;
    }
    request.prepare_payload();
    error_code ec = ops.run(lowest, ops.timeout(), [&](auto handler) {
        http::async_write(stream, request, std::move(handler));
    });
    if (ec) throw HttpClientError(describe(ec, "sending the request"), false);

    beast::flat_buffer buffer;
    http::response_parser<http::buffer_body> parser;
    parser.body_limit(boost::none);  // a stream is as long as it is
    ec = ops.run(lowest, ops.timeout(), [&](auto handler) {
        http::async_read_header(stream, buffer, parser, std::move(handler));
    });
    if (ec) throw HttpClientError(describe(ec, "reading the response"), false);
    HttpResponseHead head;
    head.status = static_cast<int>(parser.get().result_int());
    head.content_type = std::string(parser.get()[http::field::content_type]);
    on_head(head);

    char chunk[kReadChunkBytes];
    while (!parser.is_done()) {
        parser.get().body().data = chunk;
        parser.get().body().size = sizeof chunk;
        ec = ops.run(lowest, ops.timeout(), [&](auto handler) {
            http::async_read_some(stream, buffer, parser, std::move(handler));
        });
        if (ec == http::error::need_buffer) ec = {};
        const size_t n = sizeof chunk - parser.get().body().size;
        if (n > 0 && !on_data(std::string_view(chunk, n))) return;
        if (ec) throw HttpClientError(describe(ec, "reading the response"), true);
    }
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

void send_http_request(const BaseUrl& url, const HttpRequestSpec& request, double timeout_s,
                       const std::function<void(const HttpResponseHead&)>& on_head,
                       const std::function<bool(std::string_view)>& on_data) {
    const Origin origin = split_origin(url.origin);
    asio::io_context io;
    Exchange ops(io, std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000.0)));

    tcp::resolver resolver(io);
    error_code ec;
    const tcp::resolver::results_type addresses = resolver.resolve(origin.host, origin.port, ec);
    if (ec) {
        throw HttpClientError(
            fmt::format("could not connect ({} does not resolve: {})", origin.host, ec.message()),
            false);
    }
    beast::tcp_stream tcp_stream(io);
    ec = ops.run(tcp_stream, kConnectTimeout,
                 [&](auto handler) { tcp_stream.async_connect(addresses, std::move(handler)); });
    if (ec == beast::error::timeout) throw HttpClientError("connecting timed out", false);
    if (ec) {
        throw HttpClientError(
            "could not connect (nothing listening there, or the host is unreachable)", false);
    }
    tcp_stream.socket().set_option(tcp::no_delay(true), ec);
    if (!origin.tls) {
        exchange(tcp_stream, tcp_stream, ops, origin, request, on_head, on_data);
        return;
    }
    asio::ssl::context tls(asio::ssl::context::tls_client);
    tls.set_default_verify_paths();
    tls.set_verify_mode(asio::ssl::verify_peer);
    beast::ssl_stream<beast::tcp_stream> stream(std::move(tcp_stream), tls);
    SSL_set_tlsext_host_name(stream.native_handle(), origin.host.c_str());
    stream.set_verify_callback(asio::ssl::host_name_verification(origin.host));
    beast::tcp_stream& lowest = beast::get_lowest_layer(stream);
    ec = ops.run(lowest, kConnectTimeout, [&](auto handler) {
        stream.async_handshake(asio::ssl::stream_base::client, std::move(handler));
    });
    if (ec) throw HttpClientError(fmt::format("TLS failed ({})", ec.message()), false);
    exchange(stream, lowest, ops, origin, request, on_head, on_data);
}

}  // namespace ladder::tools
