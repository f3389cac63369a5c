// RequestReader: one request out of the bytes a connection receives, however
// they are split, under the server's limits.
#include "ladder/server/request_reader.h"

#include <gtest/gtest.h>

#include <string>

namespace ladder::server {
namespace {

// Feeds bytes the way a connection does, `piece` bytes at a time, keeping
// what the reader did not use; returns what is left after the request.
std::string feed_in_pieces(RequestReader& reader, const std::string& bytes, size_t piece) {
    std::string held;
    for (size_t at = 0; at < bytes.size(); at += piece) {
        held += bytes.substr(at, piece);
        while (true) {
            const size_t used = reader.feed(held);
            held.erase(0, used);
            const auto stage = reader.stage();
            if (stage == RequestReader::Stage::Done || stage == RequestReader::Stage::Failed) {
                return held + bytes.substr(std::min(bytes.size(), at + piece));
            }
            if (used == 0) break;
        }
    }
    return held;
}

HttpLimits small_limits() {
    HttpLimits limits;
    limits.max_header_bytes = 1024;
    limits.max_body_bytes = 64;
    return limits;
}

TEST(RequestReader, ParsesARequestSplitAnywhere) {
    const std::string bytes =
        "POST /v1/models/a%2Fb?x=1 HTTP/1.1\r\nHost: localhost:8080\r\n"
        "Content-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}";
    for (const size_t piece : {size_t{1}, size_t{3}, size_t{17}, bytes.size()}) {
        RequestReader reader(small_limits());
        EXPECT_EQ(feed_in_pieces(reader, bytes, piece), "") << "piece " << piece;
        ASSERT_EQ(reader.stage(), RequestReader::Stage::Done) << "piece " << piece;
        const HttpRequest& request = reader.request();
        EXPECT_EQ(request.method, "POST");
        EXPECT_EQ(request.path, "/v1/models/a/b");
        EXPECT_EQ(request.query, "x=1");
        EXPECT_EQ(request.version, 11);
        EXPECT_EQ(request.headers.get("content-type"), "application/json");
        EXPECT_EQ(request.body, "{\"a\":1}");
        EXPECT_TRUE(reader.keep_alive());
    }
}

TEST(RequestReader, StopsAtTheHeaderSoTheCallerMayRefuseBeforeTheBody) {
    RequestReader reader(small_limits());
    const std::string head = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n";
    const std::string bytes = head + "abcd";
    EXPECT_EQ(reader.feed(bytes), head.size());
    EXPECT_EQ(reader.stage(), RequestReader::Stage::Body);
    EXPECT_EQ(reader.feed(std::string_view(bytes).substr(head.size())), 4u);
    EXPECT_EQ(reader.stage(), RequestReader::Stage::Done);
    EXPECT_EQ(reader.request().body, "abcd");
}

TEST(RequestReader, LeavesAPipelinedRequestUnread) {
    RequestReader reader(small_limits());
    const std::string first = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
    const std::string second = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    EXPECT_EQ(feed_in_pieces(reader, first + second, 1000), second);
    EXPECT_EQ(reader.request().path, "/health");
}

TEST(RequestReader, AssemblesAChunkedBody) {
    RequestReader reader(small_limits());
    const std::string bytes =
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        "3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\n\r\n";
    EXPECT_EQ(feed_in_pieces(reader, bytes, 5), "");
    ASSERT_EQ(reader.stage(), RequestReader::Stage::Done);
    EXPECT_EQ(reader.request().body, "abcde");
}

// A byte at a time, as a trickling client sends it: the empty chunked body
// (the last chunk alone) once tripped Boost 1.81's parser in debug builds
// (the TSan build runs this test with its checks on).
TEST(RequestReader, AssemblesAnEmptyChunkedBodyArrivingAByteAtATime) {
    const std::string head = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (const std::string end : {"0\r\n\r\n", "0\r\nX-Trailer: 1\r\n\r\n"}) {
        RequestReader reader(small_limits());
        EXPECT_EQ(feed_in_pieces(reader, head + end, 1), "");
        ASSERT_EQ(reader.stage(), RequestReader::Stage::Done) << end;
        EXPECT_EQ(reader.request().body, "");
    }
}

TEST(RequestReader, RefusesAHeaderSectionOverTheLimitWith431) {
    RequestReader reader(small_limits());
    const std::string bytes = "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(2000, 'a');
    feed_in_pieces(reader, bytes, 100);  // never a blank line: the reader must give up itself
    ASSERT_EQ(reader.stage(), RequestReader::Stage::Failed);
    EXPECT_EQ(reader.error().status(), 431);
}

TEST(RequestReader, CountsAChunkedBodyAsItArrivesAnd413sPastTheLimit) {
    RequestReader reader(small_limits());
    std::string bytes = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (int i = 0; i < 10; ++i) bytes += "a\r\n0123456789\r\n";  // 100 bytes in all
    feed_in_pieces(reader, bytes, 7);
    ASSERT_EQ(reader.stage(), RequestReader::Stage::Failed);
    EXPECT_EQ(reader.error().status(), 413);
}

TEST(RequestReader, RefusesADeclaredLengthOverTheLimitBeforeTheBody) {
    RequestReader reader(small_limits());
    reader.feed("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 65\r\n\r\n");
    ASSERT_EQ(reader.stage(), RequestReader::Stage::Failed);
    EXPECT_EQ(reader.error().status(), 413);
}

TEST(RequestReader, RefusesCompressedBodiesAndOtherTransferCodings) {
    for (const char* coding : {"gzip", "deflate", "identity, br"}) {
        RequestReader reader(small_limits());
        reader.feed(std::string("POST / HTTP/1.1\r\nHost: x\r\nContent-Encoding: ") + coding +
                    "\r\nContent-Length: 1\r\n\r\n");
        ASSERT_EQ(reader.stage(), RequestReader::Stage::Failed) << coding;
        EXPECT_EQ(reader.error().status(), 415) << coding;
    }
    RequestReader identity(small_limits());
    identity.feed("POST / HTTP/1.1\r\nHost: x\r\nContent-Encoding: identity\r\n\r\n");
    EXPECT_EQ(identity.stage(), RequestReader::Stage::Done);
    RequestReader gzip_chunked(small_limits());
    gzip_chunked.feed("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n");
    ASSERT_EQ(gzip_chunked.stage(), RequestReader::Stage::Failed);
    EXPECT_EQ(gzip_chunked.error().status(), 501);
}

TEST(RequestReader, RefusesMalformedRequestsWith400) {
    for (const char* bytes : {
             "GET / HTTP/1.1\r\n\r\n",                        // no Host
             "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",  // two Hosts
             "GET nopath HTTP/1.1\r\nHost: x\r\n\r\n",        // not a path
             "GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n",          // bad escape
             "GET /a%00b HTTP/1.1\r\nHost: x\r\n\r\n",        // NUL
             "G\x01T / HTTP/1.1\r\nHost: x\r\n\r\n",          // bad method
             "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
             "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
         }) {
        RequestReader reader(small_limits());
        feed_in_pieces(reader, bytes, 1000);
        ASSERT_EQ(reader.stage(), RequestReader::Stage::Failed) << bytes;
        EXPECT_EQ(reader.error().status(), 400) << bytes;
    }
}

TEST(RequestReader, AnEndBeforeTheRequestIsCompleteIsMalformed) {
    RequestReader reader(small_limits());
    reader.feed("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc");
    reader.feed_end();
    ASSERT_EQ(reader.stage(), RequestReader::Stage::Failed);
    EXPECT_EQ(reader.error().status(), 400);
}

TEST(RequestReader, KnowsKeepAliveAndExpectContinue) {
    RequestReader close(small_limits());
    close.feed("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_FALSE(close.keep_alive());
    RequestReader old(small_limits());
    old.feed("GET / HTTP/1.0\r\n\r\n");
    EXPECT_EQ(old.stage(), RequestReader::Stage::Done) << "HTTP/1.0 needs no Host";
    EXPECT_FALSE(old.keep_alive());
    RequestReader expect(small_limits());
    expect.feed("POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n");
    EXPECT_TRUE(expect.expects_continue());
}

TEST(RequestTarget, SplitsPathAndQueryAndTakesTheAbsoluteForm) {
    std::string path;
    std::string query;
    ASSERT_TRUE(split_target("http://host:1/v1/models?a=b", path, query));
    EXPECT_EQ(path, "/v1/models");
    EXPECT_EQ(query, "a=b");
    ASSERT_TRUE(split_target("*", path, query));
    EXPECT_EQ(path, "*");
    EXPECT_FALSE(split_target("", path, query));
    EXPECT_FALSE(split_target("/%4", path, query));
}

}  // namespace
}  // namespace ladder::server
