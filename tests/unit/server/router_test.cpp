// Router: the checks every request passes on its header alone, in order,
// and errors from a route turned into OpenAI's shape.
#include "ladder/server/router.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ladder/server/api_error.h"

namespace ladder::server {
namespace {

// The router keeps a view of the keys: they outlive it.
const std::vector<ApiKey> kKeys{{"key", "tenant"}};

Router test_router() {
    Router router(kKeys, BrowserPolicy{.loopback_listen = true,
                                       .allowed_hosts = {},
                                       .allowed_origins = {"http://localhost:3000"}});
    router.get("/health", Router::Access::Public, [](const HttpRequest&, HttpResponse& response) {
        response.set_content("ok", "text/plain");
    });
    router.get(R"(/v1/models/(.+))", Router::Access::ApiKey,
               [](const HttpRequest& request, HttpResponse& response) {
                   response.set_content(request.path_params.at(0), "text/plain");
               });
    router.post("/v1/completions", Router::Access::ApiKey,
                [](const HttpRequest& request, HttpResponse&) {
                    if (request.body == "input") throw util::InputError("bad input");
                    if (request.body == "api") throw ApiError(429, "rate_limit_error", "busy");
                    throw std::runtime_error("a bug");
                });
    return router;
}

HttpRequest request_for(const char* method, const char* path,
                        std::initializer_list<std::pair<const char*, const char*>> headers = {}) {
    HttpRequest request;
    request.method = method;
    request.path = path;
    request.headers.add("Host", "127.0.0.1:8080");
    for (const auto& [name, value] : headers) request.headers.set(name, value);
    return request;
}

struct Screened {
    const Router::Route* route;
    HttpResponse answer;
    std::string code() const {
        return answer.body.empty()
                   ? ""
                   : nlohmann::json::parse(answer.body)["error"]["code"].get<std::string>();
    }
};

Screened screen(const Router& router, HttpRequest request) {
    Screened out{nullptr, {}};
    out.route = router.screen(request, out.answer);
    return out;
}

TEST(Router, FindsTheRouteAndItsPathParameters) {
    const Router router = test_router();
    HttpRequest request = request_for("GET", "/v1/models/smol", {{"Authorization", "Bearer key"}});
    HttpResponse answer;
    const Router::Route* route = router.screen(request, answer);
    ASSERT_NE(route, nullptr);
    EXPECT_TRUE(route->on_event_loop);
    HttpResponse response;
    router.run(*route, request, response);
    EXPECT_EQ(response.body, "smol");
    EXPECT_NE(screen(router, request_for("HEAD", "/health")).route, nullptr) << "HEAD is GET";
}

TEST(Router, RefusesOnTheHeaderInOrder) {
    const Router router = test_router();
    // Host first: a rebinding page learns nothing, not even which routes exist.
    EXPECT_EQ(screen(router, request_for("GET", "/nope", {{"Host", "evil.example"}})).code(),
              "host_not_allowed");
    EXPECT_EQ(
        screen(router, request_for("GET", "/health", {{"Origin", "http://evil.example"}})).code(),
        "origin_not_allowed");
    EXPECT_EQ(screen(router, request_for("GET", "/nope")).answer.status, 404);
    const Screened wrong_method = screen(router, request_for("DELETE", "/v1/completions"));
    EXPECT_EQ(wrong_method.answer.status, 405);
    EXPECT_EQ(wrong_method.answer.headers.get("Allow"), "POST");
    // A form post is refused before the key is even looked at.
    EXPECT_EQ(
        screen(router, request_for("POST", "/v1/completions", {{"Content-Type", "text/plain"}}))
            .answer.status,
        415);
    const Screened no_key = screen(
        router, request_for("POST", "/v1/completions", {{"Content-Type", "application/json"}}));
    EXPECT_EQ(no_key.answer.status, 401);
    EXPECT_NE(screen(router, request_for("POST", "/v1/completions",
                                         {{"Content-Type", "application/json"},
                                          {"Authorization", "Bearer key"}}))
                  .route,
              nullptr);
}

TEST(Router, AnswersPreflightsOnlyForAllowedOrigins) {
    const Router router = test_router();
    const Screened allowed =
        screen(router, request_for("OPTIONS", "/v1/completions",
                                   {{"Origin", "http://localhost:3000"},
                                    {"Access-Control-Request-Method", "POST"}}));
    EXPECT_EQ(allowed.route, nullptr);
    EXPECT_EQ(allowed.answer.status, 204);
    EXPECT_EQ(allowed.answer.headers.get("Access-Control-Allow-Origin"), "http://localhost:3000");
    const Screened refused =
        screen(router, request_for("OPTIONS", "/v1/completions",
                                   {{"Origin", "http://evil.example"},
                                    {"Access-Control-Request-Method", "POST"}}));
    EXPECT_EQ(refused.answer.status, 403);
    EXPECT_FALSE(refused.answer.headers.has("Access-Control-Allow-Origin"));
    const Screened plain = screen(router, request_for("OPTIONS", "/health"));
    EXPECT_EQ(plain.answer.status, 204);
    EXPECT_EQ(plain.answer.headers.get("Allow"), "GET, OPTIONS");
    // An allowed page reads the errors it gets too.
    const Screened error =
        screen(router, request_for("GET", "/nope", {{"Origin", "http://localhost:3000"}}));
    EXPECT_EQ(error.answer.status, 404);
    EXPECT_EQ(error.answer.headers.get("Access-Control-Allow-Origin"), "http://localhost:3000");
}

TEST(Router, TurnsWhatARouteThrowsIntoErrors) {
    const Router router = test_router();
    HttpRequest request =
        request_for("POST", "/v1/completions",
                    {{"Content-Type", "application/json"}, {"Authorization", "Bearer key"}});
    HttpResponse answer;
    const Router::Route* route = router.screen(request, answer);
    ASSERT_NE(route, nullptr);
    EXPECT_FALSE(route->on_event_loop);
    for (const auto& [body, status] :
         std::vector<std::pair<std::string, int>>{{"input", 400}, {"api", 429}, {"bug", 500}}) {
        request.body = body;
        HttpResponse response;
        router.run(*route, request, response);
        EXPECT_EQ(response.status, status) << body;
        EXPECT_TRUE(nlohmann::json::parse(response.body).contains("error")) << body;
    }
}

}  // namespace
}  // namespace ladder::server
