#include "ladder/tools/bench_spec_decode.h"

#include <charconv>
#include <cmath>
#include <string>

namespace ladder::tools {

namespace {

constexpr std::string_view kPrefixes[] = {"ladder:spec_decode_", "vllm:spec_decode_"};

// The sample's value: the last field of the line.
std::optional<double> sample_value(std::string_view line) {
    const size_t space = line.find_last_of(' ');
    if (space == std::string_view::npos) return std::nullopt;
    const std::string_view text = line.substr(space + 1);
    double value = 0.0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc{} || end != text.data() + text.size() || !std::isfinite(value))
        return std::nullopt;
    return value;
}

// The position label of a per-position sample, or nullopt.
std::optional<size_t> position_label(std::string_view line) {
    constexpr std::string_view kLabel = "position=\"";
    const size_t start = line.find(kLabel);
    if (start == std::string_view::npos) return std::nullopt;
    const std::string_view rest = line.substr(start + kLabel.size());
    size_t position = 0;
    const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), position);
    if (error != std::errc{} || end == rest.data() + rest.size() || *end != '"' || position > 4096)
        return std::nullopt;
    return position;
}

}  // namespace

std::optional<engine::SpecDecodeStats> parse_spec_decode_metrics(std::string_view text) {
    engine::SpecDecodeStats stats;
    bool found = false;
    while (!text.empty()) {
        const size_t newline = text.find('\n');
        std::string_view line = text.substr(0, newline);
        text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
        std::string_view name;
        for (const std::string_view prefix : kPrefixes) {
            if (line.substr(0, prefix.size()) == prefix) name = line.substr(prefix.size());
        }
        if (name.empty()) continue;
        const std::string_view metric = name.substr(0, name.find_first_of("{ "));
        const std::optional<double> value = sample_value(line);
        if (!value) continue;
        const auto count = static_cast<int64_t>(*value);
        if (metric == "num_drafts_total") {
            stats.n_drafts += count;
        } else if (metric == "num_draft_tokens_total") {
            stats.n_draft_tokens += count;
        } else if (metric == "num_accepted_tokens_total") {
            stats.n_accepted_tokens += count;
        } else if (metric == "num_accepted_tokens_per_pos_total") {
            const std::optional<size_t> position = position_label(line);
            if (!position) continue;
            if (stats.n_accepted_per_position.size() <= *position)
                stats.n_accepted_per_position.resize(*position + 1, 0);
            stats.n_accepted_per_position[*position] += count;
        } else {
            continue;
        }
        found = true;
    }
    if (!found) return std::nullopt;
    return stats;
}

std::optional<engine::SpecDecodeStats> fetch_spec_decode_metrics(const BaseUrl& url,
                                                                 const std::string& api_key,
                                                                 double timeout_s) {
    HttpRequestSpec request;
    request.path = url.path_prefix + "/metrics";
    request.api_key = api_key;
    int status = 0;
    std::string body;
    try {
        send_http_request(
            url, request, timeout_s, [&](const HttpResponseHead& head) { status = head.status; },
            [&](std::string_view data) {
                body.append(data);
                return true;
            });
    } catch (const HttpClientError&) {
        return std::nullopt;
    }
    if (status != 200) return std::nullopt;
    return parse_spec_decode_metrics(body);
}

}  // namespace ladder::tools
