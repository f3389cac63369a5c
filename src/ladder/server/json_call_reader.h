// Reads one function call written as a JSON object, {"name": "f",
// "arguments": {...}} (or "parameters"), a character at a time as the model
// writes it: the name as soon as its string closes, and the arguments as raw
// text while they arrive, so that a stream can forward them in fragments.
// Also reads a bare JSON value (the arguments after Mistral's [ARGS]).
#pragma once

#include <string>
#include <string_view>

namespace ladder::server {

// Whitespace between JSON tokens (RFC 8259).
inline bool is_json_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Where one JSON value ends, fed a character at a time: objects and arrays at
// their closing bracket, strings at their closing quote, numbers and literals
// at the first character after them (which is not part of the value).
class JsonValueScanner {
public:
    enum class Step { Inside, EndedWith, EndedBefore, Invalid };
    Step feed(char c);
    bool started() const { return started_; }

private:
    bool started_ = false;
    bool scalar_ = false;
    bool in_string_ = false;
    bool escape_ = false;
    int depth_ = 0;
};

class JsonCallReader {
public:
    enum class Status {
        Reading,  // more to come
        Done,     // the object closed
        NotACall  // not an object, or not one that names a function
    };

    // Consumes c. Once Done or NotACall, further characters are not read.
    Status feed(char c);
    Status status() const { return status_; }

    // The function's name, once its string has closed ("" before).
    const std::string& name() const { return name_; }
    bool has_name() const { return name_done_; }
    // Takes the argument text read since the last call: the value's raw JSON
    // (leading whitespace dropped), or, when the arguments were given as a
    // JSON string, its decoded contents at once when it closes.
    std::string take_arguments();
    // The arguments value was present and has ended.
    bool arguments_done() const { return arguments_done_; }
    bool has_arguments() const { return arguments_seen_; }

private:
    enum class Expect { ObjectStart, KeyOrEnd, Key, Colon, Value, CommaOrEnd };
    void start_value(char c);
    void feed_value(char c);
    void end_value();

    Status status_ = Status::Reading;
    Expect expect_ = Expect::ObjectStart;
    std::string key_;
    bool key_escape_ = false;
    bool first_key_ = true;
    // The value being read.
    enum class ValueRole { Name, Arguments, Other } role_ = ValueRole::Other;
    JsonValueScanner value_;
    std::string string_value_;  // a string value's raw text (name, or string arguments)
    bool string_arguments_ = false;
    std::string name_;
    bool name_done_ = false;
    std::string arguments_;  // not taken yet
    bool arguments_seen_ = false;
    bool arguments_done_ = false;
};

// The contents of a JSON string literal (quotes included in raw); empty if
// raw is not one.
std::string decode_json_string(std::string_view raw);

}  // namespace ladder::server
