#include "ladder/engine/grammar_compiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <optional>
#include <semaphore>
#include <thread>

#include "ladder/engine/grammar_matcher.h"
#include "ladder/engine/marker_tokens.h"
#include "ladder/engine/xgrammar_log.h"

namespace ladder::engine {

namespace {

using Clock = std::chrono::steady_clock;

// Threads one compile may use to precompute its token masks.
int compile_threads() {
    return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
}

// xgrammar's view of the vocabulary is the text each token puts in the output
// (so a grammar accepts exactly what the client reads): control tokens are
// empty, which xgrammar takes as tokens no grammar may produce, save the
// end-of-generation ones, which it allows only where the grammar may end.
xgrammar::TokenizerInfo tokenizer_info(const tokenizer::Tokenizer& tokenizer) {
    const std::vector<tokenizer::TokenId> markers = marker_tokens(tokenizer);
    std::vector<std::string> pieces;
    std::vector<int32_t> stop_ids;
    pieces.reserve(static_cast<size_t>(tokenizer.vocab_size()));
    for (tokenizer::TokenId id = 0; id < tokenizer.vocab_size(); ++id) {
        pieces.push_back(output_piece(tokenizer, markers, id));
        if (tokenizer.is_end_of_generation(id)) stop_ids.push_back(id);
    }
    return xgrammar::TokenizerInfo(pieces, xgrammar::VocabType::RAW, tokenizer.vocab_size(),
                                   stop_ids);
}

const char* kAnyJsonObject = R"({"type": "object"})";

// The grammar a spec describes, built on the calling thread. Every warning
// xgrammar gives here says it would ignore part of the source: refused.
xgrammar::Grammar build_grammar(const GrammarSpec& spec, const xgrammar::TokenizerInfo& info) {
    using Kind = GrammarSpec::Kind;
    XgrammarWarnings warnings;
    std::optional<xgrammar::Grammar> grammar;
    try {
        switch (spec.kind) {
            case Kind::JsonSchema:
                grammar = xgrammar::Grammar::FromJSONSchema(spec.source, spec.any_whitespace,
                                                            std::nullopt, std::nullopt, true,
                                                            kMaxJsonWhitespaceRun);
                break;
            case Kind::JsonObject:
                // Not strict: any properties, any values.
                grammar = xgrammar::Grammar::FromJSONSchema(kAnyJsonObject, spec.any_whitespace,
                                                            std::nullopt, std::nullopt, false,
                                                            kMaxJsonWhitespaceRun);
                break;
            case Kind::Regex:
                grammar = xgrammar::Grammar::FromRegex(spec.source);
                break;
            case Kind::Ebnf:
                grammar = xgrammar::Grammar::FromEBNF(spec.source, "root");
                break;
            case Kind::Lark:
                grammar = xgrammar::Grammar::FromLark(spec.source, info);
                break;
            case Kind::StructuralTag: {
                auto result = xgrammar::Grammar::FromStructuralTag(spec.source, info);
                if (auto* error = std::get_if<xgrammar::StructuralTagError>(&result)) {
                    throw GrammarError(
                        GrammarError::Kind::Invalid,
                        std::visit([](const auto& e) { return std::string(e.what()); }, *error));
                }
                grammar = std::get<xgrammar::Grammar>(std::move(result));
                break;
            }
        }
    } catch (const GrammarError&) {
        throw;
    } catch (const std::exception& error) {
        throw GrammarError(GrammarError::Kind::Invalid, xgrammar_error_message(error));
    }
    if (!warnings.messages().empty()) {
        throw GrammarError(GrammarError::Kind::Invalid,
                           fmt::format("not supported: {}", warnings.messages().front()));
    }
    return std::move(*grammar);
}

// One compile on its own thread; the requester may stop waiting, the compile
// finishes anyway (and is cached).
struct CompileJob {
    std::mutex mutex;
    std::condition_variable done;
    std::optional<xgrammar::CompiledGrammar> result;
    std::string error;
    bool finished = false;
};

}  // namespace

struct GrammarCompiler::State {
    State(const tokenizer::Tokenizer& tokenizer, const GrammarLimits& limits)
        : info(tokenizer_info(tokenizer)),
          compiler(info, compile_threads(), true, limits.cache_bytes),
          n_slots(std::max(limits.max_concurrent_compiles, 1)),
          slots(n_slots) {}

    xgrammar::TokenizerInfo info;
    xgrammar::GrammarCompiler compiler;  // thread-safe, with its own bounded cache
    int n_slots;
    std::counting_semaphore<> slots;     // compiles running, finished or abandoned
};

GrammarCompiler::GrammarCompiler(const tokenizer::Tokenizer& tokenizer, GrammarLimits limits)
    : tokenizer_(tokenizer), limits_(limits) {}

GrammarCompiler::~GrammarCompiler() {
    // A compile that ran past its caller's deadline still runs on its own
    // thread: wait for it, so that none outlives the compiler (and, at exit,
    // the statics it reads).
    if (!state_) return;
    for (int i = 0; i < state_->n_slots; ++i) state_->slots.acquire();
    for (int i = 0; i < state_->n_slots; ++i) state_->slots.release();
}

void GrammarCompiler::set_limits(const GrammarLimits& limits) { limits_ = limits; }

const GrammarCompiler::State& GrammarCompiler::state() const {
    std::call_once(state_once_, [&] { state_ = std::make_shared<State>(tokenizer_, limits_); });
    return *state_;
}

std::shared_ptr<const CompiledGrammar> GrammarCompiler::compile(const GrammarSpec& spec) const {
    if (spec.source.size() > limits_.max_source_bytes) {
        throw GrammarError(GrammarError::Kind::TooLarge,
                           fmt::format("it has {} bytes; at most {} are accepted",
                                       spec.source.size(), limits_.max_source_bytes));
    }
    const State& shared = state();
    std::shared_ptr<State> keep_alive = state_;
    xgrammar::Grammar grammar = build_grammar(spec, shared.info);
    const size_t grammar_bytes = grammar.ToString().size();
    if (grammar_bytes > limits_.max_grammar_bytes) {
        throw GrammarError(GrammarError::Kind::TooLarge,
                           fmt::format("its grammar unfolds to {} bytes; at most {} are accepted",
                                       grammar_bytes, limits_.max_grammar_bytes));
    }

    const auto timeout = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(limits_.compile_timeout_seconds));
    const auto deadline = Clock::now() + timeout;
    const auto too_slow = [&] {
        return GrammarError(
            GrammarError::Kind::TooSlow,
            fmt::format("its compile did not finish within {} s", limits_.compile_timeout_seconds));
    };
    if (!keep_alive->slots.try_acquire_until(deadline)) throw too_slow();
    auto job = std::make_shared<CompileJob>();
    std::thread([job, keep_alive, grammar = std::move(grammar)]() mutable {
        std::optional<xgrammar::CompiledGrammar> result;
        std::string error;
        try {
            // Freed here, before the slot is given back (see ~GrammarCompiler).
            const xgrammar::Grammar source = std::move(grammar);
            result = keep_alive->compiler.CompileGrammar(source);
        } catch (const std::exception& e) {
            error = xgrammar_error_message(e);
        }
        {
            const std::lock_guard lock(job->mutex);
            job->result = std::move(result);
            job->error = std::move(error);
            job->finished = true;
        }
        job->done.notify_all();
        keep_alive->slots.release();
    }).detach();

    std::unique_lock lock(job->mutex);
    if (!job->done.wait_until(lock, deadline, [&] { return job->finished; })) throw too_slow();
    if (!job->result) throw GrammarError(GrammarError::Kind::Invalid, job->error);
    return std::make_shared<const CompiledGrammar>(std::move(*job->result),
                                                   tokenizer_.vocab_size());
}

std::unique_ptr<TokenConstraint> GrammarCompiler::make_constraint(
    std::shared_ptr<const CompiledGrammar> grammar, std::string gate) {
    return std::make_unique<GrammarConstraint>(std::move(grammar), std::move(gate));
}

int64_t GrammarCompiler::cache_bytes() const {
    return state_ ? state_->compiler.GetCacheSizeBytes() : 0;
}

}  // namespace ladder::engine
