#include "ladder/server/auth.h"

#include <fstream>
#include <map>
#include <optional>

#include "ladder/server/api_error.h"

namespace ladder::server {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view trim(std::string_view text) {
    while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
    while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
    return text;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
        if (lower(a[i]) != lower(b[i])) return false;
    }
    return true;
}

// The credentials of "Bearer <token>", or nullopt for any other scheme.
std::optional<std::string_view> bearer_token(std::string_view authorization) {
    authorization = trim(authorization);
    const size_t space = authorization.find_first_of(" \t");
    if (space == std::string_view::npos) return std::nullopt;
    if (!equals_ignoring_case(authorization.substr(0, space), "bearer")) return std::nullopt;
    return trim(authorization.substr(space));
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
        const std::string_view text = trim(line);
        if (text.empty() || text.front() == '#') continue;
        const size_t space = text.find_first_of(" \t");
        std::string key(text.substr(0, space));
        const std::string name(space == std::string_view::npos ? "" : trim(text.substr(space)));
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
    if (trim(authorization).empty()) {
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
