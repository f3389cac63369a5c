#include "ladder/server/request_reader.h"

#include <fmt/format.h>

#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

namespace ladder::server {

namespace http = boost::beast::http;

struct RequestReader::Parser {
    http::request_parser<http::string_body> beast;
};

namespace {

// True when every comma-separated item of a field value is allowed.
template <typename Allowed>
bool every_item(std::string_view value, Allowed allowed) {
    while (true) {
        const size_t comma = value.find(',');
        const std::string_view item = trim_ows(value.substr(0, comma));
        if (!item.empty() && !allowed(item)) return false;
        if (comma == std::string_view::npos) return true;
        value.remove_prefix(comma + 1);
    }
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool percent_decode(std::string_view text, std::string& out) {
    std::string decoded;
    decoded.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            decoded.push_back(text[i]);
            continue;
        }
        if (i + 2 >= text.size()) return false;
        const int high = hex_digit(text[i + 1]);
        const int low = hex_digit(text[i + 2]);
        if (high < 0 || low < 0 || (high == 0 && low == 0)) return false;  // no NUL in a path
        decoded.push_back(static_cast<char>(high * 16 + low));
        i += 2;
    }
    out = std::move(decoded);
    return true;
}

ApiError malformed(const std::string& why) {
    return ApiError(400, "invalid_request_error", "malformed HTTP request: " + why, "",
                    "bad_request");
}

ApiError parse_error(const boost::system::error_code& ec, const HttpLimits& limits) {
    if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
        return ApiError(431, "invalid_request_error",
                        fmt::format("the request's header section is larger than {} bytes",
                                    limits.max_header_bytes),
                        "", "request_header_fields_too_large");
    }
    if (ec == http::error::body_limit) {
        return ApiError(
            413, "invalid_request_error",
            fmt::format("the request body is larger than {} bytes", limits.max_body_bytes), "",
            "request_too_large");
    }
    if (ec == http::error::partial_message) {
        return malformed("the connection closed before the request was complete");
    }
    return malformed(ec.message());
}

}  // namespace

bool split_target(std::string_view target, std::string& path, std::string& query) {
    query.clear();
    if (target == "*") {
        path.assign(1, '*');  // (not = "*": GCC 12 warns falsely, PR 105329)
        return true;
    }
    // The absolute form ("http://host/path") that a request to a proxy uses.
    for (const std::string_view scheme : {"http://", "https://"}) {
        if (target.substr(0, scheme.size()) == scheme) {
            const size_t slash = target.find('/', scheme.size());
            target = slash == std::string_view::npos ? "/" : target.substr(slash);
        }
    }
    if (target.empty() || target.front() != '/') return false;
    target = target.substr(0, target.find('#'));
    const size_t question = target.find('?');
    if (question != std::string_view::npos) query = std::string(target.substr(question + 1));
    return percent_decode(target.substr(0, question), path);
}

RequestReader::RequestReader(const HttpLimits& limits)
    : limits_(limits), parser_(std::make_unique<Parser>()) {
    parser_->beast.header_limit(static_cast<std::uint32_t>(limits.max_header_bytes));
    parser_->beast.body_limit(limits.max_body_bytes);
}

RequestReader::~RequestReader() = default;

void RequestReader::fail(ApiError error) {
    error_ = std::move(error);
    stage_ = Stage::Failed;
}

bool RequestReader::holds_back_last_chunk(std::string_view rest) const {
    // Boost 1.81's parser asserts, wrongly, when the last chunk's line
    // "0\r\n" is given to it alone and then again with one byte more
    // (boostorg/beast#2861, fixed in Boost 1.86; the check is compiled out of
    // release builds, not out of the fuzz build). That line ends a chunked
    // body only with two more bytes ("\r\n" or a trailer), so it waits for
    // them here: the parser then first sees it with a byte after it.
    return stage_ == Stage::Body && parser_->beast.chunked() && rest == "0\r\n";
}

size_t RequestReader::feed(std::string_view bytes) {
    if (!bytes.empty()) started_ = true;
    size_t used = 0;
    while (stage_ == Stage::Header || stage_ == Stage::Body) {
        const std::string_view rest = bytes.substr(used);
        if (rest.empty() || holds_back_last_chunk(rest)) break;
        boost::system::error_code ec;
        used += parser_->beast.put(boost::asio::buffer(rest.data(), rest.size()), ec);
        if (ec == http::error::need_more) {
            // Beast waits for a whole line (the header, a chunk's size line)
            // before it uses any of it; what it holds back is bounded here.
            const size_t held = bytes.size() - used;
            if (held >= limits_.max_header_bytes) {
                fail(stage_ == Stage::Header ? parse_error(http::error::header_limit, limits_)
                                             : malformed("a chunk header is too long"));
            }
            break;
        }
        if (ec) {
            fail(parse_error(ec, limits_));
            break;
        }
        if (stage_ == Stage::Header && parser_->beast.is_header_done()) {
            take_header();
            return used;  // the caller looks at the header before the body
        }
        if (parser_->beast.is_done()) {
            request_.body = parser_->beast.release().body();
            stage_ = Stage::Done;
        }
    }
    return used;
}

void RequestReader::feed_end() {
    if (stage_ == Stage::Header || stage_ == Stage::Body) {
        fail(parse_error(http::error::partial_message, limits_));
    }
}

void RequestReader::take_header() {
    const auto& message = parser_->beast.get();
    request_.method = std::string(message.method_string());
    request_.version = message.version();
    for (const auto& field : message) {
        request_.headers.add(std::string(field.name_string()), std::string(field.value()));
    }
    keep_alive_ = message.keep_alive();
    expects_continue_ = equals_ignoring_case(trim_ows(request_.headers.get("Expect")), "100-continue");
    const bool target_ok =
        split_target(std::string_view(message.target().data(), message.target().size()),
                     request_.path, request_.query);
    stage_ = parser_->beast.is_done() ? Stage::Done : Stage::Body;
    if (stage_ == Stage::Done) request_.body = parser_->beast.release().body();

    if (!target_ok) {
        fail(malformed("the request target is not a path"));
        return;
    }
    // HTTP/1.1 requires one Host; two could name different sites to
    // different checks.
    const size_t n_hosts = request_.headers.count("Host");
    if (n_hosts > 1 || (n_hosts == 0 && request_.version >= 11)) {
        fail(malformed("an HTTP/1.1 request must have exactly one Host header"));
        return;
    }
    check_codings();
}

void RequestReader::check_codings() {
    // A compressed body would be a small request that inflates into a large
    // one past the body limit; none is accepted.
    const bool identity = every_item(request_.headers.get("Content-Encoding"), [](auto coding) {
        return equals_ignoring_case(coding, "identity");
    });
    if (!identity) {
        fail(ApiError(415, "invalid_request_error",
                      fmt::format("Content-Encoding '{}' is not supported: send the body "
                                  "uncompressed",
                                  request_.headers.get("Content-Encoding")),
                      "", "unsupported_content_encoding"));
        return;
    }
    const bool chunked_only =
        every_item(request_.headers.get("Transfer-Encoding"),
                   [](auto coding) { return equals_ignoring_case(coding, "chunked"); });
    if (!chunked_only) {
        fail(ApiError(501, "invalid_request_error",
                      fmt::format("Transfer-Encoding '{}' is not supported: only chunked",
                                  request_.headers.get("Transfer-Encoding")),
                      "", "unsupported_transfer_encoding"));
    }
}

}  // namespace ladder::server
