#include "ladder/server/auth.h"

#include <fstream>
#include <map>
#include <optional>

#include "ladder/server/api_error.h"
#include "ladder/server/http_message.h"

namespace ladder::server {

namespace {

// The credentials of "Bearer <token>", or nullopt for any other scheme.
std::optional<std::string_view> bearer_token(std::string_view authorization) {
    authorization = trim_ows(authorization);
    const size_t space = authorization.find_first_of(" \t");
    if (space == std::string_view::npos) return std::nullopt;
    if (!equals_ignoring_case(authorization.substr(0, space), "bearer")) return std::nullopt;
    return trim_ows(authorization.substr(space));
}

}  // namespace

std::vector<ApiKey> read_api_key_file(const std::string& path) {
    std::ifstream file(path);
    if (!file) util::fail("--api-key-file: cannot read '{}'", path);
    std::vector<ApiKey> keys;
    std::map<std::string, int> line_of_key;
    int line_number = 0;
    for (std::string line; std::getline(file, line);) {
        ++line_number;
        // A file written on Windows ends its lines with "\r\n".
        std::string_view text = line;
        if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
        text = trim_ows(text);
        if (text.empty() || text.front() == '#') continue;
        const size_t space = text.find_first_of(" \t");
        std::string key(text.substr(0, space));
        const std::string name(space == std::string_view::npos ? "" : trim_ows(text.substr(space)));
        if (const auto [it, fresh] = line_of_key.emplace(key, line_number); !fresh) {
            util::fail("--api-key-file: '{}' line {}: the key of line {} again", path, line_number,
                       it->second);
        }
        std::string tenant = name.empty() ? key : name;
        keys.push_back({std::move(key), std::move(tenant)});
    }
    if (keys.empty()) util::fail("--api-key-file: '{}' holds no key", path);
    return keys;
}

bool constant_time_equal(std::string_view given, std::string_view secret) {
    // Every byte of the secret is visited whatever the input; the lengths
    // are folded into the same accumulator instead of returning early.
    size_t difference = given.size() ^ secret.size();
    for (size_t i = 0; i < secret.size(); ++i) {
        const unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
        difference |= g ^ static_cast<unsigned char>(secret[i]);
    }
    return difference == 0;
}

const ApiKey* find_api_key(std::span<const ApiKey> keys, std::string_view authorization) {
    const std::optional<std::string_view> token = bearer_token(authorization);
    if (!token) return nullptr;
    const ApiKey* found = nullptr;
    for (const ApiKey& key : keys) {
        if (constant_time_equal(*token, key.key)) found = &key;
    }
    return found;
}

std::string authenticate(std::span<const ApiKey> keys, std::string_view authorization) {
    if (keys.empty()) return "";
    if (trim_ows(authorization).empty()) {
        throw ApiError(401, "invalid_request_error",
                       "missing API key: send the header 'Authorization: Bearer KEY'", "",
                       "invalid_api_key");
    }
    const ApiKey* key = find_api_key(keys, authorization);
    if (key == nullptr) {
        throw ApiError(401, "invalid_request_error", "incorrect API key provided", "",
                       "invalid_api_key");
    }
    return key->tenant;
}

}  // namespace ladder::server
