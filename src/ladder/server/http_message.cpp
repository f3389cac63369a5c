#include "ladder/server/http_message.h"

#include <algorithm>

namespace ladder::server {

namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

const std::string kEmpty;

}  // namespace

bool equals_ignoring_case(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                              [](char x, char y) { return lower(x) == lower(y); });
}

std::string_view trim_ows(std::string_view text) {
    const auto is_ows = [](char c) { return c == ' ' || c == '\t'; };
    while (!text.empty() && is_ows(text.front())) text.remove_prefix(1);
    while (!text.empty() && is_ows(text.back())) text.remove_suffix(1);
    return text;
}

const std::string& HttpHeaders::get(std::string_view name) const {
    for (const auto& [key, value] : fields_) {
        if (equals_ignoring_case(key, name)) return value;
    }
    return kEmpty;
}

bool HttpHeaders::has(std::string_view name) const { return count(name) > 0; }

size_t HttpHeaders::count(std::string_view name) const {
    return static_cast<size_t>(
        std::count_if(fields_.begin(), fields_.end(),
                      [&](const auto& field) { return equals_ignoring_case(field.first, name); }));
}

void HttpHeaders::add(std::string name, std::string value) {
    fields_.emplace_back(std::move(name), std::move(value));
}

void HttpHeaders::set(std::string name, std::string value) {
    std::erase_if(fields_,
                  [&](const auto& field) { return equals_ignoring_case(field.first, name); });
    fields_.emplace_back(std::move(name), std::move(value));
}

}  // namespace ladder::server
