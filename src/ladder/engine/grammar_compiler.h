// Grammars for structured output: a request's JSON schema, regex, EBNF or Lark
// grammar, or structural tag, compiled by xgrammar against this model's
// vocabulary. The vocabulary is prepared once (on first use); compiled
// grammars are cached by their text within a memory bound. Compiles have size
// and time limits, so one request cannot stall the others. Thread-safe: HTTP
// handlers compile, and each constrained sequence gets its own matcher.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "ladder/engine/token_constraint.h"
#include "ladder/tokenizer/tokenizer.h"
#include "ladder/util/error.h"

namespace ladder::engine {

struct GrammarSpec {
    enum class Kind {
        JsonSchema,     // source: the schema (JSON text)
        JsonObject,     // any JSON object; source unused
        Regex,          // source: the pattern
        Ebnf,           // source: xgrammar's EBNF, which reads llama.cpp's GBNF; root rule `root`
        Lark,           // source: a Lark grammar; root rule `start`
        StructuralTag,  // source: xgrammar's structural tag (JSON text)
    };
    Kind kind = Kind::JsonSchema;
    std::string source;
    // JSON kinds: free whitespace between tokens (true) or the compact form
    // `{"a": 1, "b": [2, 3]}` (false).
    bool any_whitespace = true;
};

// Whitespace between JSON tokens comes in runs of at most this many
// characters (a newline and indentation five levels deep): unbounded, a small
// model can fill max_tokens with newlines and never finish the document.
inline constexpr int kMaxJsonWhitespaceRun = 12;

struct GrammarLimits {
    size_t max_source_bytes = size_t{512} << 10;
    // Of the grammar derived from the source, in xgrammar's EBNF (a schema's
    // bounds and repetitions unfold into rules).
    size_t max_grammar_bytes = size_t{4} << 20;
    double compile_timeout_seconds = 10.0;
    int64_t cache_bytes = int64_t{512} << 20;  // compiled grammars kept for reuse
    int32_t max_concurrent_compiles = 4;
};

class GrammarError : public util::InputError {
public:
    enum class Kind { Invalid, TooLarge, TooSlow };
    GrammarError(Kind kind, const std::string& message) : util::InputError(message), kind_(kind) {}
    Kind kind() const { return kind_; }

private:
    Kind kind_;
};

// xgrammar's compiled grammar (opaque here, so that its headers stay in the
// grammar files).
class CompiledGrammar;

class GrammarCompiler {
public:
    explicit GrammarCompiler(const tokenizer::Tokenizer& tokenizer, GrammarLimits limits = {});
    ~GrammarCompiler();
    GrammarCompiler(const GrammarCompiler&) = delete;
    GrammarCompiler& operator=(const GrammarCompiler&) = delete;

    // Before the first compile (flags are read after the model is loaded).
    void set_limits(const GrammarLimits& limits);
    const GrammarLimits& limits() const { return limits_; }

    // Throws GrammarError: Invalid (with xgrammar's reason, or the warning it
    // gave where it would have ignored part of the source), TooLarge, TooSlow.
    // A compile that ran out of time goes on in the background and lands in
    // the cache, so asking again can succeed.
    std::shared_ptr<const CompiledGrammar> compile(const GrammarSpec& spec) const;

    // A fresh matcher (one per sequence). Its mask allows the vocabulary's
    // end-of-generation tokens only where the grammar may end. gate: text
    // after which the grammar starts to hold (a reasoning model's
    // "</think>"; the output is free before it); empty: from the first token.
    static std::unique_ptr<TokenConstraint> make_constraint(
        std::shared_ptr<const CompiledGrammar> grammar, std::string gate = {});

    // Bytes of compiled grammars held by the cache.
    int64_t cache_bytes() const;

private:
    struct State;
    const State& state() const;  // built on first use

    const tokenizer::Tokenizer& tokenizer_;
    GrammarLimits limits_;
    mutable std::shared_ptr<State> state_;
    mutable std::once_flag state_once_;
};

}  // namespace ladder::engine
