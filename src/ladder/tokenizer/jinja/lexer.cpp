#include "ladder/tokenizer/jinja/lexer.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <optional>

#include "ladder/tokenizer/jinja/error.h"
#include "ladder/tokenizer/jinja/python_string.h"
#include "ladder/tokenizer/utf8.h"

namespace ladder::tokenizer::jinja {
namespace {

enum class TagKind { Variable, Block, Comment };

// jinja2 reads \r\n and \r as \n, and drops one newline at the very end
// (keep_trailing_newline is off).
std::string normalize_newlines(std::string_view source) {
    std::string out;
    out.reserve(source.size());
    for (size_t i = 0; i < source.size(); ++i) {
        if (source[i] == '\r') {
            out += '\n';
            if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
        } else {
            out += source[i];
        }
    }
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

int count_newlines(std::string_view text) {
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

class Lexer {
public:
    explicit Lexer(std::string_view source) : src_(normalize_newlines(source)) {}

    std::vector<Token> run() {
        while (pos_ < src_.size()) {
            if (!lex_root()) break;
        }
        push(Token::Type::End, "");
        return std::move(tokens_);
    }

private:
    // ---- the text around tags ----

    // Returns false when no tag is left.
    bool lex_root() {
        size_t start = pos_;
        TagKind kind = TagKind::Variable;
        for (;; ++start) {
            start = src_.find('{', start);
            if (start == std::string::npos || start + 1 >= src_.size()) {
                emit_data(std::string_view(src_).substr(pos_));
                pos_ = src_.size();
                return false;
            }
            const char next = src_[start + 1];
            if (next == '{' || next == '%' || next == '#') {
                kind = next == '{' ? TagKind::Variable
                                   : (next == '%' ? TagKind::Block : TagKind::Comment);
                break;
            }
        }
        size_t after = start + 2;
        const char sign =
            after < src_.size() && (src_[after] == '-' || src_[after] == '+') ? src_[after] : '\0';
        if (sign != '\0') ++after;
        std::string text = src_.substr(pos_, start - pos_);
        const int text_line = line_;
        line_ += count_newlines(text);
        strip_before_tag(text, sign, kind != TagKind::Variable);
        emit_data_at(std::move(text), text_line);
        line_starting_ = false;

        if (kind == TagKind::Block) {
            if (const auto raw_end = match_raw_begin(after)) {
                line_starting_ = src_[*raw_end - 1] == '\n';
                line_ += count_newlines(std::string_view(src_).substr(after, *raw_end - after));
                pos_ = *raw_end;
                lex_raw_body();
                return true;
            }
        }
        pos_ = after;
        if (kind == TagKind::Comment) {
            lex_comment();
        } else {
            lex_tag(kind);
        }
        return true;
    }

    // Whitespace control on the text before a tag: "-" strips all trailing
    // whitespace; otherwise lstrip_blocks strips the spaces that open the
    // tag's line, if nothing else is on it (never for {{ }}, never with "+").
    void strip_before_tag(std::string& text, char sign, bool lstrip_applies) const {
        if (sign == '-') {
            text = py::strip(text, py::Side::Right, std::nullopt);
            return;
        }
        if (sign == '+' || !lstrip_applies) return;
        const size_t line_start = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
        if (line_start == 0 && !line_starting_) return;
        const std::string_view tail = std::string_view(text).substr(line_start);
        if (tail.empty()) return;
        for (uint32_t cp : py::code_points(tail)) {
            if (!py::is_space(cp)) return;
        }
        text.resize(line_start);
    }

    // {%-? raw -?%}: the end of the tag, or nullopt if this is not one.
    std::optional<size_t> match_raw_begin(size_t at) const {
        at = skip_space(at);
        if (src_.compare(at, 3, "raw") != 0) return std::nullopt;
        at = skip_space(at + 3);
        if (src_.compare(at, 3, "-%}") == 0) return skip_space(at + 3);
        if (src_.compare(at, 2, "%}") == 0) return at + 2;  // no trim_blocks after raw
        return std::nullopt;
    }

    void lex_raw_body() {
        for (size_t at = src_.find("{%", pos_); at != std::string::npos;
             at = src_.find("{%", at + 1)) {
            size_t p = at + 2;
            const char sign =
                p < src_.size() && (src_[p] == '-' || src_[p] == '+') ? src_[p] : '\0';
            if (sign != '\0') ++p;
            p = skip_space(p);
            if (src_.compare(p, 6, "endraw") != 0) continue;
            p = skip_space(p + 6);
            const std::optional<size_t> end = match_block_end(p);
            if (!end) continue;
            std::string text = src_.substr(pos_, at - pos_);
            const int text_line = line_;
            strip_before_tag(text, sign, true);
            emit_data_at(std::move(text), text_line);
            line_ += count_newlines(std::string_view(src_).substr(pos_, *end - pos_));
            line_starting_ = src_[*end - 1] == '\n';
            pos_ = *end;
            return;
        }
        raise("syntax error at line {}: missing end of raw directive", line_);
    }

    void lex_comment() {
        for (size_t p = pos_; p + 1 < src_.size(); ++p) {
            std::optional<size_t> end;
            if (src_.compare(p, 3, "+#}") == 0) {
                end = p + 3;
            } else if (src_.compare(p, 3, "-#}") == 0) {
                end = skip_space(p + 3);
            } else if (src_.compare(p, 2, "#}") == 0) {
                end = p + 2 < src_.size() && src_[p + 2] == '\n' ? p + 3 : p + 2;  // trim_blocks
            }
            if (!end) continue;
            line_ += count_newlines(std::string_view(src_).substr(pos_, *end - pos_));
            line_starting_ = src_[*end - 1] == '\n';
            pos_ = *end;
            return;
        }
        raise("syntax error at line {}: missing end of comment tag", line_);
    }

    // ---- inside {{ }} and {% %} ----

    std::optional<size_t> match_block_end(size_t at) const {
        if (src_.compare(at, 3, "+%}") == 0) return at + 3;
        if (src_.compare(at, 3, "-%}") == 0) return skip_space(at + 3);
        if (src_.compare(at, 2, "%}") == 0) {
            return at + 2 < src_.size() && src_[at + 2] == '\n' ? at + 3 : at + 2;  // trim_blocks
        }
        return std::nullopt;
    }

    std::optional<size_t> match_variable_end(size_t at) const {
        if (src_.compare(at, 3, "-}}") == 0) return skip_space(at + 3);
        if (src_.compare(at, 2, "}}") == 0) return at + 2;
        return std::nullopt;
    }

    void lex_tag(TagKind kind) {
        push(kind == TagKind::Block ? Token::Type::BlockBegin : Token::Type::VariableBegin, "");
        std::vector<char> brackets;  // end tags count only outside (), [] and {}
        while (pos_ < src_.size()) {
            if (brackets.empty()) {
                const auto end =
                    kind == TagKind::Block ? match_block_end(pos_) : match_variable_end(pos_);
                if (end) {
                    push(kind == TagKind::Block ? Token::Type::BlockEnd : Token::Type::VariableEnd,
                         "");
                    line_ += count_newlines(std::string_view(src_).substr(pos_, *end - pos_));
                    line_starting_ = src_[*end - 1] == '\n';
                    pos_ = *end;
                    return;
                }
            }
            if (const size_t space = space_at(pos_)) {
                line_ += count_newlines(std::string_view(src_).substr(pos_, space));
                pos_ += space;
                continue;
            }
            if (lex_number() || lex_name() || lex_string()) continue;
            lex_operator(brackets);
        }
        raise("syntax error at line {}: the template ends inside a {} tag", line_,
              kind == TagKind::Block ? "{% %}" : "{{ }}");
    }

    // Digits with single underscores between them, from `at`; returns the end.
    size_t digits_end(size_t at) const {
        if (at >= src_.size() || !is_digit(src_[at])) return at;
        size_t p = at;
        while (p < src_.size()) {
            if (is_digit(src_[p])) {
                ++p;
            } else if (src_[p] == '_' && p + 1 < src_.size() && is_digit(src_[p + 1])) {
                ++p;
            } else {
                break;
            }
        }
        return p;
    }

    bool lex_number() {
        if (!is_digit(src_[pos_])) return false;
        if (lex_float() || lex_prefixed_integer()) return true;
        size_t end = pos_ + 1;
        if (src_[pos_] == '0') {  // 0, 0_0, 000: zero (0123 is two tokens, as in jinja2)
            while (end < src_.size() &&
                   (src_[end] == '0' ||
                    (src_[end] == '_' && end + 1 < src_.size() && src_[end + 1] == '0'))) {
                ++end;
            }
        } else {
            end = digits_end(pos_);
        }
        push_integer(src_.substr(pos_, end - pos_), 10);
        pos_ = end;
        return true;
    }

    bool lex_float() {
        if (pos_ > 0 && src_[pos_ - 1] == '.') return false;
        size_t p = digits_end(pos_);
        bool fraction = false;
        if (p + 1 < src_.size() && src_[p] == '.' && is_digit(src_[p + 1])) {
            p = digits_end(p + 1);
            fraction = true;
        }
        bool exponent = false;
        if (p < src_.size() && (src_[p] == 'e' || src_[p] == 'E')) {
            size_t q = p + 1;
            if (q < src_.size() && (src_[q] == '+' || src_[q] == '-')) ++q;
            if (q < src_.size() && is_digit(src_[q])) {
                p = digits_end(q);
                exponent = true;
            }
        }
        if (!fraction && !exponent) return false;
        std::string text;
        for (char c : std::string_view(src_).substr(pos_, p - pos_)) {
            if (c != '_') text += c;
        }
        Token token = make(Token::Type::Float, text);
        token.number = std::strtod(text.c_str(), nullptr);
        tokens_.push_back(std::move(token));
        pos_ = p;
        return true;
    }

    bool lex_prefixed_integer() {
        if (src_[pos_] != '0' || pos_ + 1 >= src_.size()) return false;
        const char prefix =
            static_cast<char>(std::tolower(static_cast<unsigned char>(src_[pos_ + 1])));
        const int base = prefix == 'b' ? 2 : (prefix == 'o' ? 8 : (prefix == 'x' ? 16 : 0));
        if (base == 0) return false;
        const auto is_base_digit = [base](char c) {
            const int d = std::isdigit(static_cast<unsigned char>(c))
                              ? c - '0'
                              : (std::isxdigit(static_cast<unsigned char>(c))
                                     ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                                     : 99);
            return d < base;
        };
        size_t p = pos_ + 2;
        std::string digits;
        while (p < src_.size()) {
            if (src_[p] == '_' && p + 1 < src_.size() && is_base_digit(src_[p + 1])) {
                ++p;
            } else if (!is_base_digit(src_[p])) {
                break;
            }
            digits += src_[p++];
        }
        if (digits.empty()) return false;
        push_integer(digits, base);
        pos_ = p;
        return true;
    }

    void push_integer(const std::string& text, int base) {
        std::string digits;
        for (char c : text) {
            if (c != '_') digits += c;
        }
        Token token = make(Token::Type::Integer, text);
        const auto result =
            std::from_chars(digits.data(), digits.data() + digits.size(), token.integer, base);
        if (result.ec != std::errc{}) {
            raise("syntax error at line {}: the integer {} is too large", line_, text);
        }
        tokens_.push_back(std::move(token));
    }

    bool lex_name() {
        if (!is_name_start(src_[pos_])) return false;
        size_t end = pos_ + 1;
        while (end < src_.size() && is_name_char(src_[end])) ++end;
        push(Token::Type::Name, src_.substr(pos_, end - pos_));
        pos_ = end;
        return true;
    }

    bool lex_string() {
        const char quote = src_[pos_];
        if (quote != '\'' && quote != '"') return false;
        size_t p = pos_ + 1;
        while (p < src_.size() && src_[p] != quote) p += src_[p] == '\\' ? 2 : 1;
        if (p >= src_.size()) raise("syntax error at line {}: unterminated string", line_);
        const std::string_view body = std::string_view(src_).substr(pos_ + 1, p - pos_ - 1);
        push(Token::Type::String, unescape(body));
        line_ += count_newlines(body);
        pos_ = p + 1;
        return true;
    }

    // Python's unicode-escape decoding, which jinja2 applies to literals.
    std::string unescape(std::string_view body) const {
        std::string out;
        for (size_t i = 0; i < body.size(); ++i) {
            if (body[i] != '\\' || i + 1 >= body.size()) {
                out += body[i];
                continue;
            }
            const char c = body[++i];
            switch (c) {
                case '\n':
                    break;  // a line continuation
                case '\\':
                case '\'':
                case '"':
                    out += c;
                    break;
                case 'a':
                    out += '\a';
                    break;
                case 'b':
                    out += '\b';
                    break;
                case 'f':
                    out += '\f';
                    break;
                case 'n':
                    out += '\n';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case 't':
                    out += '\t';
                    break;
                case 'v':
                    out += '\v';
                    break;
                case 'x':
                    utf8::append(out, hex_escape(body, i, 2));
                    break;
                case 'u':
                    utf8::append(out, hex_escape(body, i, 4));
                    break;
                case 'U':
                    utf8::append(out, hex_escape(body, i, 8));
                    break;
                default:
                    if (c >= '0' && c <= '7') {
                        uint32_t value = static_cast<uint32_t>(c - '0');
                        for (int n = 0; n < 2 && i + 1 < body.size() && body[i + 1] >= '0' &&
                                        body[i + 1] <= '7';
                             ++n) {
                            value = value * 8 + static_cast<uint32_t>(body[++i] - '0');
                        }
                        utf8::append(out, value);
                    } else {  // Python keeps an unknown escape as written
                        out += '\\';
                        out += c;
                    }
            }
        }
        return out;
    }

    // The n hex digits after body[i]; advances i past them.
    uint32_t hex_escape(std::string_view body, size_t& i, int n) const {
        uint32_t value = 0;
        for (int k = 0; k < n; ++k) {
            if (i + 1 >= body.size() || !std::isxdigit(static_cast<unsigned char>(body[i + 1]))) {
                raise("syntax error at line {}: a truncated \\x, \\u or \\U escape in a string",
                      line_);
            }
            const char d = static_cast<char>(std::tolower(static_cast<unsigned char>(body[++i])));
            value = value * 16 + static_cast<uint32_t>(d <= '9' ? d - '0' : d - 'a' + 10);
        }
        if (value > 0x10FFFF) raise("syntax error at line {}: illegal Unicode character", line_);
        return value;
    }

    void lex_operator(std::vector<char>& brackets) {
        static constexpr std::array<std::string_view, 6> kTwoChar = {
            "//", "**", "==", "!=", ">=", "<="};
        static constexpr std::string_view kOneChar = "+-/*%~[](){}><=.:|,;";
        const std::string_view rest = std::string_view(src_).substr(pos_);
        for (std::string_view op : kTwoChar) {
            if (rest.starts_with(op)) {
                push(Token::Type::Operator, std::string(op));
                pos_ += 2;
                return;
            }
        }
        const char c = rest.front();
        if (kOneChar.find(c) == std::string_view::npos) {
            raise("syntax error at line {}: unexpected character '{}'", line_, c);
        }
        if (c == '(' || c == '[' || c == '{') {
            brackets.push_back(c == '(' ? ')' : (c == '[' ? ']' : '}'));
        } else if (c == ')' || c == ']' || c == '}') {
            if (brackets.empty()) raise("syntax error at line {}: unexpected '{}'", line_, c);
            if (brackets.back() != c) {
                raise("syntax error at line {}: unexpected '{}', expected '{}'", line_, c,
                      brackets.back());
            }
            brackets.pop_back();
        }
        push(Token::Type::Operator, std::string(1, c));
        ++pos_;
    }

    // ---- helpers ----

    // Byte length of the whitespace code point at `at` (Python's \s), or 0.
    size_t space_at(size_t at) const {
        if (at >= src_.size()) return 0;
        const auto lead = static_cast<uint8_t>(src_[at]);
        if (lead < 0x80) return py::is_space(lead) ? 1 : 0;
        const size_t n = std::min(utf8::sequence_length(lead), src_.size() - at);
        const std::vector<uint32_t> cps =
            utf8::decode_lenient(std::string_view(src_).substr(at, n));
        return cps.size() == 1 && py::is_space(cps[0]) ? n : 0;
    }

    size_t skip_space(size_t at) const {
        while (const size_t n = space_at(at)) at += n;
        return at;
    }

    Token make(Token::Type type, std::string text) const {
        Token token;
        token.type = type;
        token.text = std::move(text);
        token.line = line_;
        return token;
    }

    void push(Token::Type type, std::string text) {
        tokens_.push_back(make(type, std::move(text)));
    }

    void emit_data(std::string_view text) {
        const int line = line_;
        line_ += count_newlines(text);
        emit_data_at(std::string(text), line);
    }

    void emit_data_at(std::string text, int line) {
        if (text.empty()) return;
        Token token = make(Token::Type::Data, std::move(text));
        token.line = line;
        tokens_.push_back(std::move(token));
    }

    std::string src_;
    size_t pos_ = 0;
    int line_ = 1;
    bool line_starting_ = true;  // the last tag ended with a newline (or nothing came yet)
    std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) { return Lexer(source).run(); }

}  // namespace ladder::tokenizer::jinja
