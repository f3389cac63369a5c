#include "ladder/tokenizer/jinja/methods.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "ladder/tokenizer/jinja/call_args.h"
#include "ladder/tokenizer/jinja/error.h"
#include "ladder/tokenizer/jinja/interpreter.h"
#include "ladder/tokenizer/jinja/operations.h"
#include "ladder/tokenizer/jinja/python_string.h"
#include "ladder/tokenizer/utf8.h"

namespace ladder::tokenizer::jinja {
namespace {

using Method = Value (*)(Interpreter&, const Value& self, CallArgs& args);

struct MethodEntry {
    std::string_view name;
    Method method;
};

// Markup's methods that escape their string arguments and return Markup.
constexpr std::array<std::string_view, 20> kMarkupMethods = {
    "capitalize", "center",  "format", "join",       "ljust",  "lower",   "lstrip",
    "partition",  "replace", "rjust",  "rpartition", "rsplit", "rstrip",  "split",
    "splitlines", "strip",   "title",  "upper",      "zfill",  "casefold"};

Value escaped(const Value& value) {
    return value.is_string() && !value.is_markup() ? Value::markup(html_escape(value.as_string()))
                                                   : value;
}

Value marked(const Value& value) {
    if (value.is_string()) return Value::markup(value.as_string());
    if (!value.is_list_or_tuple()) return value;
    std::vector<Value> items;
    for (const Value& item : value.items()) items.push_back(marked(item));
    return value.kind() == Value::Kind::Tuple ? Value::tuple(std::move(items))
                                              : Value::list(std::move(items));
}

class BoundMethod : public Object {
public:
    BoundMethod(Value self, std::string_view name, Method method)
        : self_(std::move(self)), name_(name), method_(method) {}

    std::string type_name() const override { return "builtin_function_or_method"; }
    std::string repr() const override {
        return fmt::format("<built-in method {} of {} object>", name_, jinja::type_name(self_));
    }
    bool is_callable() const override { return true; }
    Value call(Interpreter& interpreter, CallArgs& args) override {
        if (!self_.is_markup() || std::find(kMarkupMethods.begin(), kMarkupMethods.end(), name_) ==
                                      kMarkupMethods.end()) {
            return method_(interpreter, self_, args);
        }
        for (Value& arg : args.positional) arg = escaped(arg);
        for (auto& keyword : args.keywords) keyword.second = escaped(keyword.second);
        if (name_ == "join" && !args.positional.empty()) {
            std::vector<Value> items;
            for (const Value& item : iterate(args.positional[0])) items.push_back(escaped(item));
            args.positional[0] = Value::list(std::move(items));
        }
        return marked(method_(interpreter, self_, args));
    }

private:
    Value self_;
    std::string_view name_;
    Method method_;
};

Value string_list(Interpreter& interpreter, std::vector<std::string> parts) {
    std::vector<Value> items;
    items.reserve(parts.size());
    size_t bytes = 0;
    for (std::string& part : parts) {
        bytes += part.size();
        items.push_back(Value::string(std::move(part)));
    }
    interpreter.budget().charge(bytes + items.size() * sizeof(Value));
    return Value::list(std::move(items));
}

Value built_string(Interpreter& interpreter, std::string text) {
    interpreter.budget().charge(text.size());
    return Value::string(std::move(text));
}

// ---- str ----

Value str_strip(py::Side side, std::string_view function, const Value& self, CallArgs& args) {
    const BoundArgs bound(function, args, {"chars"});
    return Value::string(py::strip(self.as_string(), side, bound.string(0)));
}

Value str_split(Interpreter& interpreter, const Value& self, CallArgs& args, bool from_right) {
    const BoundArgs bound(from_right ? "rsplit" : "split", args, {"sep", "maxsplit"});
    const std::optional<std::string> sep = bound.string(0);
    if (sep && sep->empty()) raise("empty separator");
    const int64_t maxsplit = bound.integer(1, -1);
    return string_list(interpreter, from_right ? py::rsplit(self.as_string(), sep, maxsplit)
                                               : py::split(self.as_string(), sep, maxsplit));
}

// startswith/endswith: a prefix or a tuple of them.
Value str_affix(const Value& self, CallArgs& args, bool at_start) {
    const BoundArgs bound(at_start ? "startswith" : "endswith", args, {"affix"});
    const Value& affix = bound.require(0);
    const std::string& text = self.as_string();
    const auto matches = [&](const Value& candidate) {
        if (!candidate.is_string()) {
            raise("{} arg must be str or a tuple of str, not {}",
                  at_start ? "startswith" : "endswith", type_name(candidate));
        }
        return at_start ? text.starts_with(candidate.as_string())
                        : text.ends_with(candidate.as_string());
    };
    if (affix.kind() == Value::Kind::Tuple) {
        return Value::boolean(std::any_of(affix.items().begin(), affix.items().end(), matches));
    }
    return Value::boolean(matches(affix));
}

std::string required_string(const BoundArgs& bound, size_t i) {
    const Value& value = bound.require(i);
    if (!value.is_string()) raise("expected a string argument, not {}", type_name(value));
    return value.as_string();
}

Value str_replace(Interpreter& interpreter, const Value& self, CallArgs& args) {
    const BoundArgs bound("replace", args, {"old", "new", "count"});
    return built_string(interpreter, py::replace(self.as_string(), required_string(bound, 0),
                                                 required_string(bound, 1), bound.integer(2, -1)));
}

Value str_find(const Value& self, CallArgs& args, bool from_right, bool raise_if_missing) {
    const BoundArgs bound("find", args, {"sub"});
    const std::string sub = required_string(bound, 0);
    const int64_t at =
        from_right ? py::rfind(self.as_string(), sub) : py::find(self.as_string(), sub);
    if (at < 0 && raise_if_missing) raise("substring not found");
    return Value::integer(at);
}

Value str_join(Interpreter& interpreter, const Value& self, CallArgs& args) {
    const BoundArgs bound("join", args, {"iterable"});
    std::string out;
    bool first = true;
    for (const Value& item : iterate(bound.require(0))) {
        if (!item.is_string())
            raise("sequence item: expected str instance, {} found", type_name(item));
        if (!first) out += self.as_string();
        first = false;
        out += item.as_string();
        interpreter.budget().charge(out.size());
    }
    return Value::string(std::move(out));
}

// A str.format replacement field's spec: [[fill]align][width][.precision][type].
std::string apply_format_spec(const Value& value, std::string_view spec) {
    if (spec.empty()) return to_str(value);
    std::vector<uint32_t> cps = py::code_points(spec);
    size_t i = 0;
    uint32_t fill = ' ';
    char align = value.is_number() ? '>' : '<';
    const auto is_align = [](uint32_t c) { return c == '<' || c == '>' || c == '^'; };
    if (cps.size() >= 2 && is_align(cps[1])) {
        fill = cps[0];
        align = static_cast<char>(cps[1]);
        i = 2;
    } else if (!cps.empty() && is_align(cps[0])) {
        align = static_cast<char>(cps[0]);
        i = 1;
    }
    size_t width = 0;
    while (i < cps.size() && cps[i] >= '0' && cps[i] <= '9')
        width = std::min<size_t>(width * 10 + (cps[i++] - '0'), 4096);
    int precision = -1;
    if (i < cps.size() && cps[i] == '.') {
        precision = 0;
        while (++i < cps.size() && cps[i] >= '0' && cps[i] <= '9')
            precision = std::min(precision * 10 + static_cast<int>(cps[i] - '0'), 256);
    }
    const char type = i < cps.size() ? static_cast<char>(cps[i++]) : '\0';
    if (i != cps.size()) raise("unsupported format spec '{}'", spec);
    std::string text;
    if (type == 'f' || type == 'e' || type == 'g' || type == '%') {
        if (!value.is_number())
            raise("unknown format code '{}' for object of type '{}'", type, type_name(value));
        const int p = precision < 0 ? 6 : precision;
        text = type == 'f'   ? fmt::format("{:.{}f}", value.as_double(), p)
               : type == 'e' ? fmt::format("{:.{}e}", value.as_double(), p)
               : type == 'g' ? fmt::format("{:.{}g}", value.as_double(), p)
                             : fmt::format("{:.{}f}%", value.as_double() * 100.0, p);
    } else if (type == 'd') {
        if (!value.is_integral())
            raise("unknown format code 'd' for object of type '{}'", type_name(value));
        text = std::to_string(value.as_int());
    } else if (type == '\0' || type == 's') {
        text = to_str(value);
        const std::vector<uint32_t> chars = py::code_points(text);
        if (precision >= 0 && static_cast<size_t>(precision) < chars.size()) {
            text = py::from_code_points({chars.data(), static_cast<size_t>(precision)});
        }
    } else {
        raise("unsupported format spec '{}'", spec);
    }
    const size_t n = py::length(text);
    if (width <= n) return text;
    const size_t pad = width - n;
    const size_t left = align == '>' ? pad : (align == '^' ? pad / 2 : 0);
    std::string out;
    for (size_t k = 0; k < left; ++k) utf8::append(out, fill);
    out += text;
    for (size_t k = 0; k < pad - left; ++k) utf8::append(out, fill);
    return out;
}

// str.format with {}, {0}, {name}, !r / !s and simple format specs.
Value str_format(Interpreter& interpreter, const Value& self, CallArgs& args) {
    const std::string& format = self.as_string();
    std::string out;
    size_t next_auto = 0;
    for (size_t i = 0; i < format.size(); ++i) {
        const char c = format[i];
        if (c == '}') {
            if (i + 1 < format.size() && format[i + 1] == '}')
                ++i;
            else
                raise("Single '}}' encountered in format string");
            out += '}';
            continue;
        }
        if (c != '{') {
            out += c;
            continue;
        }
        if (i + 1 < format.size() && format[i + 1] == '{') {
            out += '{';
            ++i;
            continue;
        }
        const size_t close = format.find('}', i);
        if (close == std::string::npos) raise("Single '{{' encountered in format string");
        std::string_view field = std::string_view(format).substr(i + 1, close - i - 1);
        i = close;
        std::string_view spec;
        if (const size_t colon = field.find(':'); colon != std::string_view::npos) {
            spec = field.substr(colon + 1);
            field = field.substr(0, colon);
        }
        char conversion = '\0';
        if (const size_t bang = field.find('!'); bang != std::string_view::npos) {
            conversion = bang + 1 < field.size() ? field[bang + 1] : '\0';
            field = field.substr(0, bang);
        }
        const Value* value = nullptr;
        if (field.empty() || std::all_of(field.begin(), field.end(), [](char d) {
                return std::isdigit(static_cast<unsigned char>(d));
            })) {
            const size_t index = field.empty() ? next_auto++ : std::stoul(std::string(field));
            if (index >= args.positional.size())
                raise("Replacement index {} out of range for positional args tuple", index);
            value = &args.positional[index];
        } else {
            for (const auto& [name, keyword] : args.keywords) {
                if (name == field) value = &keyword;
            }
            if (value == nullptr) raise("KeyError: '{}'", field);
        }
        const Value converted = conversion == 'r' ? Value::string(repr(*value)) : *value;
        out += apply_format_spec(converted, spec);
        interpreter.budget().charge(out.size());
    }
    return Value::string(std::move(out));
}

template <typename Predicate>
Value str_is(const Value& self, Predicate predicate) {
    const std::vector<uint32_t> cps = py::code_points(self.as_string());
    return Value::boolean(!cps.empty() && std::all_of(cps.begin(), cps.end(), predicate));
}

bool is_ascii_digit(uint32_t c) { return c >= '0' && c <= '9'; }
// ASCII letters, and beyond ASCII anything from Latin-1 on that is not a
// space or the two Latin-1 signs (a close reading of str.isalpha()).
bool is_letter(uint32_t c) {
    if (c < 0x80) return (c | 32) >= 'a' && (c | 32) <= 'z';
    return c >= 0xC0 && c != 0xD7 && c != 0xF7 && !py::is_space(c);
}

Value str_pad(Interpreter& interpreter, const Value& self, CallArgs& args, char align) {
    const BoundArgs bound(align == '<' ? "ljust" : (align == '>' ? "rjust" : "center"), args,
                          {"width", "fillchar"});
    const int64_t width = std::min<int64_t>(bound.integer(0, 0), 1 << 20);
    const std::string fill = bound.string(1).value_or(" ");
    if (py::length(fill) != 1) raise("The fill character must be exactly one character long");
    const int64_t n = static_cast<int64_t>(py::length(self.as_string()));
    if (width <= n) return self;
    const int64_t pad = width - n;
    // str.center puts the odd space on the right unless the width is odd too.
    const int64_t left = align == '>' ? pad : (align == '^' ? pad / 2 + (pad & width & 1) : 0);
    std::string out;
    for (int64_t k = 0; k < left; ++k) out += fill;
    out += self.as_string();
    for (int64_t k = 0; k < pad - left; ++k) out += fill;
    return built_string(interpreter, std::move(out));
}

Value str_partition(const Value& self, CallArgs& args, bool from_right) {
    const BoundArgs bound(from_right ? "rpartition" : "partition", args, {"sep"});
    const std::string sep = required_string(bound, 0);
    if (sep.empty()) raise("empty separator");
    const std::string& text = self.as_string();
    const size_t at = from_right ? text.rfind(sep) : text.find(sep);
    if (at == std::string::npos) {
        return from_right ? Value::tuple({Value::string(""), Value::string(""), self})
                          : Value::tuple({self, Value::string(""), Value::string("")});
    }
    return Value::tuple({Value::string(text.substr(0, at)), Value::string(sep),
                         Value::string(text.substr(at + sep.size()))});
}

constexpr std::array kStringMethods = {
    MethodEntry{"strip", [](Interpreter&, const Value& s, CallArgs& a) { return str_strip(py::Side::Both, "strip", s, a); }},
    MethodEntry{"lstrip", [](Interpreter&, const Value& s, CallArgs& a) { return str_strip(py::Side::Left, "lstrip", s, a); }},
    MethodEntry{"rstrip", [](Interpreter&, const Value& s, CallArgs& a) { return str_strip(py::Side::Right, "rstrip", s, a); }},
    MethodEntry{"split", [](Interpreter& i, const Value& s, CallArgs& a) { return str_split(i, s, a, false); }},
    MethodEntry{"rsplit", [](Interpreter& i, const Value& s, CallArgs& a) { return str_split(i, s, a, true); }},
    MethodEntry{"splitlines", [](Interpreter& i, const Value& s, CallArgs& a) {
        const BoundArgs bound("splitlines", a, {"keepends"});
        return string_list(i, py::splitlines(s.as_string(), bound.boolean(0, false)));
    }},
    MethodEntry{"startswith", [](Interpreter&, const Value& s, CallArgs& a) { return str_affix(s, a, true); }},
    MethodEntry{"endswith", [](Interpreter&, const Value& s, CallArgs& a) { return str_affix(s, a, false); }},
    MethodEntry{"upper", [](Interpreter&, const Value& s, CallArgs& a) {
        BoundArgs("upper", a, {});
        return Value::string(py::upper(s.as_string()));
    }},
    MethodEntry{"lower", [](Interpreter&, const Value& s, CallArgs& a) {
        BoundArgs("lower", a, {});
        return Value::string(py::lower(s.as_string()));
    }},
    MethodEntry{"casefold", [](Interpreter&, const Value& s, CallArgs& a) {
        BoundArgs("casefold", a, {});
        return Value::string(py::lower(s.as_string()));
    }},
    MethodEntry{"title", [](Interpreter&, const Value& s, CallArgs& a) {
        BoundArgs("title", a, {});
        return Value::string(py::title(s.as_string()));
    }},
    MethodEntry{"capitalize", [](Interpreter&, const Value& s, CallArgs& a) {
        BoundArgs("capitalize", a, {});
        return Value::string(py::capitalize(s.as_string()));
    }},
    MethodEntry{"replace", str_replace},
    MethodEntry{"find", [](Interpreter&, const Value& s, CallArgs& a) { return str_find(s, a, false, false); }},
    MethodEntry{"rfind", [](Interpreter&, const Value& s, CallArgs& a) { return str_find(s, a, true, false); }},
    MethodEntry{"index", [](Interpreter&, const Value& s, CallArgs& a) { return str_find(s, a, false, true); }},
    MethodEntry{"rindex", [](Interpreter&, const Value& s, CallArgs& a) { return str_find(s, a, true, true); }},
    MethodEntry{"count", [](Interpreter&, const Value& s, CallArgs& a) {
        const BoundArgs bound("count", a, {"sub"});
        return Value::integer(py::count(s.as_string(), required_string(bound, 0)));
    }},
    MethodEntry{"join", str_join},
    MethodEntry{"format", str_format},
    MethodEntry{"isdigit", [](Interpreter&, const Value& s, CallArgs&) { return str_is(s, is_ascii_digit); }},
    MethodEntry{"isdecimal", [](Interpreter&, const Value& s, CallArgs&) { return str_is(s, is_ascii_digit); }},
    MethodEntry{"isnumeric", [](Interpreter&, const Value& s, CallArgs&) { return str_is(s, is_ascii_digit); }},
    MethodEntry{"isalpha", [](Interpreter&, const Value& s, CallArgs&) { return str_is(s, is_letter); }},
    MethodEntry{"isalnum", [](Interpreter&, const Value& s, CallArgs&) {
        return str_is(s, [](uint32_t c) { return is_letter(c) || is_ascii_digit(c); });
    }},
    MethodEntry{"isspace", [](Interpreter&, const Value& s, CallArgs&) { return str_is(s, py::is_space); }},
    MethodEntry{"islower", [](Interpreter&, const Value& s, CallArgs&) {
        const std::string& t = s.as_string();
        return Value::boolean(py::lower(t) == t && py::upper(t) != t);
    }},
    MethodEntry{"isupper", [](Interpreter&, const Value& s, CallArgs&) {
        const std::string& t = s.as_string();
        return Value::boolean(py::upper(t) == t && py::lower(t) != t);
    }},
    MethodEntry{"removeprefix", [](Interpreter&, const Value& s, CallArgs& a) {
        const BoundArgs bound("removeprefix", a, {"prefix"});
        const std::string prefix = required_string(bound, 0);
        return s.as_string().starts_with(prefix) ? Value::string(s.as_string().substr(prefix.size())) : s;
    }},
    MethodEntry{"removesuffix", [](Interpreter&, const Value& s, CallArgs& a) {
        const BoundArgs bound("removesuffix", a, {"suffix"});
        const std::string suffix = required_string(bound, 0);
        return s.as_string().ends_with(suffix)
                   ? Value::string(s.as_string().substr(0, s.as_string().size() - suffix.size()))
                   : s;
    }},
    MethodEntry{"ljust", [](Interpreter& i, const Value& s, CallArgs& a) { return str_pad(i, s, a, '<'); }},
    MethodEntry{"rjust", [](Interpreter& i, const Value& s, CallArgs& a) { return str_pad(i, s, a, '>'); }},
    MethodEntry{"center", [](Interpreter& i, const Value& s, CallArgs& a) { return str_pad(i, s, a, '^'); }},
    MethodEntry{"zfill", [](Interpreter& i, const Value& s, CallArgs& a) {
        const BoundArgs bound("zfill", a, {"width"});
        const int64_t width = std::min<int64_t>(bound.integer(0, 0), 1 << 20);
        std::string text = s.as_string();
        const int64_t n = static_cast<int64_t>(py::length(text));
        if (width <= n) return s;
        const bool sign = !text.empty() && (text[0] == '-' || text[0] == '+');
        text.insert(sign ? 1 : 0, std::string(static_cast<size_t>(width - n), '0'));
        return built_string(i, std::move(text));
    }},
    MethodEntry{"partition", [](Interpreter&, const Value& s, CallArgs& a) { return str_partition(s, a, false); }},
    MethodEntry{"rpartition", [](Interpreter&, const Value& s, CallArgs& a) { return str_partition(s, a, true); }},
};

// ---- dict ----

Value dict_pairs(Interpreter& interpreter, const Value& self) {
    std::vector<Value> pairs;
    for (const auto& [key, value] : self.as_dict().entries())
        pairs.push_back(Value::tuple({key, value}));
    interpreter.budget().charge(pairs.size() * 3 * sizeof(Value));
    return Value::list(std::move(pairs));
}

constexpr std::array kDictMethods = {
    MethodEntry{"get",
                [](Interpreter&, const Value& d, CallArgs& a) {
                    const BoundArgs bound("get", a, {"key", "default"});
                    const Value* value = d.as_dict().find(bound.require(0));
                    return value ? *value : bound.get(1, Value::none());
                }},
    MethodEntry{"items",
                [](Interpreter& i, const Value& d, CallArgs& a) {
                    BoundArgs("items", a, {});
                    return dict_pairs(i, d);
                }},
    MethodEntry{"keys",
                [](Interpreter&, const Value& d, CallArgs& a) {
                    BoundArgs("keys", a, {});
                    return Value::list(iterate(d));
                }},
    MethodEntry{"values",
                [](Interpreter&, const Value& d, CallArgs& a) {
                    BoundArgs("values", a, {});
                    std::vector<Value> values;
                    for (const auto& entry : d.as_dict().entries()) values.push_back(entry.second);
                    return Value::list(std::move(values));
                }},
    MethodEntry{"copy",
                [](Interpreter&, const Value& d, CallArgs& a) {
                    BoundArgs("copy", a, {});
                    return d;
                }},
};

// ---- list and tuple ----

constexpr std::array kSequenceMethods = {
    MethodEntry{"index",
                [](Interpreter&, const Value& l, CallArgs& a) {
                    const BoundArgs bound("index", a, {"value"});
                    const auto& items = l.items();
                    for (size_t i = 0; i < items.size(); ++i) {
                        if (equals(items[i], bound.require(0)))
                            return Value::integer(static_cast<int64_t>(i));
                    }
                    raise("{} is not in {}", repr(bound.require(0)), type_name(l));
                }},
    MethodEntry{"count",
                [](Interpreter&, const Value& l, CallArgs& a) {
                    const BoundArgs bound("count", a, {"value"});
                    const auto& items = l.items();
                    return Value::integer(std::count_if(
                        items.begin(), items.end(),
                        [&](const Value& item) { return equals(item, bound.require(0)); }));
                }},
    MethodEntry{"copy",
                [](Interpreter&, const Value& l, CallArgs& a) {
                    BoundArgs("copy", a, {});
                    return l;
                }},
};

constexpr std::array<std::string_view, 5> kUnsafeDictMethods = {"clear", "pop", "popitem",
                                                                "setdefault", "update"};
constexpr std::array<std::string_view, 8> kUnsafeListMethods = {
    "append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort"};

template <size_t N>
Value bind_from(const std::array<MethodEntry, N>& table, const Value& self,
                const std::string& name) {
    for (const MethodEntry& entry : table) {
        if (entry.name == name)
            return Value::object(std::make_shared<BoundMethod>(self, entry.name, entry.method));
    }
    return Value();
}

template <size_t N>
bool listed(const std::array<std::string_view, N>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

Value unsafe(const Value& self, const std::string& name) {
    return Value::undefined(
        fmt::format("access to attribute '{}' of '{}' object is unsafe.", name, type_name(self)));
}

}  // namespace

Value find_method(const Value& self, const std::string& name) {
    switch (self.kind()) {
        case Value::Kind::String:
            return bind_from(kStringMethods, self, name);
        case Value::Kind::Dict:
            if (listed(kUnsafeDictMethods, name)) return unsafe(self, name);
            return bind_from(kDictMethods, self, name);
        case Value::Kind::List:
            if (listed(kUnsafeListMethods, name)) return unsafe(self, name);
            return bind_from(kSequenceMethods, self, name);
        case Value::Kind::Tuple:
            return name == "copy" ? Value() : bind_from(kSequenceMethods, self, name);
        default:
            return Value();
    }
}

}  // namespace ladder::tokenizer::jinja
