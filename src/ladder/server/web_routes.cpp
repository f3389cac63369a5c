// GET / and /ui/{file}: the built-in web page for chat and live metrics,
// from the assets embedded at build time (web_assets.h). The page and its
// files are public, like a login page: every API call the page makes carries
// the key the user typed. Same-origin only: the CSP lets the page load and
// call nothing but this server.
#include <fmt/format.h>

#include <string_view>

#include "ladder/server/api_error.h"
#include "ladder/server/routes.h"
#include "ladder/server/web_assets.h"

namespace ladder::server {

namespace {

// Scripts, styles, images and fetches from this origin only; no plugins, no
// <base>, no form posts, and no framing (clickjacking).
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'";

const WebAsset* find_asset(std::string_view path) {
    for (const WebAsset& asset : web_assets()) {
        if (asset.url_path == path) return &asset;
    }
    return nullptr;
}

}  // namespace

bool etag_matches(std::string_view if_none_match, std::string_view etag) {
    // A list of entity tags (RFC 9110 13.1.2), compared weakly: W/"x" is "x".
    size_t at = 0;
    while (at < if_none_match.size()) {
        size_t end = if_none_match.find(',', at);
        if (end == std::string_view::npos) end = if_none_match.size();
        std::string_view tag = if_none_match.substr(at, end - at);
        while (!tag.empty() && (tag.front() == ' ' || tag.front() == '\t')) tag.remove_prefix(1);
        while (!tag.empty() && (tag.back() == ' ' || tag.back() == '\t')) tag.remove_suffix(1);
        if (tag.starts_with("W/")) tag.remove_prefix(2);
        if (tag == "*" || tag == etag) return true;
        at = end + 1;
    }
    return false;
}

void add_web_routes(Router& router) {
    router.get(R"(/|/ui/[A-Za-z0-9._-]+)", Router::Access::Public,
               [](const HttpRequest& request, HttpResponse& response) {
                   const WebAsset* asset = find_asset(request.path);
                   if (asset == nullptr) {
                       throw ApiError(404, "invalid_request_error",
                                      fmt::format("no file {} in the web page", request.path), "",
                                      "not_found");
                   }
                   // Revalidated on every load (cheap: a 304), so a new binary's
                   // page is never mixed with an old one's scripts.
                   response.set_header("Cache-Control", "no-cache");
                   response.set_header("ETag", std::string(asset->etag));
                   response.set_header("Content-Security-Policy", kContentSecurityPolicy);
                   response.set_header("X-Content-Type-Options", "nosniff");
                   response.set_header("Referrer-Policy", "no-referrer");
                   if (etag_matches(request.get_header_value("If-None-Match"), asset->etag)) {
                       response.status = 304;
                       return;
                   }
                   response.set_content(std::string(asset->bytes),
                                        std::string(asset->content_type));
               });
}

}  // namespace ladder::server
