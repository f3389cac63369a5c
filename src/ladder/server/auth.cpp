#include "ladder/server/auth.h"

#include "ladder/server/api_error.h"

namespace ladder::server {

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

void require_api_key(const HttpRequest& request, const std::string& api_key) {
    if (api_key.empty()) return;
    const std::string header = request.get_header_value("Authorization");
    constexpr std::string_view kScheme = "Bearer ";
    if (header.empty()) {
        throw ApiError(401, "invalid_request_error",
                       "missing API key: send the header 'Authorization: Bearer KEY'", "",
                       "invalid_api_key");
    }
    const bool bearer = header.size() > kScheme.size() &&
                        std::string_view(header).substr(0, kScheme.size()) == kScheme;
    const std::string_view given =
        bearer ? std::string_view(header).substr(kScheme.size()) : std::string_view();
    if (!bearer || !constant_time_equal(given, api_key)) {
        throw ApiError(401, "invalid_request_error", "incorrect API key provided", "",
                       "invalid_api_key");
    }
}

}  // namespace ladder::server
