// API keys and whose they are: `Authorization: Bearer KEY` (the scheme in
// any case, as RFC 9110 has it) checked against every key in time that does
// not depend on where a guess differs. A key's tenant keeps its prefix cache
// apart from every other tenant's. Knows nothing of the HTTP library: the
// transport hands over the header's value.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ladder::server {

struct ApiKey {
    std::string key;
    // Who the key belongs to: the name given with it, else the key itself.
    // Keys with one name are one tenant (a key being rotated, say).
    std::string tenant;
};

// --api-key-file: one key per line, optionally followed by whitespace and a
// name; blank lines and lines starting with '#' are skipped. Throws
// util::InputError naming the file and line for an unreadable file, a key
// given twice, or a file with no key.
std::vector<ApiKey> read_api_key_file(const std::string& path);

// True when given equals secret. The time taken depends only on the
// secret's length, so a caller cannot find the key a byte at a time.
bool constant_time_equal(std::string_view given, std::string_view secret);

// The key an Authorization header value carries, or null. Every key is
// compared, whichever matches.
const ApiKey* find_api_key(std::span<const ApiKey> keys, std::string_view authorization);

// The caller's tenant: "" when the server has no keys. Throws ApiError 401
// when it has and the header carries none of them.
std::string authenticate(std::span<const ApiKey> keys, std::string_view authorization);

}  // namespace ladder::server
