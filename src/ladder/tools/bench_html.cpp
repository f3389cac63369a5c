#include "ladder/tools/bench_html.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

namespace ladder::tools {

namespace {

constexpr const char* kStyle =
    "body{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}"
    "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 10px;"
    "text-align:right}th:first-child,td:first-child{text-align:left}"
    "pre{background:#f6f6f6;padding:1em;white-space:pre-wrap}img{max-width:100%;height:auto}";

std::string read_text(const std::filesystem::path& path) {
    std::ifstream file(path, std::ios::binary);
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
}

struct MetricRow {
    const char* label;
    std::function<std::string(const BenchSummary&)> value;
};

std::string figures_table(const std::vector<BenchSummary>& levels) {
    const auto fixed = [](double value) { return fmt::format("{:.2f}", value); };
    const std::vector<MetricRow> rows = {
        {"max concurrency",
         [](const BenchSummary& s) {
             return s.max_concurrency > 0 ? std::to_string(s.max_concurrency) : "none";
         }},
        {"request rate", [](const BenchSummary& s) { return format_request_rate(s.request_rate); }},
        {"completed", [](const BenchSummary& s) { return std::to_string(s.n_completed); }},
        {"failed", [](const BenchSummary& s) { return std::to_string(s.n_failed); }},
        {"duration (s)", [&](const BenchSummary& s) { return fixed(s.duration_s); }},
        {"requests/s", [&](const BenchSummary& s) { return fixed(s.request_throughput); }},
        {"goodput (req/s)",
         [&](const BenchSummary& s) {
             return s.request_goodput ? fixed(*s.request_goodput) : "-";
         }},
        {"input tok/s", [&](const BenchSummary& s) { return fixed(s.input_throughput); }},
        {"output tok/s", [&](const BenchSummary& s) { return fixed(s.output_throughput); }},
        {"total tok/s", [&](const BenchSummary& s) { return fixed(s.total_token_throughput); }},
        {"cached prompt tokens",
         [](const BenchSummary& s) {
             return s.cached_token_share ? fmt::format("{:.1f}%", *s.cached_token_share * 100.0)
                                         : std::string("-");
         }},
        {"$ per million output tokens",
         [](const BenchSummary& s) {
             return s.cost_per_million_output_tokens
                        ? fmt::format("{:.4f}", *s.cost_per_million_output_tokens)
                        : std::string("-");
         }},
    };
    std::string out = "<table><tr><th>metric</th>";
    for (size_t i = 0; i < levels.size(); ++i) {
        out += levels[i].max_concurrency > 0
                   ? fmt::format("<th>concurrency {}</th>", levels[i].max_concurrency)
                   : fmt::format("<th>run {}</th>", i + 1);
    }
    out += "</tr>\n";
    const auto add_row = [&](const std::string& label, const auto& value) {
        out += "<tr><td>" + html_escape(label) + "</td>";
        for (const BenchSummary& level : levels)
            out += "<td>" + html_escape(value(level)) + "</td>";
        out += "</tr>\n";
    };
    for (const MetricRow& row : rows) add_row(row.label, row.value);
    const std::pair<const char*, Distribution BenchSummary::*> latencies[] = {
        {"TTFT", &BenchSummary::ttft_ms},
        {"TPOT", &BenchSummary::tpot_ms},
        {"ITL", &BenchSummary::itl_ms},
        {"E2E", &BenchSummary::e2el_ms}};
    for (const auto& latency : latencies) {
        // A plain member pointer: structured bindings are not captured before clang 16.
        Distribution BenchSummary::*member = latency.second;
        add_row(fmt::format("{} mean / median / p90 / p99 (ms)", latency.first),
                [member](const BenchSummary& s) {
                    const Distribution& d = s.*member;
                    return fmt::format("{:.1f} / {:.1f} / {:.1f} / {:.1f}", d.mean, d.median, d.p90,
                                       d.p99);
                });
    }
    return out + "</table>\n";
}

}  // namespace

std::string html_escape(const std::string& text) {
    std::string out;
    for (const char c : text) {
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
                out += "&quot;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::string base64(const std::string& bytes) {
    static constexpr char kDigits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const auto n = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16 |
                       static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8 |
                       static_cast<unsigned char>(bytes[i + 2]);
        for (const int shift : {18, 12, 6, 0}) out += kDigits[(n >> shift) & 63];
    }
    if (const size_t rest = bytes.size() - i; rest > 0) {
        uint32_t n = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
        if (rest == 2) n |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
        out += kDigits[(n >> 18) & 63];
        out += kDigits[(n >> 12) & 63];
        out += rest == 2 ? kDigits[(n >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

std::string render_html_report(const HtmlReport& report, const std::string& dir) {
    const BenchInfo& info = report.info;
    std::string out = fmt::format(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>ladder bench {}</title>"
        "<style>{}</style></head><body>\n<h1>ladder bench</h1>\n<p>{} &middot; {} &middot; "
        "model {} &middot; dataset {} &middot; {} prompts, seed {}</p>\n",
        html_escape(info.date), kStyle, html_escape(info.date), html_escape(info.base_url),
        html_escape(info.model), html_escape(info.dataset), info.n_prompts, info.seed);
    out += "<h2>Figures</h2>\n" + figures_table(report.levels);
    if (!report.errors.empty()) {
        out += "<h2>Errors</h2>\n<pre>" + html_escape(report.errors) + "</pre>\n";
    }
    out += "<h2>Charts</h2>\n";
    if (report.charts.empty()) {
        out += "<p>" + html_escape(report.charts_problem) + "</p>\n";
    }
    for (const std::string& chart : report.charts) {
        const std::filesystem::path svg = std::filesystem::path(dir) / (chart + ".svg");
        // A data URI keeps each chart's SVG ids to itself (gnuplot reuses them).
        out += fmt::format(
            "<figure><img alt=\"{}\" src=\"data:image/svg+xml;base64,{}\">"
            "<figcaption>{}.png, {}.svg</figcaption></figure>\n",
            html_escape(chart), base64(read_text(svg)), html_escape(chart), html_escape(chart));
    }
    return out + "</body></html>\n";
}

}  // namespace ladder::tools
