// A request as the routes see it and the response they fill in, free of any
// HTTP library: the transport (http_connection.cpp) parses into one and
// writes the other. A response is either whole now, or a body the engine
// produces later (a stream of events, or a whole body that is not ready yet).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ladder::server {

// Header fields in arrival order; names compare without regard to case.
class HttpHeaders {
public:
    // The first value of name, or "" when it is absent.
    const std::string& get(std::string_view name) const;
    bool has(std::string_view name) const;
    // How many fields are called name (a repeated Host or Content-Length is
    // an attack, not a list).
    size_t count(std::string_view name) const;
    void add(std::string name, std::string value);
    // Replaces every field called name with one.
    void set(std::string name, std::string value);

    const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }

private:
    std::vector<std::pair<std::string, std::string>> fields_;
};

bool equals_ignoring_case(std::string_view a, std::string_view b);
// text without the spaces and tabs around it (the optional whitespace
// around a field value and its list items, RFC 9110 5.6.3).
std::string_view trim_ows(std::string_view text);

struct HttpRequest {
    std::string method;  // "GET", "POST", ... as sent
    std::string path;    // percent-decoded, without the query
    std::string query;   // after '?', as sent
    int version = 11;    // 10 or 11
    HttpHeaders headers;
    std::string body;
    // What the route's pattern captured: /v1/models/(.+) gives the id.
    std::vector<std::string> path_params;

    const std::string& get_header_value(std::string_view name) const { return headers.get(name); }
    void set_header(std::string name, std::string value) {
        headers.set(std::move(name), std::move(value));
    }
};

// A body written as it is produced: server-sent events. The transport calls
// start() once, on its event loop, then poll() on the loop after every wake;
// nothing here may block.
class StreamedBody {
public:
    virtual ~StreamedBody() = default;
    // wake may be called from any thread (the engine's) when there is news;
    // it only schedules a poll().
    virtual void start(std::function<void()> wake) = 0;
    // Appends what is ready to out; true once the body is complete (its
    // last bytes are in out).
    virtual bool poll(std::string& out) = 0;
    // The client went away, or a write to it failed or timed out.
    virtual void cancel() = 0;
};

// A whole body that is not ready yet (a non-streaming completion). The
// transport polls it on its event loop as the engine reports progress, and
// renders it, which may take long, on a handler thread.
class PendingBody {
public:
    virtual ~PendingBody() = default;
    virtual void start(std::function<void()> wake) = 0;
    // Takes in what arrived; true once render() may be called.
    virtual bool poll() = 0;
    virtual std::string render() = 0;
    virtual void cancel() = 0;
};

struct HttpResponse {
    int status = 200;
    HttpHeaders headers;
    std::string body;
    std::shared_ptr<StreamedBody> stream;  // set: chunked, written as it comes
    std::shared_ptr<PendingBody> pending;  // set: written with a length once rendered

    void set_header(std::string name, std::string value) {
        headers.set(std::move(name), std::move(value));
    }
    void set_content(std::string content, std::string content_type) {
        body = std::move(content);
        headers.set("Content-Type", std::move(content_type));
    }
};

}  // namespace ladder::server
