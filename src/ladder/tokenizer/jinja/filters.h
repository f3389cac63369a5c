// jinja2's built-in filters that chat templates use, with jinja2's
// arguments and results, and transformers' tojson (json.dumps: no HTML
// escaping, indent, separators, sort_keys).
#pragma once

#include <span>
#include <string_view>

#include "ladder/tokenizer/jinja/ast.h"

namespace ladder::tokenizer::jinja {

struct FilterEntry {
    std::string_view name;
    FilterFunction function;
};

// nullptr for a filter that does not exist (or that ladder does not provide).
FilterFunction find_filter(std::string_view name);

// The two halves of the table (string_filters.cpp, sequence_filters.cpp).
std::span<const FilterEntry> string_filters();
std::span<const FilterEntry> sequence_filters();

// An item's attribute by a filter's attribute= path ("function.name",
// "items.0"): keys first, then attributes, as jinja2's attribute getters look.
Value attribute_path(const Value& item, std::string_view path);

}  // namespace ladder::tokenizer::jinja
