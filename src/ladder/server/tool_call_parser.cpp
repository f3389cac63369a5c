#include "ladder/server/tool_call_parser.h"

#include <array>
#include <random>
#include <utility>

#include "ladder/server/tool_call_formats.h"

namespace ladder::server {

namespace {

constexpr std::array<std::string_view, 3> kNames = {"hermes", "llama3_json", "mistral"};

bool is_space_only(std::string_view text) {
    return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

std::string random_alnum(size_t n) {
    static constexpr std::string_view kAlphabet =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    thread_local std::mt19937_64 generator{std::random_device{}()};
    std::uniform_int_distribution<size_t> pick(0, kAlphabet.size() - 1);
    std::string out;
    for (size_t i = 0; i < n; ++i) out += kAlphabet[pick(generator)];
    return out;
}

}  // namespace

std::string_view tool_call_format_name(ToolCallFormat format) {
    return kNames[static_cast<size_t>(format)];
}

std::optional<ToolCallFormat> tool_call_format_by_name(std::string_view name) {
    for (size_t i = 0; i < kNames.size(); ++i) {
        if (kNames[i] == name) return static_cast<ToolCallFormat>(i);
    }
    return std::nullopt;
}

std::span<const std::string_view> tool_call_format_names() { return kNames; }

std::optional<ToolCallFormat> detect_tool_call_format(std::string_view chat_template) {
    const auto has = [&](std::string_view marker) {
        return chat_template.find(marker) != std::string_view::npos;
    };
    if (has("[TOOL_CALLS]")) return ToolCallFormat::Mistral;
    if (has("<tool_call>")) {
        if (has("<function=") || has("<arg_key>")) return std::nullopt;
        return ToolCallFormat::Hermes;
    }
    if (has("<|python_tag|>") || (has("<|start_header_id|>") && has("ipython"))) {
        return ToolCallFormat::Llama3Json;
    }
    return std::nullopt;
}

std::string new_tool_call_id(ToolCallFormat format) {
    // Mistral's templates refuse ids that are not 9 letters and digits.
    if (format == ToolCallFormat::Mistral) return random_alnum(9);
    return "call_" + random_alnum(24);
}

ParsedOutput ToolCallParser::push(std::string_view text) {
    for (char c : text) feed(c);
    return std::exchange(out_, {});
}

ParsedOutput ToolCallParser::finish() {
    end();
    if (n_calls_ == 0) out_.content += held_space_;
    held_space_.clear();
    return std::exchange(out_, {});
}

void ToolCallParser::emit_content(std::string_view text) {
    if (text.empty()) return;
    held_space_ += text;
    if (is_space_only(held_space_)) return;
    out_.content += held_space_;
    held_space_.clear();
}

void ToolCallParser::open_call(const std::string& name) {
    ToolCallFragment fragment;
    fragment.index = n_calls_++;
    fragment.id = ids_();
    fragment.name = name;
    out_.tool_calls.push_back(std::move(fragment));
}

void ToolCallParser::append_arguments(std::string_view text) {
    if (text.empty() || n_calls_ == 0) return;
    // Within one push, a call's argument text joins its last fragment.
    if (!out_.tool_calls.empty() && out_.tool_calls.back().index == n_calls_ - 1) {
        out_.tool_calls.back().arguments += text;
        return;
    }
    ToolCallFragment fragment;
    fragment.index = n_calls_ - 1;
    fragment.arguments = text;
    out_.tool_calls.push_back(std::move(fragment));
}

void ToolCallParser::begin_call(std::string raw) {
    reader_ = JsonCallReader();
    call_raw_ = std::move(raw);
    call_opened_ = false;
}

JsonCallReader::Status ToolCallParser::feed_call(char c) {
    call_raw_ += c;
    const JsonCallReader::Status status = reader_.feed(c);
    if (!call_opened_ && reader_.has_name()) {
        open_call(reader_.name());
        call_opened_ = true;
    }
    if (call_opened_) append_arguments(reader_.take_arguments());
    if (status == JsonCallReader::Status::NotACall && !call_opened_) emit_content(call_raw_);
    if (status == JsonCallReader::Status::Done && !reader_.has_arguments()) append_arguments("{}");
    return status;
}

void ToolCallParser::end_call() {
    if (!call_opened_) {
        emit_content(call_raw_);
        return;
    }
    append_arguments(reader_.take_arguments());
}

std::unique_ptr<ToolCallParser> make_tool_call_parser(ToolCallFormat format,
                                                      ToolCallParser::IdSource ids) {
    if (!ids) ids = [format] { return new_tool_call_id(format); };
    switch (format) {
        case ToolCallFormat::Hermes:
            return make_hermes_parser(std::move(ids));
        case ToolCallFormat::Llama3Json:
            return make_llama3_json_parser(std::move(ids));
        case ToolCallFormat::Mistral:
            return make_mistral_parser(std::move(ids));
    }
    return nullptr;
}

}  // namespace ladder::server
