#include "ladder/engine/redis_address.h"

#include <charconv>

#include <fmt/format.h>

#include "ladder/util/error.h"

namespace ladder::engine {

namespace {

constexpr std::string_view kScheme = "redis://";

// A whole decimal number in [low, high], or -1.
int parse_number(std::string_view text, int low, int high) {
    int value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) return -1;
    return value >= low && value <= high ? value : -1;
}

}  // namespace

std::string RedisAddress::url() const { return fmt::format("redis://{}:{}/{}", host, port, db); }

RedisAddress parse_redis_url(std::string_view url) {
    auto refuse = [&](std::string_view why) -> RedisAddress {
        util::fail("--kv-remote '{}': {} (expected redis://HOST:PORT[/DB])", url, why);
    };
    if (!url.starts_with(kScheme)) return refuse("not a redis:// URL");
    std::string_view rest = url.substr(kScheme.size());
    if (rest.find('@') != std::string_view::npos)
        return refuse("credentials in the URL are not supported");
    RedisAddress address;
    if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
        const std::string_view db = rest.substr(slash + 1);
        if (!db.empty()) {
            address.db = parse_number(db, 0, 1 << 20);
            if (address.db < 0) return refuse("the database is not a number");
        }
        rest = rest.substr(0, slash);
    }
    if (const size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
        address.port = parse_number(rest.substr(colon + 1), 1, 65535);
        if (address.port < 0) return refuse("the port is not in 1..65535");
        rest = rest.substr(0, colon);
    }
    if (rest.empty()) return refuse("no host");
    address.host = std::string(rest);
    return address;
}

}  // namespace ladder::engine
