#include "ladder/tokenizer/jinja/python_string.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "ladder/tokenizer/utf8.h"

namespace ladder::tokenizer::jinja::py {
namespace {

bool contains(std::span<const uint32_t> set, uint32_t cp) {
    return std::find(set.begin(), set.end(), cp) != set.end();
}

// Simple one-to-one case pairs of the scripts covered; `shift` is the
// distance from lower to upper case.
uint32_t to_upper(uint32_t cp) {
    if (cp >= 'a' && cp <= 'z') return cp - 32;
    if (cp < 0x80) return cp;
    if ((cp >= 0xE0 && cp <= 0xFE && cp != 0xF7)) return cp - 32;
    if (cp == 0xFF) return 0x178;
    if (cp == 0xB5) return 0x39C;
    if (cp >= 0x3B1 && cp <= 0x3C9 && cp != 0x3C2) return cp - 32;
    if (cp == 0x3C2) return 0x3A3;  // final sigma
    if (cp >= 0x430 && cp <= 0x44F) return cp - 32;
    if (cp >= 0x450 && cp <= 0x45F) return cp - 80;
    return cp;
}

uint32_t to_lower(uint32_t cp) {
    if (cp >= 'A' && cp <= 'Z') return cp + 32;
    if (cp < 0x80) return cp;
    if ((cp >= 0xC0 && cp <= 0xDE && cp != 0xD7)) return cp + 32;
    if (cp == 0x178) return 0xFF;
    if (cp >= 0x391 && cp <= 0x3A9 && cp != 0x3A2) return cp + 32;
    if (cp >= 0x410 && cp <= 0x42F) return cp + 32;
    if (cp >= 0x400 && cp <= 0x40F) return cp + 80;
    return cp;
}

bool is_cased(uint32_t cp) { return to_upper(cp) != cp || to_lower(cp) != cp || cp == 0xDF; }

void append_upper(std::string& out, uint32_t cp) {
    if (cp == 0xDF) {  // ß has no single upper-case form
        out += "SS";
        return;
    }
    utf8::append(out, to_upper(cp));
}

template <typename Map>
std::string map_code_points(std::string_view text, Map map) {
    std::string out;
    out.reserve(text.size());
    for (uint32_t cp : code_points(text)) map(out, cp);
    return out;
}

// Byte offsets of the code points of text, plus text.size() at the end.
std::vector<size_t> code_point_offsets(std::string_view text) {
    std::vector<size_t> offsets;
    for (size_t i = 0; i < text.size();) {
        offsets.push_back(i);
        const size_t n =
            std::min(utf8::sequence_length(static_cast<uint8_t>(text[i])), text.size() - i);
        i += n;
    }
    offsets.push_back(text.size());
    return offsets;
}

int64_t code_point_index(std::string_view text, size_t byte_offset) {
    int64_t index = 0;
    for (size_t i = 0; i < byte_offset; ++i) {
        if ((static_cast<uint8_t>(text[i]) & 0xC0) != 0x80) ++index;
    }
    return index;
}

std::vector<std::string> split_whitespace(std::string_view text, int64_t maxsplit,
                                          bool from_right) {
    const std::vector<uint32_t> cps = code_points(text);
    std::vector<std::string> parts;
    if (!from_right) {
        size_t i = 0;
        while (i < cps.size()) {
            while (i < cps.size() && is_space(cps[i])) ++i;
            if (i == cps.size()) break;
            if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
                size_t end = cps.size();
                while (end > i && is_space(cps[end - 1])) --end;
                parts.push_back(from_code_points({cps.data() + i, end - i}));
                break;
            }
            const size_t start = i;
            while (i < cps.size() && !is_space(cps[i])) ++i;
            parts.push_back(from_code_points({cps.data() + start, i - start}));
        }
        return parts;
    }
    size_t end = cps.size();
    while (end > 0) {
        while (end > 0 && is_space(cps[end - 1])) --end;
        if (end == 0) break;
        if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
            size_t start = 0;
            while (start < end && is_space(cps[start])) ++start;
            parts.push_back(from_code_points({cps.data() + start, end - start}));
            break;
        }
        const size_t stop = end;
        while (end > 0 && !is_space(cps[end - 1])) --end;
        parts.push_back(from_code_points({cps.data() + end, stop - end}));
    }
    std::reverse(parts.begin(), parts.end());
    return parts;
}

}  // namespace

bool is_space(uint32_t cp) {
    static constexpr uint32_t kOther[] = {0x85,   0xA0,   0x1680, 0x2028,
                                          0x2029, 0x202F, 0x205F, 0x3000};
    return cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F) ||
           (cp >= 0x2000 && cp <= 0x200A) || contains(kOther, cp);
}

bool is_ascii(std::string_view text) {
    return std::all_of(text.begin(), text.end(),
                       [](char c) { return static_cast<uint8_t>(c) < 0x80; });
}

std::vector<uint32_t> code_points(std::string_view text) {
    if (is_ascii(text)) return {text.begin(), text.end()};
    return utf8::decode_lenient(text);
}

std::string from_code_points(std::span<const uint32_t> cps) {
    std::string out;
    out.reserve(cps.size());
    for (uint32_t cp : cps) utf8::append(out, cp);
    return out;
}

size_t length(std::string_view text) {
    return is_ascii(text) ? text.size() : utf8::decode_lenient(text).size();
}

std::string strip(std::string_view text, Side side, const std::optional<std::string>& chars) {
    const std::vector<uint32_t> cps = code_points(text);
    const std::vector<uint32_t> set = chars ? code_points(*chars) : std::vector<uint32_t>{};
    const auto strippable = [&](uint32_t cp) { return chars ? contains(set, cp) : is_space(cp); };
    size_t begin = 0;
    size_t end = cps.size();
    if (side != Side::Right) {
        while (begin < end && strippable(cps[begin])) ++begin;
    }
    if (side != Side::Left) {
        while (end > begin && strippable(cps[end - 1])) --end;
    }
    return from_code_points({cps.data() + begin, end - begin});
}

std::vector<std::string> split(std::string_view text, const std::optional<std::string>& sep,
                               int64_t maxsplit) {
    if (!sep) return split_whitespace(text, maxsplit, false);
    std::vector<std::string> parts;
    size_t start = 0;
    while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
        const size_t at = text.find(*sep, start);
        if (at == std::string_view::npos) break;
        parts.emplace_back(text.substr(start, at - start));
        start = at + sep->size();
    }
    parts.emplace_back(text.substr(start));
    return parts;
}

std::vector<std::string> rsplit(std::string_view text, const std::optional<std::string>& sep,
                                int64_t maxsplit) {
    if (!sep) return split_whitespace(text, maxsplit, true);
    std::vector<std::string> parts;
    size_t end = text.size();
    while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
        if (end < sep->size()) break;
        const size_t at = text.rfind(*sep, end - sep->size());
        if (at == std::string_view::npos) break;
        parts.emplace_back(text.substr(at + sep->size(), end - at - sep->size()));
        end = at;
    }
    parts.emplace_back(text.substr(0, end));
    std::reverse(parts.begin(), parts.end());
    return parts;
}

std::vector<std::string> splitlines(std::string_view text, bool keep_ends) {
    static constexpr uint32_t kBreaks[] = {'\n', '\r', 0x0B, 0x0C,   0x1C,
                                           0x1D, 0x1E, 0x85, 0x2028, 0x2029};
    const std::vector<uint32_t> cps = code_points(text);
    std::vector<std::string> lines;
    size_t start = 0;
    for (size_t i = 0; i < cps.size(); ++i) {
        if (!contains(kBreaks, cps[i])) continue;
        size_t end = i + 1;
        if (cps[i] == '\r' && end < cps.size() && cps[end] == '\n') end = i + 2;
        lines.push_back(from_code_points({cps.data() + start, (keep_ends ? end : i) - start}));
        start = end;
        i = end - 1;
    }
    if (start < cps.size())
        lines.push_back(from_code_points({cps.data() + start, cps.size() - start}));
    return lines;
}

std::string upper(std::string_view text) {
    return map_code_points(text, [](std::string& out, uint32_t cp) { append_upper(out, cp); });
}

std::string lower(std::string_view text) {
    return map_code_points(text,
                           [](std::string& out, uint32_t cp) { utf8::append(out, to_lower(cp)); });
}

std::string capitalize(std::string_view text) {
    bool first = true;
    return map_code_points(text, [&](std::string& out, uint32_t cp) {
        if (first) {
            append_upper(out, cp);
            first = false;
        } else {
            utf8::append(out, to_lower(cp));
        }
    });
}

std::string title(std::string_view text) {
    bool previous_cased = false;
    return map_code_points(text, [&](std::string& out, uint32_t cp) {
        if (!is_cased(cp)) {
            utf8::append(out, cp);
            previous_cased = false;
            return;
        }
        if (previous_cased) {
            utf8::append(out, to_lower(cp));
        } else {
            append_upper(out, cp);
        }
        previous_cased = true;
    });
}

std::string title_words(std::string_view text) {
    const auto is_boundary = [](uint32_t cp) {
        return is_space(cp) || cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<';
    };
    bool word_start = true;
    return map_code_points(text, [&](std::string& out, uint32_t cp) {
        if (is_boundary(cp)) {
            utf8::append(out, cp);
            word_start = true;
        } else if (word_start) {
            append_upper(out, cp);
            word_start = false;
        } else {
            utf8::append(out, to_lower(cp));
        }
    });
}

std::string replace(std::string_view text, std::string_view old, std::string_view with,
                    int64_t count) {
    std::string out;
    int64_t done = 0;
    if (old.empty()) {
        const std::vector<size_t> offsets = code_point_offsets(text);
        for (size_t i = 0; i + 1 < offsets.size(); ++i) {
            if (count < 0 || done < count) {
                out += with;
                ++done;
            }
            out += text.substr(offsets[i], offsets[i + 1] - offsets[i]);
        }
        if (count < 0 || done < count) out += with;
        return out;
    }
    size_t start = 0;
    while (count < 0 || done < count) {
        const size_t at = text.find(old, start);
        if (at == std::string_view::npos) break;
        out.append(text.substr(start, at - start)).append(with);
        start = at + old.size();
        ++done;
    }
    out.append(text.substr(start));
    return out;
}

int64_t find(std::string_view text, std::string_view sub) {
    const size_t at = text.find(sub);
    return at == std::string_view::npos ? -1 : code_point_index(text, at);
}

int64_t rfind(std::string_view text, std::string_view sub) {
    const size_t at = text.rfind(sub);
    return at == std::string_view::npos ? -1 : code_point_index(text, at);
}

int64_t count(std::string_view text, std::string_view sub) {
    if (sub.empty()) return static_cast<int64_t>(length(text)) + 1;
    int64_t n = 0;
    for (size_t at = text.find(sub); at != std::string_view::npos;
         at = text.find(sub, at + sub.size())) {
        ++n;
    }
    return n;
}

std::string float_repr(double value) {
    if (std::isnan(value)) return "nan";
    if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
    char buffer[64];
    // Shortest round-trip digits, as Python's repr chooses them.
    const auto result =
        std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
    std::string_view text(buffer, static_cast<size_t>(result.ptr - buffer));
    std::string out;
    if (text.front() == '-') {
        out += '-';
        text.remove_prefix(1);
    }
    const size_t e = text.find('e');
    std::string digits;
    for (char c : text.substr(0, e)) {
        if (c != '.') digits += c;
    }
    const int exponent = std::atoi(std::string(text.substr(e + 1)).c_str());
    const int point = exponent + 1;  // digits read as 0.DIGITS x 10^point
    const int n_digits = static_cast<int>(digits.size());
    if (point > -4 && point <= 16) {
        if (point <= 0) {
            out += "0." + std::string(static_cast<size_t>(-point), '0') + digits;
        } else if (point >= n_digits) {
            out += digits + std::string(static_cast<size_t>(point - n_digits), '0') + ".0";
        } else {
            out += digits.substr(0, static_cast<size_t>(point)) + "." +
                   digits.substr(static_cast<size_t>(point));
        }
        return out;
    }
    out += digits[0];
    if (n_digits > 1) {
        out += '.';
        out += digits.substr(1);
    }
    const int magnitude = std::abs(exponent);
    out += exponent < 0 ? "e-" : "e+";
    if (magnitude < 10) out += '0';
    out += std::to_string(magnitude);
    return out;
}

}  // namespace ladder::tokenizer::jinja::py
