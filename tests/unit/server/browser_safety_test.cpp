// Browser safety: what a web page in the user's browser may and may not make
// a server on their machine do (DNS rebinding, cross-origin POSTs).
#include "ladder/server/browser_safety.h"

#include <gtest/gtest.h>

#include "ladder/server/api_error.h"

namespace ladder::server {
namespace {

HttpRequest request_with(std::initializer_list<std::pair<const char*, const char*>> headers,
                         const char* method = "GET") {
    HttpRequest request;
    request.method = method;
    request.path = "/v1/models";
    for (const auto& [name, value] : headers) request.headers.add(name, value);
    return request;
}

int status_of(const std::function<void()>& check) {
    try {
        check();
    } catch (const ApiError& error) {
        return error.status();
    }
    return 0;
}

TEST(BrowserSafety, NamesLoopback) {
    for (const char* host :
         {"localhost", "app.localhost", "127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"}) {
        EXPECT_TRUE(is_loopback_name(host)) << host;
    }
    for (const char* host : {"evil.example", "localhost.evil.example", "10.0.0.1", "128.0.0.1",
                             "::2", "0.0.0.0", ""}) {
        EXPECT_FALSE(is_loopback_name(host)) << host;
    }
    EXPECT_EQ(host_name_of("[::1]:8080"), "::1");
    EXPECT_EQ(host_name_of("LocalHost.:80"), "localhost");
    EXPECT_EQ(host_name_of("127.0.0.1"), "127.0.0.1");
}

TEST(BrowserSafety, OnLoopbackOnlyLoopbackHostsAreServed) {
    const BrowserPolicy policy{.loopback_listen = true, .allowed_hosts = {}, .allowed_origins = {}};
    for (const char* host : {"127.0.0.1:8080", "localhost", "[::1]:8080"}) {
        EXPECT_EQ(status_of([&] {
                      check_host(request_with({{"Host", host}}), policy);
                  }),
                  0)
            << host;
    }
    // A DNS-rebinding page reaches 127.0.0.1 under its own name.
    EXPECT_EQ(status_of([&] {
                  check_host(request_with({{"Host", "evil.example"}}), policy);
              }),
              403);
    EXPECT_EQ(status_of([&] {
                  check_host(request_with({{"Host", "evil.example:8080"}}), policy);
              }),
              403);
    const BrowserPolicy named{
        .loopback_listen = true, .allowed_hosts = {"box.lan"}, .allowed_origins = {}};
    EXPECT_EQ(status_of([&] { check_host(request_with({{"Host", "BOX.lan:8080"}}), named); }), 0);
    EXPECT_EQ(status_of([&] { check_host(request_with({{"Host", "evil.example"}}), named); }), 403);
}

TEST(BrowserSafety, OnOtherAddressesAnyHostUnlessSomeAreNamed) {
    const BrowserPolicy open{.loopback_listen = false, .allowed_hosts = {}, .allowed_origins = {}};
    EXPECT_EQ(status_of([&] { check_host(request_with({{"Host", "api.example"}}), open); }), 0);
    const BrowserPolicy named{
        .loopback_listen = false, .allowed_hosts = {"api.example"}, .allowed_origins = {}};
    EXPECT_EQ(status_of([&] { check_host(request_with({{"Host", "api.example"}}), named); }), 0);
    EXPECT_EQ(status_of([&] {
                  check_host(request_with({{"Host", "other.example"}}), named);
              }),
              403);
}

TEST(BrowserSafety, OriginsMustBeListedOrTheServersOwn) {
    const BrowserPolicy policy{
        .loopback_listen = true, .allowed_hosts = {}, .allowed_origins = {"http://localhost:3000"}};
    EXPECT_EQ(check_origin(request_with({{"Host", "127.0.0.1:8080"}}), policy), OriginCheck::None);
    EXPECT_EQ(
        check_origin(request_with({{"Host", "127.0.0.1:8080"}, {"Origin", "http://evil.example"}}),
                     policy),
        OriginCheck::Refused);
    EXPECT_EQ(check_origin(request_with({{"Host", "127.0.0.1:8080"}, {"Origin", "null"}}), policy),
              OriginCheck::Refused);
    EXPECT_EQ(check_origin(
                  request_with({{"Host", "127.0.0.1:8080"}, {"Origin", "http://localhost:3000"}}),
                  policy),
              OriginCheck::Allowed);
    // The server's own page (same scheme, host and port) may always call.
    EXPECT_EQ(check_origin(
                  request_with({{"Host", "127.0.0.1:8080"}, {"Origin", "http://127.0.0.1:8080"}}),
                  policy),
              OriginCheck::SameOrigin);
    EXPECT_EQ(check_origin(
                  request_with({{"Host", "127.0.0.1:8080"}, {"Origin", "http://127.0.0.1:8081"}}),
                  policy),
              OriginCheck::Refused);
    const BrowserPolicy any{.loopback_listen = true, .allowed_hosts = {}, .allowed_origins = {"*"}};
    EXPECT_EQ(check_origin(request_with({{"Host", "x"}, {"Origin", "https://a.example"}}), any),
              OriginCheck::Allowed);
}

TEST(BrowserSafety, APreflightGetsTheMethodsAndTheHeadersAskedFor) {
    HttpRequest request =
        request_with({{"Host", "127.0.0.1:8080"},
                      {"Origin", "http://localhost:3000"},
                      {"Access-Control-Request-Method", "POST"},
                      {"Access-Control-Request-Headers", "authorization,x-stainless-os"}},
                     "OPTIONS");
    ASSERT_TRUE(is_preflight(request));
    HttpResponse response;
    answer_preflight(request, {"POST"}, response);
    EXPECT_EQ(response.status, 204);
    EXPECT_EQ(response.headers.get("Access-Control-Allow-Origin"), "http://localhost:3000");
    EXPECT_EQ(response.headers.get("Access-Control-Allow-Methods"), "POST");
    EXPECT_EQ(response.headers.get("Access-Control-Allow-Headers"), "authorization,x-stainless-os");
    EXPECT_FALSE(is_preflight(request_with({{"Origin", "x"}}, "OPTIONS")));
}

TEST(BrowserSafety, APostMustBeJson) {
    const auto post = [](const char* content_type) {
        return status_of([&] {
            check_json_content_type(request_with({{"Content-Type", content_type}}, "POST"));
        });
    };
    EXPECT_EQ(post("application/json"), 0);
    EXPECT_EQ(post("Application/JSON; charset=utf-8"), 0);
    // What a form or a fetch() without a preflight can send.
    EXPECT_EQ(post("text/plain"), 415);
    EXPECT_EQ(post("application/x-www-form-urlencoded"), 415);
    EXPECT_EQ(post("multipart/form-data; boundary=x"), 415);
    EXPECT_EQ(post("application/jsonx"), 415);
    EXPECT_EQ(status_of([] { check_json_content_type(request_with({}, "POST")); }), 415);
    EXPECT_EQ(status_of([] { check_json_content_type(request_with({}, "GET")); }), 0);
}

}  // namespace
}  // namespace ladder::server
