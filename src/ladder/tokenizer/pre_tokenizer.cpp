// Pre-tokenizer regexes per llama.cpp pre name, compiled once with PCRE2.
#include "ladder/tokenizer/pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>

#include "ladder/tokenizer/utf8.h"
#include "ladder/util/check.h"
#include "ladder/util/error.h"

namespace ladder::tokenizer {

namespace {

// llama.cpp's whitespace set (its \s): PCRE2's \s differs (it lacks U+0085
// and has U+180E), so the patterns spell the class out. "{ws}" in a pattern
// below is replaced by this list, inside brackets.
constexpr std::string_view kWhitespace =
    R"(\t\n\x{0B}\f\r\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A})"
    R"(\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";

// The patterns, as llama.cpp writes them (its llama3/qwen2 forms spell the
// case-insensitive contractions out), with \s and \S as {ws} classes.
constexpr std::string_view kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^{ws}\p{L}\p{N}]+|[{ws}]+(?![^{ws}]))";
constexpr std::string_view kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+)"
    R"(|\p{N}{1,3}| ?[^{ws}\p{L}\p{N}]+[\r\n]*|[{ws}]*[\r\n]+|[{ws}]+(?![^{ws}])|[{ws}]+)";
constexpr std::string_view kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+)"
    R"(|\p{N}| ?[^{ws}\p{L}\p{N}]+[\r\n]*|[{ws}]*[\r\n]+|[{ws}]+(?![^{ws}])|[{ws}]+)";
constexpr std::string_view kDigit = R"(\p{N})";
constexpr std::string_view kDigits = R"(\p{N}+)";
constexpr std::string_view kDefaultPunct = R"([\p{P}\$\+<=>\^~\|]+)";
constexpr std::string_view kThreeAsciiDigits = R"([0-9][0-9][0-9])";

std::string expand(std::string_view pattern) {
    std::string out;
    for (size_t pos = 0; pos < pattern.size();) {
        if (pattern.substr(pos, 4) == "{ws}") {
            out += kWhitespace;
            pos += 4;
        } else {
            out += pattern[pos++];
        }
    }
    return out;
}

std::vector<std::string> expand_all(std::initializer_list<std::string_view> patterns) {
    std::vector<std::string> out;
    for (const auto p : patterns) out.push_back(expand(p));
    return out;
}

bool is_one_of(const std::string& name, std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

PreTokenizerSpec pre_tokenizer_spec(const std::string& pre) {
    PreTokenizerSpec spec;
    // The groups follow llama.cpp's llama-vocab.cpp: names that share a regex
    // list there share it here.
    if (pre.empty() || pre == "default") {
        spec.patterns = expand_all({kDefaultPunct, kGpt2, kDigits, kThreeAsciiDigits});
    } else if (is_one_of(pre, {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1",
                               "pixtral", "midm-2.0", "lfm2"})) {
        spec.patterns = expand_all({kLlama3});
        spec.ignore_merges = true;
        spec.add_bos_default = true;
    } else if (is_one_of(pre, {"dbrx", "smaug-bpe"})) {
        spec.patterns = expand_all({kLlama3});
    } else if (is_one_of(pre, {"smollm", "starcoder", "refact", "command-r", "codeshell",
                               "exaone", "minerva-7b", "mellum2"})) {
        // Digits are split one by one before the GPT-2 pattern runs.
        spec.patterns = expand_all({kDigit, kGpt2});
    } else if (is_one_of(pre, {"gpt-2", "gpt2", "phi-2", "mpt", "olmo", "jais", "trillion",
                               "granite-docling"})) {
        // "gpt2" is not a llama.cpp name (it says "gpt-2"); accepted as an alias.
        spec.patterns = expand_all({kGpt2});
    } else if (is_one_of(pre, {"qwen2", "deepseek-r1-qwen", "stablelm2", "hunyuan"})) {
        spec.patterns = expand_all({kQwen2});
    } else {
        util::fail("unsupported pre-tokenizer '{}' (tokenizer.ggml.pre); ladder knows default, "
                   "gpt-2, smollm, llama-bpe, qwen2 and their aliases",
                   pre);
    }
    return spec;
}

// One compiled pattern with its JIT code and a reusable match-data size.
class Regex {
public:
    explicit Regex(const std::string& pattern) {
        int error_code = 0;
        PCRE2_SIZE error_offset = 0;
        code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                              PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr);
        if (code_ == nullptr) {
            PCRE2_UCHAR message[256];
            pcre2_get_error_message(error_code, message, sizeof(message));
            util::fail("pre-tokenizer regex does not compile at offset {}: {}", error_offset,
                       reinterpret_cast<const char*>(message));
        }
        // JIT is an optimisation: the interpreter gives the same matches.
        jit_ = pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE) == 0;
    }
    ~Regex() { pcre2_code_free(code_); }
    Regex(const Regex&) = delete;
    Regex& operator=(const Regex&) = delete;

    // Finds the first match in subject[start, size); returns false when none.
    bool find(const char* subject, size_t size, size_t start, pcre2_match_data* match,
              size_t& begin, size_t& end) const {
        const auto* s = reinterpret_cast<PCRE2_SPTR>(subject);
        // The subject was made valid UTF-8 by the caller, so the check is skipped.
        int rc = jit_ ? pcre2_jit_match(code_, s, size, start, PCRE2_NO_UTF_CHECK, match, nullptr)
                      : PCRE2_ERROR_JIT_STACKLIMIT;
        // The interpreter keeps its backtracking state on the heap, so it
        // takes over where the JIT's fixed stack runs out.
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
            rc = pcre2_match(code_, s, size, start, PCRE2_NO_UTF_CHECK, match, nullptr);
        }
        if (rc == PCRE2_ERROR_NOMATCH) return false;
        if (rc < 0) {
            PCRE2_UCHAR message[256];
            pcre2_get_error_message(rc, message, sizeof(message));
            util::fail("text cannot be pre-tokenized: {}", reinterpret_cast<const char*>(message));
        }
        const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
        begin = ovector[0];
        end = ovector[1];
        return true;
    }

    pcre2_code* code() const { return code_; }

private:
    pcre2_code* code_ = nullptr;
    bool jit_ = false;
};

PreTokenizer::PreTokenizer(const std::vector<std::string>& patterns) {
    for (const auto& pattern : patterns) regexes_.push_back(std::make_unique<Regex>(pattern));
}

PreTokenizer::~PreTokenizer() = default;

std::vector<std::string> PreTokenizer::split(std::string_view text) const {
    const std::vector<uint32_t> cpts = utf8::decode_lenient(text);

    // The regex subject: the code points re-encoded as valid UTF-8. Surrogates
    // (which the lenient decoder lets through) are not valid UTF-8 for PCRE2;
    // they stand in as U+E000, which like them is in none of the classes the
    // patterns use. byte_at[i] is where code point i starts in the subject.
    std::string subject;
    subject.reserve(text.size());
    std::vector<size_t> byte_at(cpts.size() + 1);
    for (size_t i = 0; i < cpts.size(); ++i) {
        byte_at[i] = subject.size();
        const uint32_t cpt = cpts[i];
        utf8::append(subject, (cpt >= 0xD800 && cpt <= 0xDFFF) ? 0xE000 : cpt);
    }
    byte_at[cpts.size()] = subject.size();
    const auto cpt_index = [&](size_t byte) {
        return static_cast<size_t>(std::lower_bound(byte_at.begin(), byte_at.end(), byte) -
                                   byte_at.begin());
    };

    // Pieces as [begin, end) code point ranges; the first is the whole text.
    std::vector<std::pair<size_t, size_t>> pieces;
    if (!cpts.empty()) pieces.emplace_back(0, cpts.size());

    pcre2_match_data* match = nullptr;
    std::vector<std::pair<size_t, size_t>> next;
    for (const auto& regex : regexes_) {
        match = pcre2_match_data_create_from_pattern(regex->code(), nullptr);
        LADDER_CHECK(match != nullptr, "out of memory for PCRE2 match data");
        next.clear();
        for (const auto& [piece_begin, piece_end] : pieces) {
            const char* base = subject.data() + byte_at[piece_begin];
            const size_t size = byte_at[piece_end] - byte_at[piece_begin];
            const size_t base_byte = byte_at[piece_begin];
            size_t done = 0;  // bytes of this piece already emitted
            size_t start = 0;
            size_t begin = 0, end = 0;
            while (start < size && regex->find(base, size, start, match, begin, end)) {
                if (end == begin) {  // no pattern matches empty, but never loop on one
                    start = end + 1;
                    while (start < size && (static_cast<uint8_t>(base[start]) & 0xC0) == 0x80) {
                        ++start;
                    }
                    continue;
                }
                if (begin > done) {
                    next.emplace_back(cpt_index(base_byte + done), cpt_index(base_byte + begin));
                }
                next.emplace_back(cpt_index(base_byte + begin), cpt_index(base_byte + end));
                done = start = end;
            }
            if (done < size) next.emplace_back(cpt_index(base_byte + done), piece_end);
        }
        pcre2_match_data_free(match);
        pieces.swap(next);
    }

    std::vector<std::string> words;
    words.reserve(pieces.size());
    for (const auto& [begin, end] : pieces) {
        std::string word;
        for (size_t i = begin; i < end; ++i) utf8::append(word, cpts[i]);
        words.push_back(std::move(word));
    }
    return words;
}

}  // namespace ladder::tokenizer
