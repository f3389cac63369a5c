// StreamingDetokenizer: holds back the bytes of a character split across
// tokens, and turns bytes that can never form a character into U+FFFD.
#include "ladder/tokenizer/tokenizer.h"
#include "ladder/tokenizer/utf8.h"

namespace ladder::tokenizer {

std::string StreamingDetokenizer::push(TokenId id) {
    pending_ += tokenizer_.token_to_piece(id);
    std::string out;
    size_t pos = 0;
    while (pos < pending_.size()) {
        const int n = utf8::strict_sequence_at(pending_, pos);
        if (n == 0) break;  // a valid prefix: wait for the next token
        if (n > 0) {
            out.append(pending_, pos, static_cast<size_t>(n));
            pos += static_cast<size_t>(n);
        } else {
            utf8::append(out, utf8::kReplacement);
            pos += static_cast<size_t>(-n);
        }
    }
    pending_.erase(0, pos);
    return out;
}

std::string StreamingDetokenizer::flush() {
    std::string out = pending_.empty() ? std::string() : utf8::encode(utf8::kReplacement);
    pending_.clear();
    return out;
}

}  // namespace ladder::tokenizer
