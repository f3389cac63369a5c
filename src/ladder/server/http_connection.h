// One client connection on the event loop (Boost.Asio): it reads requests
// with RequestReader under the request and keep-alive timeouts, has the
// router screen each header before its body is read, runs the route (on the
// loop or a handler thread), and writes the response: at once, as a stream
// of chunks with backpressure (one write in flight; what the engine makes
// meanwhile goes out together in the next), or, for a whole body still
// running, once it is rendered. While a response runs the connection
// watches for the client leaving, which aborts the response's requests.
// Included only by the transport's own files.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ladder/server/connection_table.h"
#include "ladder/server/http_message.h"
#include "ladder/server/request_reader.h"
#include "ladder/server/router.h"
#include "ladder/server/server_metrics.h"

namespace ladder::server {

// Lets other threads (the engine's) schedule work on the event loop until
// the server closes it; later posts are dropped, so a late output never
// reaches a loop that is gone.
class LoopGate {
public:
    explicit LoopGate(boost::asio::io_context& loop) : loop_(loop) {}
    void post(std::function<void()> work);
    void close();

private:
    std::mutex mutex_;
    bool open_ = true;
    boost::asio::io_context& loop_;
};

struct TransportSettings {
    HttpLimits limits;
    std::chrono::milliseconds request_timeout{30000};    // a request must arrive whole
    std::chrono::milliseconds keep_alive_timeout{5000};  // idle between requests
    std::chrono::milliseconds write_timeout{30000};      // a write the client does not take
};

// What every connection of one server shares; HttpServer owns it all.
struct ConnectionServices {
    boost::asio::io_context& loop;
    boost::asio::thread_pool& handlers;
    std::shared_ptr<LoopGate> gate;
    const Router& router;
    ConnectionTable& table;
    TransportSettings settings;
    HttpCounters& counters;
    std::function<bool()> draining;       // true: every response closes its connection
    std::atomic<int64_t>& n_open_bodies;  // streams and pending bodies not yet written
    std::vector<char>& read_buffer;       // the loop's one buffer for reads
};

class HttpConnection final : public TableMember,
                             public std::enable_shared_from_this<HttpConnection> {
public:
    HttpConnection(boost::asio::ip::tcp::socket socket, ConnectionServices& services);
    ~HttpConnection() override;

    void start();
    // Answers error on a connection the server will not take, and closes it.
    void refuse(const ApiError& error);
    // Closes now, aborting whatever response runs (server stop).
    void close();

    bool evictable() const override;
    void evict() override;

private:
    enum class State {
        Idle,       // between requests: the keep-alive timeout runs
        Reading,    // a request is arriving: the request timeout runs
        Handling,   // its route runs (maybe on a handler thread)
        Writing,    // a whole response is being written
        Streaming,  // a streamed body is being written as it comes
        Pending,    // a whole body waits for the engine, or is being rendered
        Lingering,  // the last response is out: what the client still sends is dropped
    };

    // Reading.
    void wait_readable();
    void on_readable();
    void begin_request();
    void take_input();
    // Screens the header; false when the request was answered (or waits
    // for a 100 Continue to go out).
    bool after_header();
    // A client that shut its side mid-request gets its 400.
    void end_if_peer_closed();
    void on_read_deadline();
    void arm_read_deadline(std::chrono::steady_clock::time_point deadline);
    // Handling.
    void dispatch();
    void respond(HttpResponse response);
    void client_gone();
    // Writing.
    std::string head(int status, const HttpHeaders& headers, bool chunked,
                     std::optional<size_t> content_length);
    // One write in flight at a time, bounded by the write timeout.
    void write(std::vector<boost::asio::const_buffer> buffers, std::function<void()> then);
    // Sends what the socket takes at once, without blocking, and drops it
    // from buffers.
    void write_now(std::vector<boost::asio::const_buffer>& buffers);
    void write_whole(int status, HttpHeaders headers, std::string body);
    void start_stream(HttpResponse response);
    void pump_stream();
    void start_pending(HttpResponse response);
    void on_pending_news();
    // A function the engine's thread may call: it schedules on_news on the loop.
    std::function<void()> waker(void (HttpConnection::*on_news)());
    void count_open_body();
    void end_body(bool cancel);
    void finish_exchange();
    void answer_and_close(ApiError error);  // (a copy: it may come from the reader it resets)
    void linger();

    boost::asio::ip::tcp::socket socket_;
    ConnectionServices& services_;
    boost::asio::steady_timer read_timer_;   // request, keep-alive, linger; a stream's tick
    boost::asio::steady_timer write_timer_;  // the write in flight
    uint64_t read_serial_ = 0;               // tells a stale timer from the armed one
    uint64_t write_serial_ = 0;
    State state_ = State::Idle;
    bool started_ = false;
    bool closed_ = false;
    bool waiting_readable_ = false;
    bool first_request_ = true;
    bool peer_closed_ = false;  // the client shut its side
    std::string input_;         // received and not yet parsed
    std::optional<RequestReader> reader_;
    bool screened_ = false;
    const Router::Route* route_ = nullptr;
    int version_ = 11;
    bool keep_alive_ = false;
    bool head_only_ = false;  // HEAD: no body goes out
    // What the write in flight points into.
    std::string out_head_;
    std::string out_body_;
    std::string out_chunk_header_;
    bool write_in_flight_ = false;
    std::shared_ptr<StreamedBody> stream_;
    bool stream_done_ = false;
    bool news_waiting_ = false;  // the engine had news while a write was in flight
    bool chunked_ = true;
    std::shared_ptr<PendingBody> pending_;
    int pending_status_ = 200;
    HttpHeaders pending_headers_;
    bool rendering_ = false;
    bool counted_open_body_ = false;
};

}  // namespace ladder::server
