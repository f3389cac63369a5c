// API-key checks: `Authorization: Bearer KEY` against the server's key,
// compared in time that does not depend on where the two differ.
#pragma once

#include <string>
#include <string_view>

#include "ladder/server/http_message.h"

namespace ladder::server {

// True when given equals secret. The time taken depends only on the
// secret's length, so a caller cannot find the key a byte at a time.
bool constant_time_equal(std::string_view given, std::string_view secret);

// Throws ApiError 401 unless the request carries the key (no key: anyone).
void require_api_key(const HttpRequest& request, const std::string& api_key);

}  // namespace ladder::server
