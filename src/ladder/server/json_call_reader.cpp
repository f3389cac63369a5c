#include "ladder/server/json_call_reader.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cctype>

namespace ladder::server {

namespace {

// The keys an object that writes a call may start with; any other first key
// means it is some other JSON (an answer), not a call.
constexpr std::array<std::string_view, 5> kCallKeys = {"name", "arguments", "parameters", "type",
                                                       "id"};

}  // namespace

JsonValueScanner::Step JsonValueScanner::feed(char c) {
    if (!started_) {
        if (is_json_space(c)) return Step::Inside;
        started_ = true;
        if (c == '{' || c == '[') {
            depth_ = 1;
        } else if (c == '"') {
            in_string_ = true;
        } else if (c == '-' || std::isalnum(static_cast<unsigned char>(c))) {
            scalar_ = true;
        } else {
            return Step::Invalid;
        }
        return Step::Inside;
    }
    if (scalar_) {
        const bool delimiter = is_json_space(c) || c == ',' || c == '}' || c == ']' || c == ';';
        return delimiter ? Step::EndedBefore : Step::Inside;
    }
    if (in_string_) {
        if (escape_) {
            escape_ = false;
        } else if (c == '\\') {
            escape_ = true;
        } else if (c == '"') {
            in_string_ = false;
            if (depth_ == 0) return Step::EndedWith;
        }
        return Step::Inside;
    }
    if (c == '"') {
        in_string_ = true;
    } else if (c == '{' || c == '[') {
        ++depth_;
    } else if (c == '}' || c == ']') {
        if (--depth_ == 0) return Step::EndedWith;
    }
    return Step::Inside;
}

JsonCallReader::Status JsonCallReader::feed(char c) {
    if (status_ != Status::Reading) return status_;
    switch (expect_) {
        case Expect::ObjectStart:
            if (is_json_space(c)) break;
            if (c != '{') return status_ = Status::NotACall;
            expect_ = Expect::KeyOrEnd;
            break;
        case Expect::KeyOrEnd:
            if (is_json_space(c)) break;
            if (c == '}') return status_ = name_done_ ? Status::Done : Status::NotACall;
            if (c != '"') return status_ = Status::NotACall;
            key_.clear();
            expect_ = Expect::Key;
            break;
        case Expect::Key:
            if (key_escape_) {
                key_ += c;
                key_escape_ = false;
            } else if (c == '\\') {
                key_escape_ = true;
            } else if (c == '"') {
                if (first_key_ &&
                    std::find(kCallKeys.begin(), kCallKeys.end(), key_) == kCallKeys.end()) {
                    return status_ = Status::NotACall;
                }
                first_key_ = false;
                expect_ = Expect::Colon;
            } else {
                key_ += c;
            }
            break;
        case Expect::Colon:
            if (is_json_space(c)) break;
            if (c != ':') return status_ = Status::NotACall;
            if (key_ == "name" && !name_done_) {
                role_ = ValueRole::Name;
            } else if ((key_ == "arguments" || key_ == "parameters") && !arguments_seen_) {
                role_ = ValueRole::Arguments;
            } else {
                role_ = ValueRole::Other;
            }
            value_ = JsonValueScanner();
            string_value_.clear();
            expect_ = Expect::Value;
            break;
        case Expect::Value:
            feed_value(c);
            break;
        case Expect::CommaOrEnd:
            if (is_json_space(c)) break;
            if (c == ',') {
                expect_ = Expect::KeyOrEnd;
            } else if (c == '}') {
                return status_ = name_done_ ? Status::Done : Status::NotACall;
            } else {
                return status_ = Status::NotACall;
            }
            break;
    }
    return status_;
}

void JsonCallReader::feed_value(char c) {
    const bool was_started = value_.started();
    const JsonValueScanner::Step step = value_.feed(c);
    if (step == JsonValueScanner::Step::Invalid) {
        status_ = Status::NotACall;
        return;
    }
    if (!value_.started()) return;  // whitespace before the value
    if (step == JsonValueScanner::Step::EndedBefore) {
        end_value();
        feed(c);  // c belongs to what follows the value
        return;
    }
    switch (role_) {
        case ValueRole::Name:
            if (!was_started && c != '"') {
                status_ = Status::NotACall;  // a name is a string
                return;
            }
            string_value_ += c;
            break;
        case ValueRole::Arguments:
            if (!was_started) {
                arguments_seen_ = true;
                string_arguments_ = c == '"';
            }
            if (string_arguments_) {
                string_value_ += c;
            } else {
                arguments_ += c;
            }
            break;
        case ValueRole::Other:
            break;
    }
    if (step == JsonValueScanner::Step::EndedWith) end_value();
}

void JsonCallReader::end_value() {
    if (role_ == ValueRole::Name) {
        name_ = decode_json_string(string_value_);
        name_done_ = true;
    } else if (role_ == ValueRole::Arguments) {
        if (string_arguments_) arguments_ = decode_json_string(string_value_);
        arguments_done_ = true;
    }
    expect_ = Expect::CommaOrEnd;
}

std::string JsonCallReader::take_arguments() {
    if (string_arguments_ && !arguments_done_) return {};
    std::string taken;
    taken.swap(arguments_);
    return taken;
}

std::string decode_json_string(std::string_view raw) {
    const nlohmann::json value = nlohmann::json::parse(raw, nullptr, false);
    return value.is_string() ? value.get<std::string>() : std::string();
}

}  // namespace ladder::server
