#include "ladder/tokenizer/jinja/value.h"

#include <fmt/format.h>

#include <algorithm>

#include "ladder/tokenizer/jinja/error.h"
#include "ladder/tokenizer/jinja/python_string.h"
#include "ladder/tokenizer/utf8.h"

namespace ladder::tokenizer::jinja {
namespace {

const std::string& empty_string() {
    static const std::string empty;
    return empty;
}

const std::vector<Value>& empty_items() {
    static const std::vector<Value> empty;
    return empty;
}

// What str.isprintable() rejects, for the scripts templates meet: controls,
// format characters, separators other than the space, surrogates and private use.
bool is_printable(uint32_t cp) {
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD) return false;
    if (cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F)) {
        return false;
    }
    if ((cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 || cp == 0xFEFF) return false;
    if ((cp >= 0xD800 && cp <= 0xF8FF) || (cp >= 0xFFF9 && cp <= 0xFFFB) || cp >= 0xFFFE) {
        return cp > 0xFFFF && cp < 0xE0000;
    }
    return true;
}

std::string string_repr(const std::string& text) {
    const bool has_single = text.find('\'') != std::string::npos;
    const bool has_double = text.find('"') != std::string::npos;
    const char quote = has_single && !has_double ? '"' : '\'';
    std::string out(1, quote);
    for (uint32_t cp : py::code_points(text)) {
        if (cp == static_cast<uint32_t>(quote) || cp == '\\') {
            out += '\\';
            out += static_cast<char>(cp);
        } else if (cp == '\t') {
            out += "\\t";
        } else if (cp == '\n') {
            out += "\\n";
        } else if (cp == '\r') {
            out += "\\r";
        } else if (is_printable(cp)) {
            utf8::append(out, cp);
        } else if (cp < 0x100) {
            out += fmt::format("\\x{:02x}", cp);
        } else if (cp < 0x10000) {
            out += fmt::format("\\u{:04x}", cp);
        } else {
            out += fmt::format("\\U{:08x}", cp);
        }
    }
    out += quote;
    return out;
}

std::string items_repr(const std::vector<Value>& items) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += ", ";
        out += repr(items[i]);
    }
    return out;
}

}  // namespace

Value Value::undefined(std::string reason) {
    Value value;
    value.data_ = std::make_shared<const std::string>(std::move(reason));
    return value;
}

Value Value::none() {
    Value value;
    value.kind_ = Kind::None;
    return value;
}

Value Value::boolean(bool b) {
    Value value;
    value.kind_ = Kind::Bool;
    value.scalar_.b = b;
    return value;
}

Value Value::integer(int64_t i) {
    Value value;
    value.kind_ = Kind::Int;
    value.scalar_.i = i;
    return value;
}

Value Value::number(double f) {
    Value value;
    value.kind_ = Kind::Float;
    value.scalar_.f = f;
    return value;
}

Value Value::string(std::string text) {
    Value value;
    value.kind_ = Kind::String;
    value.data_ = std::make_shared<const std::string>(std::move(text));
    return value;
}

Value Value::container(Kind kind, std::shared_ptr<const void> data, int depth) {
    if (depth > kMaxDepth) raise("values nest more than {} levels deep", kMaxDepth);
    Value value;
    value.kind_ = kind;
    value.depth_ = static_cast<uint16_t>(depth);
    value.data_ = std::move(data);
    return value;
}

Value Value::markup(std::string text) {
    Value value = string(std::move(text));
    value.markup_ = true;
    return value;
}

Value Value::list(std::vector<Value> items) {
    int depth = 0;
    for (const Value& item : items) depth = std::max(depth, item.depth());
    return container(Kind::List, std::make_shared<const std::vector<Value>>(std::move(items)),
                     depth + 1);
}

Value Value::tuple(std::vector<Value> items) {
    Value value = list(std::move(items));
    value.kind_ = Kind::Tuple;
    return value;
}

Value Value::dict(Dict entries) {
    int depth = 0;
    for (const auto& [key, item] : entries.entries()) {
        depth = std::max({depth, key.depth(), item.depth()});
    }
    return container(Kind::Dict, std::make_shared<const Dict>(std::move(entries)), depth + 1);
}

Value Value::object(std::shared_ptr<Object> object) {
    Value value;
    value.kind_ = Kind::Object;
    value.object_ = std::move(object);
    return value;
}

int Value::depth() const { return kind_ == Kind::Object ? object_->depth() : depth_; }

double Value::as_double() const {
    if (kind_ == Kind::Float) return scalar_.f;
    return static_cast<double>(as_int());
}

const std::string& Value::as_string() const {
    return kind_ == Kind::String ? *static_cast<const std::string*>(data_.get()) : empty_string();
}

const std::vector<Value>& Value::items() const {
    return is_list_or_tuple() ? *static_cast<const std::vector<Value>*>(data_.get())
                              : empty_items();
}

const Dict& Value::as_dict() const {
    static const Dict empty;
    return kind_ == Kind::Dict ? *static_cast<const Dict*>(data_.get()) : empty;
}

const std::string& Value::undefined_reason() const {
    return kind_ == Kind::Undefined && data_ ? *static_cast<const std::string*>(data_.get())
                                             : empty_string();
}

void Dict::set(Value key, Value value) {
    for (Entry& entry : entries_) {
        if (equals(entry.first, key)) {
            entry.second = std::move(value);
            return;
        }
    }
    entries_.emplace_back(std::move(key), std::move(value));
}

const Value* Dict::find(const Value& key) const {
    for (const Entry& entry : entries_) {
        if (equals(entry.first, key)) return &entry.second;
    }
    return nullptr;
}

const Value* Dict::find(std::string_view key) const {
    for (const Entry& entry : entries_) {
        if (entry.first.is_string() && entry.first.as_string() == key) return &entry.second;
    }
    return nullptr;
}

std::string Object::repr() const { return fmt::format("<{} object>", type_name()); }

Value Object::attribute(const std::string& name) const {
    return Value::undefined(fmt::format("'{}' object has no attribute '{}'", type_name(), name));
}

bool Object::set_attribute(const std::string&, Value) { return false; }

Value Object::call(Interpreter&, CallArgs&) { raise("'{}' object is not callable", type_name()); }

bool truthy(const Value& value) {
    switch (value.kind()) {
        case Value::Kind::Undefined:
        case Value::Kind::None:
            return false;
        case Value::Kind::Bool:
            return value.as_bool();
        case Value::Kind::Int:
            return value.as_int() != 0;
        case Value::Kind::Float:
            return value.as_double() != 0.0;
        case Value::Kind::String:
            return !value.as_string().empty();
        case Value::Kind::List:
        case Value::Kind::Tuple:
            return !value.items().empty();
        case Value::Kind::Dict:
            return !value.as_dict().empty();
        case Value::Kind::Object:
            return true;
    }
    return false;
}

bool equals(const Value& a, const Value& b) {
    if (a.is_number() && b.is_number()) {
        if (a.is_integral() && b.is_integral()) return a.as_int() == b.as_int();
        return a.as_double() == b.as_double();
    }
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
        case Value::Kind::Undefined:
        case Value::Kind::None:
            return true;
        case Value::Kind::String:
            return a.as_string() == b.as_string();
        case Value::Kind::List:
        case Value::Kind::Tuple: {
            const auto& x = a.items();
            const auto& y = b.items();
            if (x.size() != y.size()) return false;
            for (size_t i = 0; i < x.size(); ++i) {
                if (!equals(x[i], y[i])) return false;
            }
            return true;
        }
        case Value::Kind::Dict: {
            const Dict& x = a.as_dict();
            const Dict& y = b.as_dict();
            if (x.size() != y.size()) return false;
            for (const auto& [key, value] : x.entries()) {
                const Value* other = y.find(key);
                if (other == nullptr || !equals(value, *other)) return false;
            }
            return true;
        }
        case Value::Kind::Object:
            return a.object_ptr() == b.object_ptr();
        default:
            return false;
    }
}

int compare(const Value& a, const Value& b, std::string_view op) {
    if (a.is_undefined()) raise("{}", a.undefined_reason());
    if (b.is_undefined()) raise("{}", b.undefined_reason());
    if (a.is_number() && b.is_number()) {
        if (a.is_integral() && b.is_integral()) {
            return a.as_int() < b.as_int() ? -1 : (a.as_int() > b.as_int() ? 1 : 0);
        }
        const double x = a.as_double();
        const double y = b.as_double();
        return x < y ? -1 : (x > y ? 1 : 0);
    }
    if (a.is_string() && b.is_string()) {
        // Byte order of UTF-8 is code point order, as Python compares.
        const int c = a.as_string().compare(b.as_string());
        return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    if (a.kind() == b.kind() && a.is_list_or_tuple()) {
        const auto& x = a.items();
        const auto& y = b.items();
        for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
            if (!equals(x[i], y[i])) return compare(x[i], y[i], op);
        }
        return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
    }
    raise("'{}' not supported between instances of '{}' and '{}'", op, type_name(a), type_name(b));
}

std::string type_name(const Value& value) {
    switch (value.kind()) {
        case Value::Kind::Undefined:
            return "Undefined";
        case Value::Kind::None:
            return "NoneType";
        case Value::Kind::Bool:
            return "bool";
        case Value::Kind::Int:
            return "int";
        case Value::Kind::Float:
            return "float";
        case Value::Kind::String:
            return value.is_markup() ? "Markup" : "str";
        case Value::Kind::List:
            return "list";
        case Value::Kind::Tuple:
            return "tuple";
        case Value::Kind::Dict:
            return "dict";
        case Value::Kind::Object:
            return value.as_object().type_name();
    }
    return "object";
}

std::string to_str(const Value& value) {
    switch (value.kind()) {
        case Value::Kind::Undefined:
            return "";
        case Value::Kind::String:
            return value.as_string();
        case Value::Kind::Object:
            return value.as_object().repr();
        default:
            return repr(value);
    }
}

std::string repr(const Value& value) {
    switch (value.kind()) {
        case Value::Kind::Undefined:
            return "Undefined";
        case Value::Kind::None:
            return "None";
        case Value::Kind::Bool:
            return value.as_bool() ? "True" : "False";
        case Value::Kind::Int:
            return std::to_string(value.as_int());
        case Value::Kind::Float:
            return py::float_repr(value.as_double());
        case Value::Kind::String:
            return value.is_markup() ? fmt::format("Markup({})", string_repr(value.as_string()))
                                     : string_repr(value.as_string());
        case Value::Kind::List:
            return fmt::format("[{}]", items_repr(value.items()));
        case Value::Kind::Tuple:
            return fmt::format("({}{}", items_repr(value.items()),
                               value.items().size() == 1 ? ",)" : ")");
        case Value::Kind::Dict: {
            std::string out = "{";
            bool first = true;
            for (const auto& [key, item] : value.as_dict().entries()) {
                if (!first) out += ", ";
                first = false;
                out += repr(key) + ": " + repr(item);
            }
            return out + "}";
        }
        case Value::Kind::Object:
            return value.as_object().repr();
    }
    return "";
}

}  // namespace ladder::tokenizer::jinja
