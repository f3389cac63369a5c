// Python's str operations on UTF-8 text, as templates see them: lengths and
// indices count code points, whitespace is what str.isspace() accepts, and
// floats print as repr() prints them. Case mapping covers ASCII, Latin-1,
// Greek and Cyrillic (beyond that, letters are left as they are).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ladder::tokenizer::jinja::py {

bool is_space(uint32_t cp);
bool is_ascii(std::string_view text);
// Invalid UTF-8 (possible only in a template's own text) reads as U+FFFD.
std::vector<uint32_t> code_points(std::string_view text);
std::string from_code_points(std::span<const uint32_t> cps);
size_t length(std::string_view text);

enum class Side { Both, Left, Right };
// chars: the code points to strip; nullopt strips whitespace.
std::string strip(std::string_view text, Side side, const std::optional<std::string>& chars);
// sep: nullopt splits on runs of whitespace and drops empty parts; the
// caller rejects an empty separator. maxsplit < 0: no limit.
std::vector<std::string> split(std::string_view text, const std::optional<std::string>& sep,
                               int64_t maxsplit);
std::vector<std::string> rsplit(std::string_view text, const std::optional<std::string>& sep,
                                int64_t maxsplit);
// Line boundaries as str.splitlines() knows them (\n, \r\n, \r, \v, \f,
// \x1c-\x1e, U+0085, U+2028, U+2029).
std::vector<std::string> splitlines(std::string_view text, bool keep_ends);

std::string upper(std::string_view text);
std::string lower(std::string_view text);
std::string capitalize(std::string_view text);
// str.title(): a cased letter after a cased letter is lowered, any other raised.
std::string title(std::string_view text);
// Jinja's title filter: each word after a run of whitespace, -, (, {, [ or <
// gets its first character raised and the rest lowered.
std::string title_words(std::string_view text);

// count < 0: replace all. An empty `old` inserts between every code point.
std::string replace(std::string_view text, std::string_view old, std::string_view with,
                    int64_t count);
// Code point index of the first (last) occurrence, or -1.
int64_t find(std::string_view text, std::string_view sub);
int64_t rfind(std::string_view text, std::string_view sub);
int64_t count(std::string_view text, std::string_view sub);

// repr(float): the shortest text that reads back to the same double, with
// ".0" on whole numbers and an exponent below 1e-4 and from 1e16.
std::string float_repr(double value);

}  // namespace ladder::tokenizer::jinja::py
