// `ladder bench --plot DIR`'s report.html: one self-contained page (no
// scripts, no links out) with what was run, every level's figures, the
// errors, and the charts' SVGs as data URIs.
#pragma once

#include <string>
#include <vector>

#include "ladder/tools/bench_metrics.h"
#include "ladder/tools/bench_report.h"

namespace ladder::tools {

struct HtmlReport {
    BenchInfo info;
    std::vector<BenchSummary> levels;
    std::string errors;               // format_errors' lines; empty when none failed
    std::vector<std::string> charts;  // base names of the SVGs in the folder
    std::string charts_problem;       // why there are no charts, if there are none
};

std::string html_escape(const std::string& text);
// RFC 4648 base64, with padding.
std::string base64(const std::string& bytes);
// The page; the charts' SVGs are read from `dir`.
std::string render_html_report(const HtmlReport& report, const std::string& dir);

}  // namespace ladder::tools
