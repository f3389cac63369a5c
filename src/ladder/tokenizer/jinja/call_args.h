// The arguments of a call (a function, macro, method, filter or test) after
// evaluation, and their binding to named parameters the way Python binds them.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ladder/tokenizer/jinja/value.h"

namespace ladder::tokenizer::jinja {

struct CallArgs {
    std::vector<Value> positional;
    std::vector<std::pair<std::string, Value>> keywords;
};

// Binds CallArgs to a parameter list: positional first, then by name.
// Raises TemplateError for too many arguments, an unknown keyword or one given twice.
class BoundArgs {
public:
    BoundArgs(std::string_view function, const CallArgs& args,
              std::initializer_list<std::string_view> parameters);

    bool has(size_t i) const { return values_[i].has_value(); }
    // The argument, or `fallback` when it was not given.
    // By value: the fallback is often a temporary.
    Value get(size_t i, const Value& fallback) const;
    // The argument; raises naming it when it was not given.
    const Value& require(size_t i) const;
    // Typed accessors: raise when the argument has the wrong type.
    int64_t integer(size_t i, int64_t fallback) const;
    bool boolean(size_t i, bool fallback) const;
    std::optional<std::string> string(size_t i) const;  // nullopt: not given or none

private:
    std::string function_;
    std::vector<std::string_view> names_;
    std::vector<std::optional<Value>> values_;
};

}  // namespace ladder::tokenizer::jinja
