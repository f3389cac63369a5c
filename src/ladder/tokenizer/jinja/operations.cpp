#include "ladder/tokenizer/jinja/operations.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include "ladder/tokenizer/jinja/error.h"
#include "ladder/tokenizer/jinja/methods.h"
#include "ladder/tokenizer/jinja/objects.h"
#include "ladder/tokenizer/jinja/python_string.h"
#include "ladder/tokenizer/utf8.h"

namespace ladder::tokenizer::jinja {
namespace {

// jinja2's name for the object in "... has no attribute" messages.
std::string object_description(const Value& value) {
    if (value.is_none()) return "None";
    return type_name(value) + " object";
}

Value missing_attribute(const Value& object, const std::string& name) {
    return Value::undefined(
        fmt::format("'{}' has no attribute '{}'", object_description(object), name));
}

Value missing_item(const Value& object, const Value& key) {
    return Value::undefined(
        fmt::format("'{}' has no element {}", object_description(object), repr(key)));
}

// Python's index normalisation for a[i]: nullopt when out of range.
std::optional<size_t> index_in(int64_t index, size_t size) {
    const int64_t n = static_cast<int64_t>(size);
    if (index < 0) index += n;
    if (index < 0 || index >= n) return std::nullopt;
    return static_cast<size_t>(index);
}

// slice.indices(): the positions a[start:stop:step] visits.
std::vector<size_t> slice_positions(size_t size, const Value& start_value, const Value& stop_value,
                                    const Value& step_value) {
    const auto integer_or = [](const Value& v, int64_t fallback) {
        if (v.is_undefined() || v.is_none()) return fallback;
        if (!v.is_integral()) raise("slice indices must be integers or None");
        return v.as_int();
    };
    const int64_t n = static_cast<int64_t>(size);
    const int64_t step = integer_or(step_value, 1);
    if (step == 0) raise("slice step cannot be zero");
    const auto clamp = [&](int64_t i) {
        if (i < 0) i += n;
        return step > 0 ? std::clamp<int64_t>(i, 0, n) : std::clamp<int64_t>(i, -1, n - 1);
    };
    const int64_t start = (start_value.is_undefined() || start_value.is_none())
                              ? (step > 0 ? 0 : n - 1)
                              : clamp(integer_or(start_value, 0));
    const int64_t stop = (stop_value.is_undefined() || stop_value.is_none())
                             ? (step > 0 ? n : -1)
                             : clamp(integer_or(stop_value, 0));
    std::vector<size_t> positions;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
        positions.push_back(static_cast<size_t>(i));
    }
    return positions;
}

[[noreturn]] void overflow() { raise("integer overflow (the result is beyond 64 bits)"); }

int64_t checked_add(int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) overflow();
    return r;
}

int64_t checked_sub(int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_sub_overflow(a, b, &r)) overflow();
    return r;
}

int64_t checked_mul(int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) overflow();
    return r;
}

int64_t floor_div(int64_t a, int64_t b) {
    if (a == INT64_MIN && b == -1) overflow();
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
    if (b == -1) return 0;
    const int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

Value integer_power(int64_t base, int64_t exponent) {
    if (exponent < 0)
        return Value::number(std::pow(static_cast<double>(base), static_cast<double>(exponent)));
    int64_t result = 1;
    int64_t factor = base;
    while (exponent > 0) {
        if (exponent & 1) result = checked_mul(result, factor);
        exponent >>= 1;
        if (exponent > 0) factor = checked_mul(factor, factor);
    }
    return Value::integer(result);
}

Value repeat(Budget& budget, const Value& sequence, int64_t times) {
    if (times <= 0) {
        return sequence.is_string()
                   ? Value::string("")
                   : (sequence.kind() == Value::Kind::Tuple ? Value::tuple({}) : Value::list({}));
    }
    if (sequence.is_string()) {
        const std::string& text = sequence.as_string();
        if (!text.empty() &&
            static_cast<uint64_t>(times) > budget.limits().max_output_bytes / text.size()) {
            budget.charge(budget.limits().max_output_bytes + 1);
        }
        budget.charge(text.size() * static_cast<size_t>(times));
        std::string out;
        out.reserve(text.size() * static_cast<size_t>(times));
        for (int64_t i = 0; i < times; ++i) out += text;
        return sequence.is_markup() ? Value::markup(std::move(out)) : Value::string(std::move(out));
    }
    const auto& items = sequence.items();
    if (!items.empty() &&
        static_cast<uint64_t>(times) > budget.limits().max_output_bytes / items.size()) {
        budget.charge(budget.limits().max_output_bytes + 1);
    }
    budget.charge(items.size() * static_cast<size_t>(times) * sizeof(Value));
    std::vector<Value> out;
    for (int64_t i = 0; i < times; ++i) out.insert(out.end(), items.begin(), items.end());
    return sequence.kind() == Value::Kind::Tuple ? Value::tuple(std::move(out))
                                                 : Value::list(std::move(out));
}

[[noreturn]] void unsupported(std::string_view op, const Value& a, const Value& b) {
    raise("unsupported operand type(s) for {}: '{}' and '{}'", op, type_name(a), type_name(b));
}

Value add(Budget& budget, const Value& a, const Value& b) {
    if (a.is_number() && b.is_number()) {
        if (a.is_integral() && b.is_integral())
            return Value::integer(checked_add(a.as_int(), b.as_int()));
        return Value::number(a.as_double() + b.as_double());
    }
    if (a.is_string() && b.is_string()) {
        if (a.is_markup() || b.is_markup()) {
            std::string text = escaped_text(a) + escaped_text(b);
            budget.charge(text.size());
            return Value::markup(std::move(text));
        }
        budget.charge(a.as_string().size() + b.as_string().size());
        return Value::string(a.as_string() + b.as_string());
    }
    if (a.kind() == b.kind() && a.is_list_or_tuple()) {
        budget.charge((a.items().size() + b.items().size()) * sizeof(Value));
        std::vector<Value> items = a.items();
        items.insert(items.end(), b.items().begin(), b.items().end());
        return a.kind() == Value::Kind::Tuple ? Value::tuple(std::move(items))
                                              : Value::list(std::move(items));
    }
    if (a.is_string() || a.is_list_or_tuple()) {
        raise("can only concatenate {} (not \"{}\") to {}", type_name(a), type_name(b),
              type_name(a));
    }
    unsupported("+", a, b);
}

Value arithmetic(Budget& budget, std::string_view op, const Value& a, const Value& b) {
    if (op == "*") {
        if (a.is_integral() && (b.is_string() || b.is_list_or_tuple()))
            return repeat(budget, b, a.as_int());
        if (b.is_integral() && (a.is_string() || a.is_list_or_tuple()))
            return repeat(budget, a, b.as_int());
    }
    if (op == "%" && a.is_string()) {
        std::string text = percent_format(budget, a.as_string(), b, a.is_markup());
        return a.is_markup() ? Value::markup(std::move(text)) : Value::string(std::move(text));
    }
    if (!a.is_number() || !b.is_number()) unsupported(op, a, b);
    const bool integers = a.is_integral() && b.is_integral();
    if (op == "/") {
        if (b.as_double() == 0.0) raise("division by zero");
        return Value::number(a.as_double() / b.as_double());
    }
    if (op == "**") {
        if (integers) return integer_power(a.as_int(), b.as_int());
        return Value::number(std::pow(a.as_double(), b.as_double()));
    }
    if ((op == "//" || op == "%") && b.as_double() == 0.0) {
        raise("{}", op == "%" ? "integer modulo by zero" : "integer division or modulo by zero");
    }
    if (integers) {
        if (op == "-") return Value::integer(checked_sub(a.as_int(), b.as_int()));
        if (op == "*") return Value::integer(checked_mul(a.as_int(), b.as_int()));
        if (op == "//") return Value::integer(floor_div(a.as_int(), b.as_int()));
        return Value::integer(floor_mod(a.as_int(), b.as_int()));
    }
    const double x = a.as_double();
    const double y = b.as_double();
    if (op == "-") return Value::number(x - y);
    if (op == "*") return Value::number(x * y);
    if (op == "//") return Value::number(std::floor(x / y));
    const double r = std::fmod(x, y);  // Python's % takes the divisor's sign
    return Value::number(r != 0.0 && ((r < 0) != (y < 0)) ? r + y : r);
}

// One conversion of percent_format: %[flags][width][.precision]type.
std::string format_one(char type, const std::string& flags, int width, int precision,
                       const Value& value, bool escape_text) {
    if (type != 's' && type != 'r' && type != 'a' && type != 'c') {
        if (!value.is_number()) {
            raise("%{} format: a real number is required, not {}", type, type_name(value));
        }
        // Python formats numbers as C's printf does.
        std::string spec = "%" + flags;
        if (width > 0) spec += std::to_string(width);
        if (precision >= 0) spec += fmt::format(".{}", precision);
        char buffer[1024];
        if (type == 'd' || type == 'i' || type == 'u' || type == 'x' || type == 'X' ||
            type == 'o') {
            const long long n = value.kind() == Value::Kind::Float
                                    ? static_cast<long long>(std::trunc(value.as_double()))
                                    : static_cast<long long>(value.as_int());
            spec += type == 'i' || type == 'u' ? std::string("lld") : std::string("ll") + type;
            std::snprintf(buffer, sizeof(buffer), spec.c_str(), n);
        } else {
            spec += type;
            std::snprintf(buffer, sizeof(buffer), spec.c_str(), value.as_double());
        }
        return buffer;
    }
    std::string text;
    if (type == 'c') {
        if (value.is_string() && py::length(value.as_string()) == 1) {
            text = value.as_string();
        } else if (value.is_integral() && value.as_int() >= 0 && value.as_int() <= 0x10FFFF) {
            utf8::append(text, static_cast<uint32_t>(value.as_int()));
        } else {
            raise("%c requires an int or a single character");
        }
    } else {
        text = type == 's' ? to_str(value) : repr(value);
        if (escape_text && !value.is_markup()) text = html_escape(text);
        const std::vector<uint32_t> cps = py::code_points(text);
        if (precision >= 0 && static_cast<size_t>(precision) < cps.size()) {
            text = py::from_code_points({cps.data(), static_cast<size_t>(precision)});
        }
    }
    const size_t n = py::length(text);
    if (width > 0 && static_cast<size_t>(width) > n) {
        const std::string pad(static_cast<size_t>(width) - n, ' ');
        text = flags.find('-') != std::string::npos ? text + pad : pad + text;
    }
    return text;
}

}  // namespace

std::string html_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&#34;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::string escaped_text(const Value& value) {
    return value.is_markup() ? value.as_string() : html_escape(to_str(value));
}

void require_defined(const Value& value) {
    if (value.is_undefined()) raise("{}", value.undefined_reason());
}

Value get_attribute(const Value& object, const std::string& name) {
    require_defined(object);
    if (object.is_object()) return object.as_object().attribute(name);
    Value method = find_method(object, name);
    if (!method.is_undefined() || !method.undefined_reason().empty()) return method;
    if (object.is_dict()) {
        if (const Value* value = object.as_dict().find(name)) return *value;
    }
    return missing_attribute(object, name);
}

Value get_item(const Value& object, const Value& key) {
    require_defined(object);
    switch (object.kind()) {
        case Value::Kind::Dict:
            if (const Value* value = object.as_dict().find(key)) return *value;
            break;
        case Value::Kind::List:
        case Value::Kind::Tuple:
            if (key.is_integral()) {
                const auto i = index_in(key.as_int(), object.items().size());
                return i ? object.items()[*i] : missing_item(object, key);
            }
            break;
        case Value::Kind::String:
            if (key.is_integral()) {
                const std::vector<uint32_t> cps = py::code_points(object.as_string());
                const auto i = index_in(key.as_int(), cps.size());
                if (!i) return missing_item(object, key);
                std::string character = py::from_code_points({&cps[*i], 1});
                return object.is_markup() ? Value::markup(std::move(character))
                                          : Value::string(std::move(character));
            }
            break;
        default:
            break;
    }
    if (key.is_string()) return get_attribute(object, key.as_string());
    return missing_item(object, key);
}

Value get_slice(Budget& budget, const Value& object, const Value& start, const Value& stop,
                const Value& step) {
    require_defined(object);
    if (object.is_string()) {
        const std::vector<uint32_t> cps = py::code_points(object.as_string());
        std::vector<uint32_t> out;
        for (size_t i : slice_positions(cps.size(), start, stop, step)) out.push_back(cps[i]);
        budget.charge(out.size());
        std::string text = py::from_code_points(out);
        return object.is_markup() ? Value::markup(std::move(text)) : Value::string(std::move(text));
    }
    if (object.is_list_or_tuple()) {
        std::vector<Value> out;
        for (size_t i : slice_positions(object.items().size(), start, stop, step))
            out.push_back(object.items()[i]);
        budget.charge(out.size() * sizeof(Value));
        return object.kind() == Value::Kind::Tuple ? Value::tuple(std::move(out))
                                                   : Value::list(std::move(out));
    }
    raise("'{}' object is not subscriptable", type_name(object));
}

std::vector<Value> iterate(const Value& value) {
    switch (value.kind()) {
        case Value::Kind::Undefined:
            return {};
        case Value::Kind::List:
        case Value::Kind::Tuple:
            return value.items();
        case Value::Kind::Dict: {
            std::vector<Value> keys;
            for (const auto& entry : value.as_dict().entries()) keys.push_back(entry.first);
            return keys;
        }
        case Value::Kind::String: {
            std::vector<Value> characters;
            for (uint32_t cp : py::code_points(value.as_string())) {
                characters.push_back(Value::string(py::from_code_points({&cp, 1})));
            }
            return characters;
        }
        case Value::Kind::Object:
            if (auto* iterator = dynamic_cast<Iterator*>(&value.as_object()))
                return iterator->take_all();
            [[fallthrough]];
        default:
            raise("'{}' object is not iterable", type_name(value));
    }
}

int64_t length(const Value& value) {
    switch (value.kind()) {
        case Value::Kind::Undefined:
            return 0;
        case Value::Kind::String:
            return static_cast<int64_t>(py::length(value.as_string()));
        case Value::Kind::List:
        case Value::Kind::Tuple:
            return static_cast<int64_t>(value.items().size());
        case Value::Kind::Dict:
            return static_cast<int64_t>(value.as_dict().size());
        default:
            raise("object of type '{}' has no len()", type_name(value));
    }
}

bool contains(const Value& container, const Value& item) {
    switch (container.kind()) {
        case Value::Kind::Undefined:
            return false;
        case Value::Kind::String:
            if (!item.is_string()) {
                raise("'in <string>' requires string as left operand, not {}", type_name(item));
            }
            return container.as_string().find(item.as_string()) != std::string::npos;
        case Value::Kind::List:
        case Value::Kind::Tuple:
            for (const Value& element : container.items()) {
                if (equals(element, item)) return true;
            }
            return false;
        case Value::Kind::Dict:
            return container.as_dict().find(item) != nullptr;
        case Value::Kind::Object:
            // `in` consumes an iterator up to the item found.
            if (auto* iterator = dynamic_cast<Iterator*>(&container.as_object())) {
                while (const std::optional<Value> next = iterator->take_one()) {
                    if (equals(*next, item)) return true;
                }
                return false;
            }
            [[fallthrough]];
        default:
            raise("argument of type '{}' is not iterable", type_name(container));
    }
}

Value binary_operation(Budget& budget, std::string_view op, const Value& a, const Value& b) {
    if (op == "~") {
        std::string text = to_str(a);
        const std::string right = to_str(b);
        budget.charge(text.size() + right.size());
        return Value::string(text + right);
    }
    require_defined(a);
    require_defined(b);
    if (op == "+") return add(budget, a, b);
    return arithmetic(budget, op, a, b);
}

Value unary_operation(std::string_view op, const Value& operand) {
    require_defined(operand);
    if (!operand.is_number()) raise("bad operand type for unary {}: '{}'", op, type_name(operand));
    if (operand.kind() == Value::Kind::Float) {
        return Value::number(op == "-" ? -operand.as_double() : operand.as_double());
    }
    if (op == "+") return Value::integer(operand.as_int());
    if (operand.as_int() == INT64_MIN) overflow();
    return Value::integer(-operand.as_int());
}

std::string percent_format(Budget& budget, const std::string& format, const Value& args,
                           bool escape_args) {
    const std::vector<Value> positional =
        args.kind() == Value::Kind::Tuple ? args.items() : std::vector<Value>{args};
    size_t next = 0;
    std::string out;
    for (size_t i = 0; i < format.size(); ++i) {
        if (format[i] != '%') {
            out += format[i];
            continue;
        }
        if (++i >= format.size()) raise("incomplete format");
        if (format[i] == '%') {
            out += '%';
            continue;
        }
        const Value* value = nullptr;
        if (format[i] == '(') {
            const size_t close = format.find(')', i);
            if (close == std::string::npos) raise("incomplete format key");
            if (!args.is_dict()) raise("format requires a mapping");
            value = args.as_dict().find(std::string_view(format).substr(i + 1, close - i - 1));
            if (value == nullptr)
                raise("format key '{}' not found", format.substr(i + 1, close - i - 1));
            i = close + 1;
        }
        std::string flags;
        while (i < format.size() &&
               std::string_view("-+ 0#").find(format[i]) != std::string_view::npos) {
            flags += format[i++];
        }
        int width = 0;
        while (i < format.size() && std::isdigit(static_cast<unsigned char>(format[i]))) {
            width = std::min(width * 10 + (format[i++] - '0'), 4096);
        }
        int precision = -1;
        if (i < format.size() && format[i] == '.') {
            precision = 0;
            while (++i < format.size() && std::isdigit(static_cast<unsigned char>(format[i]))) {
                precision = std::min(precision * 10 + (format[i] - '0'), 256);
            }
        }
        if (i >= format.size() ||
            std::string_view("sradiuxXofFeEgGc").find(format[i]) == std::string_view::npos) {
            raise("unsupported format character in '{}'", format);
        }
        if (value == nullptr) {
            if (next >= positional.size()) raise("not enough arguments for format string");
            value = &positional[next++];
        }
        std::string piece = format_one(format[i], flags, width, precision, *value, escape_args);
        budget.charge(out.size() + piece.size());
        out += piece;
    }
    if (!args.is_dict() && next < positional.size()) {
        raise("not all arguments converted during string formatting");
    }
    return out;
}

}  // namespace ladder::tokenizer::jinja
