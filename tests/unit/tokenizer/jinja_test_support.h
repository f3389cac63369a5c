// What the Jinja and chat template tests share: the goldens' fixed clock and
// their JSON files, read with key order kept (tojson prints keys in order).
#pragma once

#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ladder::tokenizer::test {

inline const std::filesystem::path kSourceDir = LADDER_SOURCE_DIR;

// 2024-07-26 12:00:00, the time the goldens scripts render strftime_now at.
inline std::tm golden_now() {
    std::tm now{};
    now.tm_year = 2024 - 1900;
    now.tm_mon = 6;
    now.tm_mday = 26;
    now.tm_hour = 12;
    now.tm_isdst = -1;
    std::mktime(&now);  // fills in the weekday and the day of the year
    return now;
}

inline std::string read_source_file(const std::string& relative_path) {
    std::ifstream in(kSourceDir / relative_path, std::ios::binary);
    EXPECT_TRUE(in) << relative_path << " is missing";
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline nlohmann::ordered_json load_goldens(const std::string& relative_path) {
    return nlohmann::ordered_json::parse(read_source_file(relative_path));
}

}  // namespace ladder::tokenizer::test
