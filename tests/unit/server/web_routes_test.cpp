// The built-in web page's routes: the embedded files with their types,
// revalidation by ETag, a CSP of self only, and public access under a key.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "ladder/server/router.h"
#include "ladder/server/routes.h"
#include "ladder/server/web_assets.h"

namespace ladder::server {
namespace web_routes_test {

const std::vector<ApiKey> kKeys{{"key", "tenant"}};

Router web_router() {
    Router router(kKeys, BrowserPolicy{});
    add_web_routes(router);
    return router;
}

HttpResponse get(const Router& router, const char* path,
                 std::initializer_list<std::pair<const char*, const char*>> headers = {}) {
    HttpRequest request;
    request.method = "GET";
    request.path = path;
    request.headers.add("Host", "127.0.0.1:8080");
    for (const auto& [name, value] : headers) request.headers.set(name, value);
    HttpResponse response;
    const Router::Route* route = router.screen(request, response);
    if (route != nullptr) router.run(*route, request, response);
    return response;
}

TEST(WebRoutes, ServesThePageWithoutAKey) {
    const Router router = web_router();
    const HttpResponse page = get(router, "/");
    ASSERT_EQ(page.status, 200) << page.body;
    EXPECT_EQ(page.headers.get("Content-Type"), "text/html; charset=utf-8");
    EXPECT_NE(page.body.find("<script src=\"/ui/chat.js\""), std::string::npos);
    const std::string& policy = page.headers.get("Content-Security-Policy");
    EXPECT_NE(policy.find("default-src 'none'"), std::string::npos);
    EXPECT_NE(policy.find("script-src 'self';"), std::string::npos);
    EXPECT_NE(policy.find("connect-src 'self';"), std::string::npos);
    EXPECT_EQ(policy.find("unsafe"), std::string::npos) << policy;
    EXPECT_EQ(page.headers.get("X-Content-Type-Options"), "nosniff");
    EXPECT_EQ(page.headers.get("Cache-Control"), "no-cache");
}

TEST(WebRoutes, EveryFileTheyNameIsServedWithItsType) {
    const Router router = web_router();
    const std::map<std::string, std::string> expected_types{
        {"/ui/app.css", "text/css; charset=utf-8"},
        {"/ui/highlight.css", "text/css; charset=utf-8"},
        {"/ui/favicon.svg", "image/svg+xml"},
        {"/ui/marked.min.js", "text/javascript; charset=utf-8"},
        {"/ui/highlight.min.js", "text/javascript; charset=utf-8"},
        {"/ui/chart.min.js", "text/javascript; charset=utf-8"},
        {"/ui/main.js", "text/javascript; charset=utf-8"},
    };
    for (const auto& [path, type] : expected_types) {
        const HttpResponse response = get(router, path.c_str());
        EXPECT_EQ(response.status, 200) << path;
        EXPECT_EQ(response.headers.get("Content-Type"), type) << path;
        EXPECT_FALSE(response.body.empty()) << path;
    }
    // The page refers to nothing that is not embedded.
    const std::string page = get(router, "/").body;
    for (size_t at = page.find("/ui/"); at != std::string::npos; at = page.find("/ui/", at + 1)) {
        const std::string path = page.substr(at, page.find('"', at) - at);
        EXPECT_EQ(get(router, path.c_str()).status, 200) << path;
    }
    // The libraries are Debian's own files, byte for byte.
    EXPECT_NE(get(router, "/ui/chart.min.js").body.find("Chart.js v3"), std::string::npos);
}

TEST(WebRoutes, UnknownFilesAre404) {
    const Router router = web_router();
    const HttpResponse response = get(router, "/ui/nope.js");
    EXPECT_EQ(response.status, 404);
    EXPECT_EQ(nlohmann::json::parse(response.body)["error"]["code"], "not_found");
    EXPECT_EQ(get(router, "/ui/../etc/passwd").status, 404);
    EXPECT_EQ(get(router, "/index.html").status, 404);
}

TEST(WebRoutes, RevalidatesByETag) {
    const Router router = web_router();
    const HttpResponse first = get(router, "/ui/app.css");
    const std::string etag = first.headers.get("ETag");
    ASSERT_GE(etag.size(), 3u);
    EXPECT_EQ(etag.front(), '"');
    const HttpResponse again = get(router, "/ui/app.css", {{"If-None-Match", etag.c_str()}});
    EXPECT_EQ(again.status, 304);
    EXPECT_TRUE(again.body.empty());
    EXPECT_EQ(again.headers.get("ETag"), etag);
    EXPECT_EQ(get(router, "/ui/app.css", {{"If-None-Match", "\"other\""}}).status, 200);
    // Each file has its own tag: a changed file is fetched again.
    EXPECT_NE(get(router, "/ui/main.js").headers.get("ETag"), etag);
}

TEST(WebRoutes, ETagListsCompareWeakly) {
    EXPECT_TRUE(etag_matches("\"a\"", "\"a\""));
    EXPECT_TRUE(etag_matches("\"x\", W/\"a\"", "\"a\""));
    EXPECT_TRUE(etag_matches("*", "\"a\""));
    EXPECT_FALSE(etag_matches("", "\"a\""));
    EXPECT_FALSE(etag_matches("\"ab\"", "\"a\""));
    EXPECT_FALSE(etag_matches("a", "\"a\""));
}

TEST(WebRoutes, AssetsCarryDistinctPaths) {
    std::set<std::string_view> paths;
    for (const WebAsset& asset : web_assets()) {
        EXPECT_TRUE(paths.insert(asset.url_path).second) << asset.url_path;
        EXPECT_FALSE(asset.bytes.empty()) << asset.url_path;
    }
    EXPECT_TRUE(paths.contains("/"));
}

}  // namespace web_routes_test
}  // namespace ladder::server
