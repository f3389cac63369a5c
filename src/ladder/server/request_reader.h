// Parses one HTTP/1.1 request from the bytes a connection receives, with
// hard limits (Boost.Beast's parser underneath): a header section of at
// most max_header_bytes (431), a body of at most max_body_bytes however it
// is framed, chunked bodies counted as they arrive (413), no content or
// transfer coding but identity and chunked (415, 501), and a malformed
// request is a 400. Knows nothing of sockets, so the fuzzer drives it as the
// connection does.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>

#include "ladder/server/api_error.h"
#include "ladder/server/http_message.h"

namespace ladder::server {

struct HttpLimits {
    size_t max_header_bytes = size_t{16} << 10;
    size_t max_body_bytes = size_t{8} << 20;
};

class RequestReader {
public:
    enum class Stage {
        Header,  // the request line and fields are still coming
        Body,    // the header is in (request() has it), the body is coming
        Done,    // request() is complete
        Failed,  // error() says what to answer; the connection must close
    };

    explicit RequestReader(const HttpLimits& limits);
    ~RequestReader();
    RequestReader(const RequestReader&) = delete;
    RequestReader& operator=(const RequestReader&) = delete;

    // Parses from the front of bytes and returns how many it used; the rest
    // must be given again with what arrives after it. Stops once the header
    // is complete, so the caller may refuse the request before its body.
    size_t feed(std::string_view bytes);
    // The client closed its side before the request was complete.
    void feed_end();

    Stage stage() const { return stage_; }
    // Some byte of this request has arrived (its timeout runs from here).
    bool started() const { return started_; }
    // From Body on: the method, path, query, version and fields; the body
    // too once Done.
    HttpRequest& request() { return request_; }
    // The client asked to keep the connection (HTTP/1.1 unless `Connection:
    // close`, HTTP/1.0 only with `Connection: keep-alive`).
    bool keep_alive() const { return keep_alive_; }
    // `Expect: 100-continue`: the client waits for a go-ahead before the body.
    bool expects_continue() const { return expects_continue_; }
    const ApiError& error() const { return *error_; }

private:
    struct Parser;
    void fail(ApiError error);
    void take_header();
    void check_codings();
    bool holds_back_last_chunk(std::string_view rest) const;

    HttpLimits limits_;
    std::unique_ptr<Parser> parser_;
    Stage stage_ = Stage::Header;
    bool started_ = false;
    bool keep_alive_ = false;
    bool expects_continue_ = false;
    HttpRequest request_;
    std::optional<ApiError> error_;
};

// The path of a request target, percent-decoded, and its query: false when
// the target is not an origin-form path ("/..."), an absolute URL, or "*".
bool split_target(std::string_view target, std::string& path, std::string& query);

}  // namespace ladder::server
