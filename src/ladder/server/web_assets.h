// The built-in web page's files (src/ladder/server/web/ and Debian's
// JavaScript libraries), embedded in the binary at build time by
// cmake/embed_assets.cpp: the server needs no files and no network for it.
#pragma once

#include <span>
#include <string_view>

namespace ladder::server {

struct WebAsset {
    std::string_view url_path;      // "/" or "/ui/<name>"
    std::string_view content_type;  // with charset where it is text
    std::string_view bytes;
    std::string_view etag;  // quoted, a hash of bytes
};

std::span<const WebAsset> web_assets();

}  // namespace ladder::server
