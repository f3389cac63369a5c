// The GPT-2 byte <-> unicode table, built once.
#include "ladder/tokenizer/byte_unicode.h"

#include <array>

#include "ladder/tokenizer/utf8.h"

namespace ladder::tokenizer {

namespace {

// The table covers U+0021..U+00FF and U+0100..U+0143.
constexpr uint32_t kTableEnd = 0x144;

// Printable Latin-1 bytes stand for themselves; the other 68 bytes take the
// code points from U+0100 upward, in byte order.
struct ByteTable {
    std::array<uint32_t, 256> cpt_of_byte{};
    std::array<std::string, 256> text_of_byte;
    std::array<int16_t, kTableEnd> byte_of_cpt{};  // -1: no byte

    ByteTable() {
        const auto printable = [](int b) {
            return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) ||
                   (b >= 0xAE && b <= 0xFF);
        };
        byte_of_cpt.fill(-1);
        uint32_t next = 0x100;
        for (int b = 0; b < 256; ++b) {
            cpt_of_byte[b] = printable(b) ? static_cast<uint32_t>(b) : next++;
            text_of_byte[b] = utf8::encode(cpt_of_byte[b]);
            byte_of_cpt[cpt_of_byte[b]] = static_cast<int16_t>(b);
        }
    }
};

const ByteTable& table() {
    static const ByteTable instance;
    return instance;
}

}  // namespace

const std::string& byte_to_unicode(uint8_t byte) { return table().text_of_byte[byte]; }

std::optional<uint8_t> unicode_to_byte(uint32_t cpt) {
    if (cpt >= kTableEnd) return std::nullopt;
    const int16_t byte = table().byte_of_cpt[cpt];
    if (byte < 0) return std::nullopt;
    return static_cast<uint8_t>(byte);
}

std::string bytes_to_unicode_text(std::string_view raw) {
    std::string out;
    out.reserve(raw.size() * 2);
    for (const char c : raw) out += byte_to_unicode(static_cast<uint8_t>(c));
    return out;
}

}  // namespace ladder::tokenizer
