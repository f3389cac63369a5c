#include "ladder/tokenizer/jinja/json.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "ladder/tokenizer/jinja/error.h"
#include "ladder/tokenizer/jinja/python_string.h"
#include "ladder/tokenizer/utf8.h"

namespace ladder::tokenizer::jinja {
namespace {

Value from_json_at(const nlohmann::ordered_json& json, int depth) {
    if (depth > Value::kMaxDepth)
        raise("JSON input nests more than {} levels deep", Value::kMaxDepth);
    switch (json.type()) {
        case nlohmann::ordered_json::value_t::null:
        case nlohmann::ordered_json::value_t::discarded:
            return Value::none();
        case nlohmann::ordered_json::value_t::boolean:
            return Value::boolean(json.get<bool>());
        case nlohmann::ordered_json::value_t::number_integer:
            return Value::integer(json.get<int64_t>());
        case nlohmann::ordered_json::value_t::number_unsigned: {
            const uint64_t n = json.get<uint64_t>();
            // Python's ints have no limit; past int64 the nearest double is kept.
            return n <= static_cast<uint64_t>(INT64_MAX) ? Value::integer(static_cast<int64_t>(n))
                                                         : Value::number(static_cast<double>(n));
        }
        case nlohmann::ordered_json::value_t::number_float:
            return Value::number(json.get<double>());
        case nlohmann::ordered_json::value_t::string:
            return Value::string(json.get<std::string>());
        case nlohmann::ordered_json::value_t::array: {
            std::vector<Value> items;
            items.reserve(json.size());
            for (const auto& item : json) items.push_back(from_json_at(item, depth + 1));
            return Value::list(std::move(items));
        }
        case nlohmann::ordered_json::value_t::object: {
            Dict dict;
            for (const auto& [key, item] : json.items()) {
                dict.append_new(Value::string(key), from_json_at(item, depth + 1));
            }
            return Value::dict(std::move(dict));
        }
        case nlohmann::ordered_json::value_t::binary:
            raise("binary JSON values are not supported");
    }
    return Value::none();
}

class JsonWriter {
public:
    explicit JsonWriter(const JsonDumpOptions& options)
        : options_(options),
          item_separator_(options.item_separator.value_or(options.indent ? "," : ", ")),
          key_separator_(options.key_separator.value_or(": ")) {}

    void write(const Value& value, int level) {
        switch (value.kind()) {
            case Value::Kind::None:
                out_ += "null";
                return;
            case Value::Kind::Bool:
                out_ += value.as_bool() ? "true" : "false";
                return;
            case Value::Kind::Int:
                out_ += std::to_string(value.as_int());
                return;
            case Value::Kind::Float:
                write_float(value.as_double());
                return;
            case Value::Kind::String:
                write_string(value.as_string());
                return;
            case Value::Kind::List:
            case Value::Kind::Tuple:
                write_list(value.items(), level);
                return;
            case Value::Kind::Dict:
                write_dict(value.as_dict(), level);
                return;
            default:
                raise("Object of type {} is not JSON serializable", type_name(value));
        }
    }

    std::string take() { return std::move(out_); }

private:
    void newline(int level) {
        if (!options_.indent) return;
        out_ += '\n';
        for (int i = 0; i < level; ++i) out_ += *options_.indent;
    }

    void write_float(double value) {
        if (std::isnan(value)) {
            out_ += "NaN";
        } else if (std::isinf(value)) {
            out_ += value < 0 ? "-Infinity" : "Infinity";
        } else {
            out_ += py::float_repr(value);
        }
    }

    void write_string(const std::string& text) {
        out_ += '"';
        for (uint32_t cp : py::code_points(text)) {
            switch (cp) {
                case '"':
                    out_ += "\\\"";
                    continue;
                case '\\':
                    out_ += "\\\\";
                    continue;
                case '\n':
                    out_ += "\\n";
                    continue;
                case '\r':
                    out_ += "\\r";
                    continue;
                case '\t':
                    out_ += "\\t";
                    continue;
                case '\b':
                    out_ += "\\b";
                    continue;
                case '\f':
                    out_ += "\\f";
                    continue;
                default:
                    break;
            }
            if (cp < 0x20 || (options_.ensure_ascii && cp >= 0x7F)) {
                if (cp >= 0x10000) {  // a surrogate pair, as Python writes it
                    const uint32_t v = cp - 0x10000;
                    out_ +=
                        fmt::format("\\u{:04x}\\u{:04x}", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
                } else {
                    out_ += fmt::format("\\u{:04x}", cp);
                }
                continue;
            }
            utf8::append(out_, cp);
        }
        out_ += '"';
    }

    void write_list(const std::vector<Value>& items, int level) {
        if (items.empty()) {
            out_ += "[]";
            return;
        }
        out_ += '[';
        for (size_t i = 0; i < items.size(); ++i) {
            if (i > 0) out_ += item_separator_;
            newline(level + 1);
            write(items[i], level + 1);
        }
        newline(level);
        out_ += ']';
    }

    // JSON keys are strings; Python converts numbers, booleans and None.
    std::string key_text(const Value& key) {
        switch (key.kind()) {
            case Value::Kind::String:
                return key.as_string();
            case Value::Kind::None:
                return "null";
            case Value::Kind::Bool:
                return key.as_bool() ? "true" : "false";
            case Value::Kind::Int:
                return std::to_string(key.as_int());
            case Value::Kind::Float: {
                JsonWriter writer(options_);
                writer.write_float(key.as_double());
                return writer.take();
            }
            default:
                raise("keys must be str, int, float, bool or None, not {}", type_name(key));
        }
    }

    void write_dict(const Dict& dict, int level) {
        if (dict.empty()) {
            out_ += "{}";
            return;
        }
        std::vector<std::pair<std::string, const Value*>> entries;
        for (const auto& [key, value] : dict.entries()) entries.emplace_back(key_text(key), &value);
        if (options_.sort_keys) {
            std::stable_sort(entries.begin(), entries.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; });
        }
        out_ += '{';
        for (size_t i = 0; i < entries.size(); ++i) {
            if (i > 0) out_ += item_separator_;
            newline(level + 1);
            write_string(entries[i].first);
            out_ += key_separator_;
            write(*entries[i].second, level + 1);
        }
        newline(level);
        out_ += '}';
    }

    const JsonDumpOptions& options_;
    std::string item_separator_;
    std::string key_separator_;
    std::string out_;
};

}  // namespace

Value from_json(const nlohmann::ordered_json& json) { return from_json_at(json, 0); }

std::string to_json(const Value& value, const JsonDumpOptions& options) {
    JsonWriter writer(options);
    writer.write(value, 0);
    return writer.take();
}

}  // namespace ladder::tokenizer::jinja
