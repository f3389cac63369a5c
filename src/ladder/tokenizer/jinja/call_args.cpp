#include "ladder/tokenizer/jinja/call_args.h"

#include "ladder/tokenizer/jinja/error.h"

namespace ladder::tokenizer::jinja {

BoundArgs::BoundArgs(std::string_view function, const CallArgs& args,
                     std::initializer_list<std::string_view> parameters)
    : function_(function), names_(parameters), values_(parameters.size()) {
    if (args.positional.size() > names_.size()) {
        raise("{}() takes at most {} arguments ({} given)", function_, names_.size(),
              args.positional.size());
    }
    for (size_t i = 0; i < args.positional.size(); ++i) values_[i] = args.positional[i];
    for (const auto& [name, value] : args.keywords) {
        size_t i = 0;
        while (i < names_.size() && names_[i] != name) ++i;
        if (i == names_.size())
            raise("{}() got an unexpected keyword argument '{}'", function_, name);
        if (values_[i]) raise("{}() got multiple values for argument '{}'", function_, name);
        values_[i] = value;
    }
}

Value BoundArgs::get(size_t i, const Value& fallback) const {
    return values_[i] ? *values_[i] : fallback;
}

const Value& BoundArgs::require(size_t i) const {
    if (!values_[i]) raise("{}() missing required argument '{}'", function_, names_[i]);
    return *values_[i];
}

int64_t BoundArgs::integer(size_t i, int64_t fallback) const {
    if (!values_[i]) return fallback;
    if (!values_[i]->is_integral()) {
        raise("{}(): '{}' must be an integer, not {}", function_, names_[i],
              type_name(*values_[i]));
    }
    return values_[i]->as_int();
}

bool BoundArgs::boolean(size_t i, bool fallback) const {
    return values_[i] ? truthy(*values_[i]) : fallback;
}

std::optional<std::string> BoundArgs::string(size_t i) const {
    if (!values_[i] || values_[i]->is_none()) return std::nullopt;
    if (!values_[i]->is_string()) {
        raise("{}(): '{}' must be a string, not {}", function_, names_[i], type_name(*values_[i]));
    }
    return values_[i]->as_string();
}

}  // namespace ladder::tokenizer::jinja
