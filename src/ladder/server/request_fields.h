// Reading a request's JSON body, where an absent field and an explicit null
// mean the same: "use the default".
#pragma once

#include <nlohmann/json.hpp>

namespace ladder::server {

// The field called name, or nullptr when it is absent or null.
inline const nlohmann::json* non_null_field(const nlohmann::json& body, const char* name) {
    const auto it = body.find(name);
    if (it == body.end() || it->is_null()) return nullptr;
    return &*it;
}

}  // namespace ladder::server
