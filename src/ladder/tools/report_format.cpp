// Number formatting for the fit and cost reports.
#include "ladder/tools/report_format.h"

#include <fmt/format.h>

#include <cmath>

namespace ladder::tools {

std::string with_commas(int64_t value) {
    const std::string digits = fmt::format("{}", value < 0 ? -value : value);
    std::string out;
    out.reserve(digits.size() + digits.size() / 3 + 1);
    if (value < 0) out.push_back('-');
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
        out.push_back(digits[i]);
    }
    return out;
}

std::string format_gib(uint64_t bytes) {
    return fmt::format("{:.2f} GiB",
                       static_cast<double>(bytes) / static_cast<double>(uint64_t{1} << 30));
}

std::string format_bytes(uint64_t bytes) {
    const auto b = static_cast<double>(bytes);
    if (bytes < (uint64_t{1} << 20)) return fmt::format("{:.1f} KiB", b / 1024.0);
    if (bytes < (uint64_t{1} << 30)) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024.0));
    return format_gib(bytes);
}

std::string format_dollars(double value) {
    if (std::fabs(value) < 1.0) return fmt::format("${:.4f}", value);
    const auto cents = static_cast<int64_t>(std::llround(value * 100.0));
    const std::string sign = cents < 0 ? "-" : "";
    const int64_t magnitude = cents < 0 ? -cents : cents;
    return fmt::format("{}${}.{:02d}", sign, with_commas(magnitude / 100), magnitude % 100);
}

}  // namespace ladder::tools
