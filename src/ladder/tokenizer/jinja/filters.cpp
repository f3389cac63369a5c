#include "ladder/tokenizer/jinja/filters.h"

#include <algorithm>

#include "ladder/tokenizer/jinja/operations.h"
#include "ladder/tokenizer/jinja/python_string.h"

namespace ladder::tokenizer::jinja {

FilterFunction find_filter(std::string_view name) {
    for (const auto& table : {string_filters(), sequence_filters()}) {
        for (const FilterEntry& entry : table) {
            if (entry.name == name) return entry.function;
        }
    }
    return nullptr;
}

Value attribute_path(const Value& item, std::string_view path) {
    Value value = item;
    for (const std::string& part : py::split(path, std::string("."), -1)) {
        const bool is_index = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
            return c >= '0' && c <= '9';
        });
        value = is_index && part.size() < 18 ? get_item(value, Value::integer(std::stoll(part)))
                                             : get_item(value, Value::string(part));
    }
    return value;
}

}  // namespace ladder::tokenizer::jinja
