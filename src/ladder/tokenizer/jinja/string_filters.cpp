// The filters that work on one value: strings, numbers and tojson.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "ladder/tokenizer/jinja/call_args.h"
#include "ladder/tokenizer/jinja/error.h"
#include "ladder/tokenizer/jinja/filters.h"
#include "ladder/tokenizer/jinja/interpreter.h"
#include "ladder/tokenizer/jinja/json.h"
#include "ladder/tokenizer/jinja/methods.h"
#include "ladder/tokenizer/jinja/operations.h"
#include "ladder/tokenizer/jinja/python_string.h"

namespace ladder::tokenizer::jinja {
namespace {

Value built(Interpreter& interpreter, std::string text) {
    interpreter.budget().charge(text.size());
    return Value::string(std::move(text));
}

// Python's int(text): surrounding whitespace, a sign, digits with single
// underscores between them.
std::optional<int64_t> parse_int(const std::string& text, int base) {
    std::string digits;
    const std::string trimmed = py::strip(text, py::Side::Both, std::nullopt);
    size_t i = 0;
    bool negative = false;
    if (i < trimmed.size() && (trimmed[i] == '+' || trimmed[i] == '-'))
        negative = trimmed[i++] == '-';
    for (; i < trimmed.size(); ++i) {
        if (trimmed[i] == '_' && !digits.empty() && i + 1 < trimmed.size() && trimmed[i + 1] != '_')
            continue;
        digits += trimmed[i];
    }
    if (digits.empty()) return std::nullopt;
    int64_t value = 0;
    const auto result = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
    if (result.ec != std::errc{} || result.ptr != digits.data() + digits.size())
        return std::nullopt;
    return negative ? -value : value;
}

// Python's float(text).
std::optional<double> parse_float(const std::string& text) {
    const std::string trimmed = py::strip(text, py::Side::Both, std::nullopt);
    if (trimmed.empty()) return std::nullopt;
    std::string digits;
    for (char c : trimmed) {
        if (c != '_') digits += c;
    }
    char* end = nullptr;
    const double value = std::strtod(digits.c_str(), &end);
    if (end != digits.c_str() + digits.size()) return std::nullopt;
    return value;
}

std::optional<double> number_of(const Value& value) {
    if (value.is_number()) return value.as_double();
    if (value.is_string()) return parse_float(value.as_string());
    return std::nullopt;
}

Value filter_int(Interpreter&, const Value& value, CallArgs& args) {
    const BoundArgs bound("int", args, {"default", "base"});
    const Value fallback = bound.get(0, Value::integer(0));
    const int base = static_cast<int>(bound.integer(1, 10));
    if (value.is_integral()) return Value::integer(value.as_int());
    if (value.kind() == Value::Kind::Float) {
        const double d = value.as_double();
        if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) return fallback;
        return Value::integer(static_cast<int64_t>(d));
    }
    if (value.is_string()) {
        if (base >= 2 && base <= 36) {
            if (const auto n = parse_int(value.as_string(), base)) return Value::integer(*n);
        }
        // "42.23"|int is 42, as jinja2 has it.
        if (const auto d = parse_float(value.as_string());
            d && std::isfinite(*d) && std::fabs(*d) < 9.2e18) {
            return Value::integer(static_cast<int64_t>(*d));
        }
    }
    return fallback;
}

Value filter_float(Interpreter&, const Value& value, CallArgs& args) {
    const BoundArgs bound("float", args, {"default"});
    if (const auto d = number_of(value)) return Value::number(*d);
    return bound.get(0, Value::number(0.0));
}

Value filter_abs(Interpreter&, const Value& value, CallArgs& args) {
    BoundArgs("abs", args, {});
    if (value.kind() == Value::Kind::Float) return Value::number(std::fabs(value.as_double()));
    if (value.is_integral()) {
        if (value.as_int() == INT64_MIN) raise("integer overflow (the result is beyond 64 bits)");
        return Value::integer(std::llabs(value.as_int()));
    }
    raise("bad operand type for abs(): '{}'", type_name(value));
}

Value filter_round(Interpreter&, const Value& value, CallArgs& args) {
    const BoundArgs bound("round", args, {"precision", "method"});
    const int64_t precision = std::clamp<int64_t>(bound.integer(0, 0), -300, 300);
    const std::string method = bound.string(1).value_or("common");
    if (!value.is_number()) raise("must be real number, not {}", type_name(value));
    const double x = value.as_double();
    if (method == "common") {
        if (precision < 0 || !std::isfinite(x)) {
            const double scale = std::pow(10.0, static_cast<double>(-precision));
            return Value::number(std::nearbyint(x / scale) * scale);
        }
        // Formatting rounds the exact binary value half to even, as Python's round() does.
        return Value::number(std::strtod(fmt::format("{:.{}f}", x, precision).c_str(), nullptr));
    }
    if (method != "ceil" && method != "floor") raise("method must be common, ceil or floor");
    const double scale = std::pow(10.0, static_cast<double>(precision));
    return Value::number((method == "ceil" ? std::ceil(x * scale) : std::floor(x * scale)) / scale);
}

Value filter_default(Interpreter&, const Value& value, CallArgs& args) {
    const BoundArgs bound("default", args, {"default_value", "boolean"});
    const bool use_default = value.is_undefined() || (bound.boolean(1, false) && !truthy(value));
    return use_default ? bound.get(0, Value::string("")) : value;
}

// soft_str: a Markup input keeps its mark through the string filters.
Value like(const Value& input, std::string text) {
    return input.is_markup() ? Value::markup(std::move(text)) : Value::string(std::move(text));
}

Value filter_string(Interpreter&, const Value& value, CallArgs& args) {
    BoundArgs("string", args, {});
    return value.is_string() ? value : Value::string(to_str(value));
}

Value filter_safe(Interpreter&, const Value& value, CallArgs& args) {
    BoundArgs("safe", args, {});
    return value.is_markup() ? value : Value::markup(to_str(value));
}

Value filter_upper(Interpreter&, const Value& value, CallArgs& args) {
    BoundArgs("upper", args, {});
    return like(value, py::upper(to_str(value)));
}

Value filter_lower(Interpreter&, const Value& value, CallArgs& args) {
    BoundArgs("lower", args, {});
    return like(value, py::lower(to_str(value)));
}

Value filter_capitalize(Interpreter&, const Value& value, CallArgs& args) {
    BoundArgs("capitalize", args, {});
    return like(value, py::capitalize(to_str(value)));
}

Value filter_title(Interpreter&, const Value& value, CallArgs& args) {
    BoundArgs("title", args, {});
    return Value::string(py::title_words(to_str(value)));
}

Value filter_trim(Interpreter&, const Value& value, CallArgs& args) {
    const BoundArgs bound("trim", args, {"chars"});
    return like(value, py::strip(to_str(value), py::Side::Both, bound.string(0)));
}

Value filter_replace(Interpreter& interpreter, const Value& value, CallArgs& args) {
    const BoundArgs bound("replace", args, {"old", "new", "count"});
    const Value& count = bound.get(2, Value::none());
    return built(interpreter,
                 py::replace(to_str(value), to_str(bound.require(0)), to_str(bound.require(1)),
                             count.is_none() ? -1 : bound.integer(2, -1)));
}

Value filter_center(Interpreter& interpreter, const Value& value, CallArgs& args) {
    const BoundArgs bound("center", args, {"width"});
    CallArgs center_args;
    center_args.positional.push_back(Value::integer(bound.integer(0, 80)));
    return interpreter.call(find_method(like(value, to_str(value)), "center"), center_args);
}

// The jinja2 indent filter, blank lines and the first line as it treats them.
Value filter_indent(Interpreter& interpreter, const Value& value, CallArgs& args) {
    const BoundArgs bound("indent", args, {"width", "first", "blank"});
    const Value& width = bound.get(0, Value::integer(4));
    const std::string indentation =
        width.is_string()
            ? width.as_string()
            : std::string(static_cast<size_t>(std::clamp<int64_t>(bound.integer(0, 4), 0, 4096)),
                          ' ');
    const bool first = bound.boolean(1, false);
    const bool blank = bound.boolean(2, false);
    const std::vector<std::string> lines = py::splitlines(to_str(value) + "\n", false);
    std::string out;
    for (size_t i = 0; i < lines.size(); ++i) {
        if (i > 0) {
            out += "\n";
            if (blank || !lines[i].empty()) out += indentation;
        }
        out += lines[i];
        interpreter.budget().charge(out.size());
    }
    if (first) out = indentation + out;
    interpreter.budget().charge(out.size());
    return like(value, std::move(out));
}

Value filter_format(Interpreter& interpreter, const Value& value, CallArgs& args) {
    if (!args.positional.empty() && !args.keywords.empty()) {
        raise("can't handle positional and keyword arguments at the same time");
    }
    Value values;
    if (!args.keywords.empty()) {
        Dict dict;
        for (const auto& [name, keyword] : args.keywords) dict.set(Value::string(name), keyword);
        values = Value::dict(std::move(dict));
    } else {
        values = Value::tuple(args.positional);
    }
    return like(value,
                percent_format(interpreter.budget(), to_str(value), values, value.is_markup()));
}

Value filter_escape(Interpreter& interpreter, const Value& value, CallArgs& args) {
    BoundArgs("escape", args, {});
    if (value.is_markup()) return value;
    std::string text = html_escape(to_str(value));
    interpreter.budget().charge(text.size());
    return Value::markup(std::move(text));
}

Value filter_forceescape(Interpreter& interpreter, const Value& value, CallArgs& args) {
    BoundArgs("forceescape", args, {});
    std::string text = html_escape(to_str(value));
    interpreter.budget().charge(text.size());
    return Value::markup(std::move(text));
}

Value filter_truncate(Interpreter&, const Value& value, CallArgs& args) {
    const BoundArgs bound("truncate", args, {"length", "killwords", "end", "leeway"});
    const int64_t length = bound.integer(0, 255);
    const bool killwords = bound.boolean(1, false);
    const std::string end = bound.string(2).value_or("...");
    const int64_t leeway = bound.integer(3, 5);
    const std::vector<uint32_t> cps = py::code_points(to_str(value));
    const auto n = static_cast<int64_t>(cps.size());
    const auto end_length = static_cast<int64_t>(py::length(end));
    if (length < end_length) raise("expected length >= {}, got {}", end_length, length);
    if (leeway < 0) raise("expected leeway >= 0, got {}", leeway);
    if (n <= length + leeway) return value.is_string() ? value : Value::string(to_str(value));
    std::string head = py::from_code_points({cps.data(), static_cast<size_t>(length - end_length)});
    if (!killwords) head = py::rsplit(head, std::string(" "), 1).front();
    return Value::string(head + end);
}

Value filter_wordcount(Interpreter&, const Value& value, CallArgs& args) {
    BoundArgs("wordcount", args, {});
    int64_t words = 0;
    bool in_word = false;
    for (uint32_t cp : py::code_points(to_str(value))) {
        // \w: letters, digits and the underscore (anything beyond ASCII that
        // is not a space or punctuation of Latin-1 counts as a letter).
        const bool word = (cp < 0x80 && (std::isalnum(static_cast<int>(cp)) || cp == '_')) ||
                          (cp >= 0xC0 && !py::is_space(cp) && cp != 0xD7 && cp != 0xF7);
        if (word && !in_word) ++words;
        in_word = word;
    }
    return Value::integer(words);
}

Value filter_attr(Interpreter&, const Value& value, CallArgs& args) {
    const BoundArgs bound("attr", args, {"name"});
    const std::string name = to_str(bound.require(0));
    // Attributes only, never a dict's keys (unlike x.name).
    if (value.is_object()) return value.as_object().attribute(name);
    Value method = find_method(value, name);
    return method.is_undefined() && method.undefined_reason().empty()
               ? Value::undefined(fmt::format("'{}' has no attribute '{}'", type_name(value), name))
               : method;
}

// transformers' tojson: json.dumps(x, ensure_ascii=False, indent=None,
// separators=None, sort_keys=False).
Value filter_tojson(Interpreter& interpreter, const Value& value, CallArgs& args) {
    const BoundArgs bound("tojson", args, {"ensure_ascii", "indent", "separators", "sort_keys"});
    JsonDumpOptions options;
    options.ensure_ascii = bound.boolean(0, false);
    const Value& indent = bound.get(1, Value::none());
    if (indent.is_string()) {
        options.indent = indent.as_string();
    } else if (indent.is_integral()) {
        options.indent =
            std::string(static_cast<size_t>(std::clamp<int64_t>(indent.as_int(), 0, 256)), ' ');
    } else if (!indent.is_none()) {
        raise("tojson: indent must be an integer or a string, not {}", type_name(indent));
    }
    const Value& separators = bound.get(2, Value::none());
    if (!separators.is_none()) {
        if (!separators.is_list_or_tuple() || separators.items().size() != 2 ||
            !separators.items()[0].is_string() || !separators.items()[1].is_string()) {
            raise("tojson: separators must be a pair of strings");
        }
        options.item_separator = separators.items()[0].as_string();
        options.key_separator = separators.items()[1].as_string();
    }
    options.sort_keys = bound.boolean(3, false);
    return built(interpreter, to_json(value, options));
}

constexpr FilterEntry kStringFilters[] = {
    {"abs", filter_abs},
    {"attr", filter_attr},
    {"capitalize", filter_capitalize},
    {"center", filter_center},
    {"d", filter_default},
    {"default", filter_default},
    {"e", filter_escape},
    {"escape", filter_escape},
    {"float", filter_float},
    {"forceescape", filter_forceescape},
    {"format", filter_format},
    {"indent", filter_indent},
    {"int", filter_int},
    {"lower", filter_lower},
    {"replace", filter_replace},
    {"round", filter_round},
    {"safe", filter_safe},
    {"string", filter_string},
    {"title", filter_title},
    {"tojson", filter_tojson},
    {"trim", filter_trim},
    {"truncate", filter_truncate},
    {"upper", filter_upper},
    {"wordcount", filter_wordcount},
};

}  // namespace

std::span<const FilterEntry> string_filters() { return kStringFilters; }

}  // namespace ladder::tokenizer::jinja
