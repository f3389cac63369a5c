// Where the remote KV tier's Redis is: `redis://HOST:PORT[/DB]` (the form
// `--kv-remote` takes; the port defaults to 6379, the database to 0).
#pragma once

#include <string>
#include <string_view>

namespace ladder::engine {

struct RedisAddress {
    std::string host;
    int port = 6379;
    int db = 0;

    // redis://host:port/db
    std::string url() const;
};

// Throws util::InputError naming --kv-remote for anything else (another
// scheme, a password, an empty host, a port or database out of range).
RedisAddress parse_redis_url(std::string_view url);

}  // namespace ladder::engine
