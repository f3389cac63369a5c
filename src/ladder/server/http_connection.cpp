#include "ladder/server/http_connection.h"

#include <fmt/format.h>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/write.hpp>
#include <sstream>

#include "ladder/server/http_io.h"

namespace ladder::server {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using boost::system::error_code;

namespace {

// After answering an error (or the last response of a connection) the rest
// of what the client sends is read and dropped for this long, so that
// closing with unread bytes does not reset the connection before the
// client has read the answer.
constexpr std::chrono::seconds kLingerTime{2};
// A stream is polled at least this often even without news, so that it can
// send a keep-alive comment while its request waits.
constexpr std::chrono::seconds kStreamTick{1};
// The kernel's send buffer of a connection (it doubles this). Linux would
// grow it to 4 MiB for a client that stopped reading; capped, a stalled
// client holds at most this much kernel memory, and backpressure reaches
// its stream (and --timeout its request) after a few hundred KiB.
constexpr int kSendBufferBytes = 128 << 10;
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
constexpr std::string_view kLastChunk = "0\r\n\r\n";
constexpr std::string_view kChunkEnd = "\r\n";

asio::const_buffer bytes_of(std::string_view text) {
    return asio::buffer(text.data(), text.size());
}

}  // namespace

void LoopGate::post(std::function<void()> work) {
    const std::lock_guard lock(mutex_);
    if (open_) asio::post(loop_, std::move(work));
}

void LoopGate::close() {
    const std::lock_guard lock(mutex_);
    open_ = false;
}

HttpConnection::HttpConnection(tcp::socket socket, ConnectionServices& services)
    : socket_(std::move(socket)),
      services_(services),
      read_timer_(services.loop),
      write_timer_(services.loop) {}

HttpConnection::~HttpConnection() {
    // Destroyed with the event loop's last handlers, never closed.
    if (started_ && !closed_) {
        services_.table.remove(this);
        --services_.counters.n_connections;
        end_body(/*cancel=*/true);
    }
}

void HttpConnection::start() {
    started_ = true;
    ++services_.counters.n_connections;
    error_code ec;
    socket_.non_blocking(true, ec);
    socket_.set_option(tcp::no_delay(true), ec);  // SSE chunks are small and must leave at once
    socket_.set_option(asio::socket_base::send_buffer_size(kSendBufferBytes), ec);
    // The first request has the request timeout from the moment of accept.
    arm_read_deadline(Clock::now() + services_.settings.request_timeout);
    wait_readable();
}

void HttpConnection::refuse(const ApiError& error) {
    HttpResponse response;
    send_error(response, error);
    const std::string bytes =
        head(error.status(), response.headers, false, response.body.size()) + response.body;
    // Best effort on a fresh socket: its send buffer is empty. What the
    // client already sent is read first, so that closing sends a FIN, not
    // a reset that could destroy the answer before the client reads it.
    error_code ec;
    socket_.non_blocking(true, ec);
    socket_.write_some(bytes_of(bytes), ec);
    for (int i = 0; i < 4 && !ec; ++i) socket_.read_some(asio::buffer(services_.read_buffer), ec);
    socket_.shutdown(tcp::socket::shutdown_send, ec);
    socket_.close(ec);
    closed_ = true;
}

void HttpConnection::close() {
    if (closed_) return;
    closed_ = true;
    end_body(/*cancel=*/true);
    read_timer_.cancel();
    write_timer_.cancel();
    error_code ec;
    socket_.close(ec);
    services_.table.remove(this);
    --services_.counters.n_connections;
}

bool HttpConnection::evictable() const {
    return state_ == State::Idle || state_ == State::Reading || state_ == State::Lingering;
}

void HttpConnection::evict() {
    ++services_.counters.n_connections_evicted;
    close();
}

// --- Reading ---------------------------------------------------------------

void HttpConnection::wait_readable() {
    if (waiting_readable_ || closed_ || peer_closed_) return;
    waiting_readable_ = true;
    // Wait for readiness, then read into the loop's one buffer: an idle
    // connection holds no read buffer of its own.
    socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](error_code ec) {
        self->waiting_readable_ = false;
        if (self->closed_) return;
        if (ec) {
            self->client_gone();
            return;
        }
        self->on_readable();
    });
}

void HttpConnection::on_readable() {
    std::vector<char>& buffer = services_.read_buffer;
    error_code ec;
    const size_t n = socket_.read_some(asio::buffer(buffer), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) {
        wait_readable();
        return;
    }
    if (ec == asio::error::eof) {
        peer_closed_ = true;
    } else if (ec) {
        client_gone();
        return;
    }
    const std::string_view received(buffer.data(), n);
    switch (state_) {
        case State::Idle:
            if (peer_closed_) {  // a client done with its connection
                close();
                return;
            }
            input_.append(received);
            begin_request();
            take_input();
            return;
        case State::Reading:
            input_.append(received);
            take_input();
            end_if_peer_closed();
            return;
        case State::Lingering:
            if (peer_closed_) {
                close();
            } else {
                wait_readable();
            }
            return;
        default:
            // A response runs: the client leaving ends it. What a pipelining
            // client sends meanwhile waits (a header's worth at most).
            if (peer_closed_) {
                client_gone();
                return;
            }
            input_.append(received);
            if (input_.size() < services_.settings.limits.max_header_bytes) wait_readable();
            return;
    }
}

void HttpConnection::begin_request() {
    state_ = State::Reading;
    reader_.emplace(services_.settings.limits);
    screened_ = false;
    route_ = nullptr;
    if (!first_request_) arm_read_deadline(Clock::now() + services_.settings.request_timeout);
    first_request_ = false;
}

void HttpConnection::take_input() {
    while (true) {
        const size_t used = reader_->feed(input_);
        input_.erase(0, used);
        const RequestReader::Stage stage = reader_->stage();
        if (stage == RequestReader::Stage::Failed) {
            answer_and_close(reader_->error());
            return;
        }
        if (stage == RequestReader::Stage::Header) {
            wait_readable();
            return;
        }
        if (!screened_) {
            screened_ = true;
            if (!after_header()) return;
            continue;
        }
        if (stage == RequestReader::Stage::Body) {
            if (used > 0) continue;
            wait_readable();
            return;
        }
        dispatch();
        return;
    }
}

void HttpConnection::end_if_peer_closed() {
    // The client shut its side before its request was whole.
    if (!peer_closed_ || state_ != State::Reading || write_in_flight_) return;
    reader_->feed_end();
    answer_and_close(reader_->error());
}

bool HttpConnection::after_header() {
    HttpRequest& request = reader_->request();
    version_ = request.version;
    keep_alive_ = reader_->keep_alive();
    head_only_ = request.method == "HEAD";
    HttpResponse answer;
    route_ = services_.router.screen(request, answer);
    if (route_ == nullptr) {
        // Refused (or a preflight answered) on its header: a body that was
        // not read leaves the connection unusable for another request.
        if (reader_->stage() == RequestReader::Stage::Body) keep_alive_ = false;
        reader_.reset();
        read_timer_.cancel();
        write_whole(answer.status, std::move(answer.headers), std::move(answer.body));
        return false;
    }
    if (reader_->expects_continue() && reader_->stage() == RequestReader::Stage::Body) {
        write({bytes_of(kContinue)}, [this] {
            take_input();
            end_if_peer_closed();
        });
        return false;
    }
    return true;
}

void HttpConnection::on_read_deadline() {
    switch (state_) {
        case State::Idle:  // keep-alive ran out, or nothing was ever sent
        case State::Lingering:
            close();
            return;
        case State::Reading:
            if (write_in_flight_) {  // the client has not even taken our 100 Continue
                close();
                return;
            }
            ++services_.counters.n_request_timeouts;
            answer_and_close(ApiError(
                408, "invalid_request_error",
                fmt::format(
                    "the request did not arrive whole within {} s",
                    std::chrono::duration<double>(services_.settings.request_timeout).count()),
                "", "request_timeout"));
            return;
        case State::Streaming:
            arm_read_deadline(Clock::now() + kStreamTick);
            pump_stream();
            return;
        default:
            return;
    }
}

void HttpConnection::arm_read_deadline(Clock::time_point deadline) {
    const uint64_t serial = ++read_serial_;
    read_timer_.expires_at(deadline);
    read_timer_.async_wait([self = shared_from_this(), serial](error_code ec) {
        // A timer that fired just before it was re-armed is stale.
        if (ec || self->closed_ || serial != self->read_serial_) return;
        self->on_read_deadline();
    });
}

// --- Handling ----------------------------------------------------------------

void HttpConnection::dispatch() {
    ++read_serial_;  // the request is in: its deadline no longer applies
    read_timer_.cancel();
    state_ = State::Handling;
    HttpRequest request = std::move(reader_->request());
    reader_.reset();
    wait_readable();  // from here on, watch for the client leaving
    const Router::Route& route = *route_;
    if (route.on_event_loop) {
        HttpResponse response;
        services_.router.run(route, request, response);
        respond(std::move(response));
        return;
    }
    asio::post(
        services_.handlers, [self = shared_from_this(), &route, request = std::move(request)] {
            HttpResponse response;
            self->services_.router.run(route, request, response);
            asio::post(self->services_.loop, [self, response = std::move(response)]() mutable {
                self->respond(std::move(response));
            });
        });
}

void HttpConnection::respond(HttpResponse response) {
    if (closed_) return;  // the client left: dropping the response aborts its requests
    if (response.stream) {
        start_stream(std::move(response));
    } else if (response.pending) {
        start_pending(std::move(response));
    } else {
        write_whole(response.status, std::move(response.headers), std::move(response.body));
    }
}

void HttpConnection::client_gone() {
    if (state_ == State::Handling || state_ == State::Streaming || state_ == State::Pending) {
        ++services_.counters.n_clients_gone;
    }
    close();
}

// --- Writing -----------------------------------------------------------------

std::string HttpConnection::head(int status, const HttpHeaders& headers, bool chunked,
                                 std::optional<size_t> content_length) {
    http::response<http::empty_body> message;
    message.version(version_);
    message.result(static_cast<unsigned>(status));
    for (const auto& [name, value] : headers.fields()) message.insert(name, value);
    if (chunked) message.chunked(true);
    // 204 and 304 carry no body and must not announce one.
    if (content_length && status != 204 && status != 304) message.content_length(*content_length);
    message.keep_alive(keep_alive_ && !services_.draining());
    std::ostringstream text;
    text << message.base();
    return text.str();
}

void HttpConnection::write(std::vector<asio::const_buffer> buffers, std::function<void()> then) {
    write_in_flight_ = true;
    const uint64_t serial = ++write_serial_;
    write_timer_.expires_after(services_.settings.write_timeout);
    write_timer_.async_wait([self = shared_from_this(), serial](error_code ec) {
        if (ec || self->closed_ || serial != self->write_serial_ || !self->write_in_flight_) return;
        // The client has not taken a byte of this write for --timeout: a
        // reader that stopped reading holds nothing of ours any longer.
        ++self->services_.counters.n_slow_readers_dropped;
        self->close();
    });
    asio::async_write(socket_, buffers,
                      [self = shared_from_this(), then = std::move(then)](error_code ec, size_t) {
                          self->write_in_flight_ = false;
                          ++self->write_serial_;
                          self->write_timer_.cancel();
                          if (self->closed_) return;
                          if (ec) {
                              self->client_gone();
                              return;
                          }
                          then();
                      });
}

void HttpConnection::write_now(std::vector<asio::const_buffer>& buffers) {
    error_code ec;
    size_t sent = socket_.write_some(buffers, ec);  // non-blocking: what the socket takes now
    if (ec) return;  // would block, or failed: the asynchronous write finds out which
    auto first_left = buffers.begin();
    while (first_left != buffers.end() && sent >= first_left->size()) {
        sent -= first_left->size();
        ++first_left;
    }
    buffers.erase(buffers.begin(), first_left);
    if (!buffers.empty()) buffers.front() += sent;
}

void HttpConnection::write_whole(int status, HttpHeaders headers, std::string body) {
    state_ = State::Writing;
    out_head_ = head(status, headers, false, body.size());
    out_body_ = head_only_ ? std::string() : std::move(body);
    write({bytes_of(out_head_), bytes_of(out_body_)}, [this] { finish_exchange(); });
}

void HttpConnection::start_stream(HttpResponse response) {
    state_ = State::Streaming;
    stream_ = std::move(response.stream);
    count_open_body();
    chunked_ = version_ >= 11;
    if (!chunked_) keep_alive_ = false;  // HTTP/1.0: the body ends when the connection does
    out_head_ = head(response.status, response.headers, chunked_, std::nullopt);
    if (head_only_) {
        end_body(/*cancel=*/true);
        out_body_.clear();
        write({bytes_of(out_head_)}, [this] { finish_exchange(); });
        return;
    }
    stream_done_ = false;
    stream_->start(waker(&HttpConnection::pump_stream));
    arm_read_deadline(Clock::now() + kStreamTick);
    pump_stream();  // the head and the opening events
}

void HttpConnection::pump_stream() {
    if (closed_ || state_ != State::Streaming || stream_done_) return;
    if (write_in_flight_) {
        news_waiting_ = true;  // written together when the socket takes more
        return;
    }
    news_waiting_ = false;
    out_body_.clear();
    stream_done_ = stream_->poll(out_body_);
    std::vector<asio::const_buffer> buffers;
    if (!out_head_.empty()) buffers.push_back(bytes_of(out_head_));
    if (!out_body_.empty()) {
        if (chunked_) {
            out_chunk_header_.clear();
            fmt::format_to(std::back_inserter(out_chunk_header_), "{:x}\r\n", out_body_.size());
            buffers.push_back(bytes_of(out_chunk_header_));
            buffers.push_back(bytes_of(out_body_));
            buffers.push_back(bytes_of(kChunkEnd));
        } else {
            buffers.push_back(bytes_of(out_body_));
        }
    }
    if (stream_done_ && chunked_) buffers.push_back(bytes_of(kLastChunk));
    if (buffers.empty()) return;
    if (!stream_done_) {
        // A chunk nearly always fits the socket's send buffer: sent here, it
        // skips the write timer and the asynchronous operation, which at 32
        // streams were a third of the loop's time per chunk. The stream's last
        // write stays asynchronous: its completion starts the connection's next
        // request, and done from here a pipelined run of them would recurse.
        write_now(buffers);
        if (buffers.empty()) {
            out_head_.clear();
            return;
        }
    }
    write(std::move(buffers), [this] {
        out_head_.clear();
        if (stream_done_) {
            finish_exchange();
        } else if (news_waiting_) {
            pump_stream();
        }
    });
}

void HttpConnection::start_pending(HttpResponse response) {
    state_ = State::Pending;
    pending_ = std::move(response.pending);
    pending_status_ = response.status;
    pending_headers_ = std::move(response.headers);
    count_open_body();
    pending_->start(waker(&HttpConnection::on_pending_news));
    on_pending_news();
}

void HttpConnection::on_pending_news() {
    if (closed_ || state_ != State::Pending || rendering_ || !pending_->poll()) return;
    // Rendering a large body (many choices, logprobs) is work for a
    // handler thread, not the loop every connection shares.
    rendering_ = true;
    asio::post(services_.handlers, [self = shared_from_this(), body = pending_] {
        std::string text = body->render();
        asio::post(self->services_.loop, [self, text = std::move(text)]() mutable {
            self->rendering_ = false;
            if (self->closed_) return;
            self->write_whole(self->pending_status_, std::move(self->pending_headers_),
                              std::move(text));
        });
    });
}

std::function<void()> HttpConnection::waker(void (HttpConnection::*on_news)()) {
    return [weak = weak_from_this(), gate = services_.gate, on_news] {
        gate->post([weak, on_news] {
            if (const std::shared_ptr<HttpConnection> self = weak.lock()) ((*self).*on_news)();
        });
    };
}

void HttpConnection::count_open_body() {
    if (counted_open_body_) return;
    counted_open_body_ = true;
    ++services_.n_open_bodies;
}

void HttpConnection::end_body(bool cancel) {
    if (cancel && stream_) stream_->cancel();
    if (cancel && pending_) pending_->cancel();
    stream_.reset();
    pending_.reset();
    if (counted_open_body_) {
        counted_open_body_ = false;
        --services_.n_open_bodies;
    }
}

void HttpConnection::finish_exchange() {
    end_body(/*cancel=*/false);
    out_head_.clear();
    out_body_.clear();
    out_body_.shrink_to_fit();
    if (!keep_alive_ || services_.draining() || peer_closed_) {
        linger();
        return;
    }
    state_ = State::Idle;
    if (!input_.empty()) {  // pipelined: the next request is already here
        begin_request();
        take_input();
        return;
    }
    input_.shrink_to_fit();
    arm_read_deadline(Clock::now() + services_.settings.keep_alive_timeout);
    wait_readable();
}

void HttpConnection::answer_and_close(ApiError error) {
    reader_.reset();
    keep_alive_ = false;
    ++read_serial_;
    read_timer_.cancel();
    HttpResponse response;
    send_error(response, error);
    write_whole(response.status, std::move(response.headers), std::move(response.body));
}

void HttpConnection::linger() {
    state_ = State::Lingering;
    error_code ec;
    socket_.shutdown(tcp::socket::shutdown_send, ec);
    input_.clear();
    input_.shrink_to_fit();
    if (peer_closed_) {
        close();
        return;
    }
    arm_read_deadline(Clock::now() + kLingerTime);
    wait_readable();
}

}  // namespace ladder::server
