// UTF-8 helpers: llama.cpp-compatible lenient decoding and strict validation.
#include "ladder/tokenizer/utf8.h"

namespace ladder::tokenizer::utf8 {

namespace {

bool is_continuation(uint8_t byte) { return (byte & 0xC0) == 0x80; }

}  // namespace

size_t sequence_length(uint8_t lead) {
    static constexpr uint8_t kByHighNibble[16] = {1, 1, 1, 1, 1, 1, 1, 1,
                                                  1, 1, 1, 1, 2, 2, 3, 4};
    return kByHighNibble[lead >> 4];
}

std::vector<uint32_t> decode_lenient(std::string_view text) {
    std::vector<uint32_t> cpts;
    cpts.reserve(text.size());
    const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
    size_t pos = 0;
    while (pos < text.size()) {
        const uint8_t lead = byte(pos);
        size_t n_continuation = 0;
        uint32_t cpt = 0;
        if (lead < 0x80) {
            cpts.push_back(lead);
            ++pos;
            continue;
        } else if ((lead & 0xE0) == 0xC0) {
            n_continuation = 1;
            cpt = lead & 0x1F;
        } else if ((lead & 0xF0) == 0xE0) {
            n_continuation = 2;
            cpt = lead & 0x0F;
        } else if ((lead & 0xF8) == 0xF0) {
            n_continuation = 3;
            cpt = lead & 0x07;
        } else {  // a stray continuation byte or F8..FF
            cpts.push_back(kReplacement);
            ++pos;
            continue;
        }
        bool complete = pos + n_continuation < text.size();
        for (size_t i = 1; complete && i <= n_continuation; ++i) {
            complete = is_continuation(byte(pos + i));
            cpt = (cpt << 6) | (byte(pos + i) & 0x3F);
        }
        if (!complete) {
            cpts.push_back(kReplacement);
            ++pos;
            continue;
        }
        cpts.push_back(cpt > 0x10FFFF ? kReplacement : cpt);
        pos += n_continuation + 1;
    }
    return cpts;
}

void append(std::string& out, uint32_t cpt) {
    if (cpt <= 0x7F) {
        out.push_back(static_cast<char>(cpt));
    } else if (cpt <= 0x7FF) {
        out.push_back(static_cast<char>(0xC0 | (cpt >> 6)));
        out.push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
    } else if (cpt <= 0xFFFF) {
        out.push_back(static_cast<char>(0xE0 | (cpt >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cpt >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | ((cpt >> 18) & 0x07)));
        out.push_back(static_cast<char>(0x80 | ((cpt >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cpt >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
    }
}

std::string encode(uint32_t cpt) {
    std::string out;
    append(out, cpt);
    return out;
}

int strict_sequence_at(std::string_view text, size_t pos) {
    const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
    const uint8_t lead = byte(pos);
    if (lead < 0x80) return 1;
    int n = 0;
    // The allowed range of the second byte excludes overlongs, surrogates
    // and code points above U+10FFFF (Unicode table 3-7).
    uint8_t second_lo = 0x80, second_hi = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        n = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        n = 3;
        if (lead == 0xE0) second_lo = 0xA0;
        if (lead == 0xED) second_hi = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        n = 4;
        if (lead == 0xF0) second_lo = 0x90;
        if (lead == 0xF4) second_hi = 0x8F;
    } else {
        return -1;
    }
    for (int i = 1; i < n; ++i) {
        if (pos + i >= text.size()) return 0;
        const uint8_t b = byte(pos + i);
        const bool ok = i == 1 ? (b >= second_lo && b <= second_hi) : is_continuation(b);
        if (!ok) return -i;
    }
    return n;
}

std::string sanitize(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    size_t pos = 0;
    while (pos < text.size()) {
        const int n = strict_sequence_at(text, pos);
        if (n > 0) {
            out.append(text.substr(pos, n));
            pos += n;
        } else {
            append(out, kReplacement);
            pos += n == 0 ? text.size() - pos : static_cast<size_t>(-n);
        }
    }
    return out;
}

}  // namespace ladder::tokenizer::utf8
