// Structured output in the engine: the grammar compiler on the real SmolLM2
// vocabulary, its matcher's mask, accept, rollback and end, the engine
// sampling under it, and the compiler's refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "engine_test_support.h"
#include "ladder/engine/grammar_compiler.h"

namespace ladder::engine::testing {
namespace grammar_test {

using json = nlohmann::json;

RequestParams greedy(std::vector<TokenId> prompt, int32_t max_tokens) {
    RequestParams params;
    params.prompt = std::move(prompt);
    params.sampling.temperature = 0.0f;
    params.max_tokens = max_tokens;
    return params;
}

class GrammarTest : public EngineTest {
protected:
    static std::shared_ptr<const CompiledGrammar> compile(const GrammarSpec& spec) {
        return bundle_->grammars->compile(spec);
    }
    static GrammarSpec compact_schema(const std::string& schema) {
        return {GrammarSpec::Kind::JsonSchema, schema, false};
    }
    static std::vector<float> masked(TokenConstraint& constraint) {
        std::vector<float> logits(static_cast<size_t>(bundle_->tokenizer->vocab_size()), 0.0f);
        constraint.apply_mask(logits);
        return logits;
    }
    static size_t n_allowed(const std::vector<float>& logits) {
        return static_cast<size_t>(
            std::count_if(logits.begin(), logits.end(), [](float v) { return std::isfinite(v); }));
    }
    static TokenId end_token() {
        const tokenizer::Vocabulary& vocabulary = bundle_->tokenizer->vocabulary();
        return *vocabulary.eos_id;
    }
};

constexpr const char* kPerson =
    R"({"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["name", "n"]})";

TEST_F(GrammarTest, MaskAllowsExactlyTheWayThroughAValidDocument) {
    auto constraint = GrammarCompiler::make_constraint(compile(compact_schema(kPerson)));
    const std::vector<TokenId> tokens =
        bundle_->tokenizer->encode(R"({"name": "Ann", "n": 30})", false, false);
    for (size_t i = 0; i < tokens.size(); ++i) {
        const TokenId token = tokens[i];
        const std::vector<float> logits = masked(*constraint);
        EXPECT_TRUE(std::isfinite(logits[static_cast<size_t>(token)]))
            << "token " << bundle_->tokenizer->token_to_piece(token) << " was masked";
        // Only what can open an object opens it (inside a string, most may come).
        if (i == 0) {
            EXPECT_LT(n_allowed(logits), 100u);
        }
        EXPECT_FALSE(std::isfinite(logits[static_cast<size_t>(end_token())]))
            << "EOS allowed before the object closed";
        ASSERT_TRUE(constraint->accept(token));
    }
    // The object is complete: only an end of generation may follow.
    const std::vector<float> logits = masked(*constraint);
    EXPECT_TRUE(std::isfinite(logits[static_cast<size_t>(end_token())]));
    for (size_t id = 0; id < logits.size(); ++id) {
        if (std::isfinite(logits[id])) {
            EXPECT_TRUE(bundle_->tokenizer->is_end_of_generation(static_cast<TokenId>(id))) << id;
        }
    }
    EXPECT_FALSE(constraint->is_terminated());
    ASSERT_TRUE(constraint->accept(end_token()));
    EXPECT_TRUE(constraint->is_terminated());
}

TEST_F(GrammarTest, RefusesATokenOutsideTheGrammarAndRollsBack) {
    auto constraint = GrammarCompiler::make_constraint(compile(compact_schema(kPerson)));
    const std::vector<TokenId> hello = bundle_->tokenizer->encode("hello", false, false);
    EXPECT_FALSE(constraint->accept(hello[0]));
    const std::vector<TokenId> tokens =
        bundle_->tokenizer->encode(R"({"name": "Bo", "n": 7})", false, false);
    ASSERT_GE(tokens.size(), 4u);
    ASSERT_TRUE(constraint->accept(tokens[0]));
    const std::vector<float> after_one = masked(*constraint);
    ASSERT_TRUE(constraint->accept(tokens[1]));
    ASSERT_TRUE(constraint->accept(tokens[2]));
    constraint->rollback(2);
    EXPECT_EQ(masked(*constraint), after_one);
    for (size_t i = 1; i < tokens.size(); ++i) ASSERT_TRUE(constraint->accept(tokens[i]));
}

TEST_F(GrammarTest, AGateLeavesTheOutputFreeUntilItsTextIsWritten) {
    auto constraint =
        GrammarCompiler::make_constraint(compile(compact_schema(kPerson)), "</think>");
    const size_t vocab = static_cast<size_t>(bundle_->tokenizer->vocab_size());
    const std::vector<TokenId> thinking =
        bundle_->tokenizer->encode("Hmm, a person.</think>", false, false);
    for (TokenId token : thinking) {
        EXPECT_EQ(n_allowed(masked(*constraint)), vocab) << "masked while thinking";
        ASSERT_TRUE(constraint->accept(token));
    }
    EXPECT_LT(n_allowed(masked(*constraint)), 100u) << "the grammar did not start after </think>";
    const std::vector<TokenId> answer =
        bundle_->tokenizer->encode(R"({"name": "Al", "n": 1})", false, false);
    ASSERT_TRUE(constraint->accept(answer[0]));
    ASSERT_TRUE(constraint->accept(answer[1]));
    // Back to before the token that completed the gate: free again.
    constraint->rollback(3);
    EXPECT_EQ(n_allowed(masked(*constraint)), vocab);
    ASSERT_TRUE(constraint->accept(thinking.back()));
    for (TokenId token : answer) ASSERT_TRUE(constraint->accept(token));
    ASSERT_TRUE(constraint->accept(end_token()));
    EXPECT_TRUE(constraint->is_terminated());
}

TEST_F(GrammarTest, EngineSamplesOnlyWhatTheGrammarAllows) {
    const GrammarSpec spec = compact_schema(
        R"({"type": "object", "properties": {"answer": {"enum": ["yes", "no"]},
            "why": {"type": "string", "maxLength": 12}}, "required": ["answer", "why"]})");
    auto compiled = compile(spec);
    for (float temperature : {0.0f, 1.5f}) {
        RequestParams params = greedy(encode("Is the sky blue? Answer in JSON."), 60);
        params.sampling.temperature = temperature;
        params.sampling.seed = 11;
        params.make_constraint = [compiled] { return GrammarCompiler::make_constraint(compiled); };
        const Collected c = run_alone(params);
        EXPECT_EQ(c.finish_reason, FinishReason::Stop) << c.text;
        const json parsed = json::parse(c.text, nullptr, false);
        ASSERT_FALSE(parsed.is_discarded()) << c.text;
        EXPECT_TRUE(parsed["answer"] == "yes" || parsed["answer"] == "no") << c.text;
        EXPECT_LE(parsed["why"].get<std::string>().size(), 12u) << c.text;
        EXPECT_TRUE(bundle_->tokenizer->is_end_of_generation(c.tokens.back()));
    }
}

TEST_F(GrammarTest, AGrammarCutOffByMaxTokensEndsWithLengthAndAPrefix) {
    const std::string value(40, 'x');
    auto compiled = compile(compact_schema(json{{"const", value}}.dump()));
    RequestParams params = greedy(encode("Say it:"), 4);
    params.make_constraint = [compiled] { return GrammarCompiler::make_constraint(compiled); };
    const Collected c = run_alone(params);
    EXPECT_EQ(c.finish_reason, FinishReason::Length);
    EXPECT_EQ(c.tokens.size(), 4u);
    EXPECT_EQ(json(value).dump().rfind(c.text, 0), 0u) << c.text;
}

TEST_F(GrammarTest, RefusesInvalidGrammarsAndWhatItWouldIgnore) {
    const auto kind_of = [](const GrammarSpec& spec) -> std::string {
        try {
            bundle_->grammars->compile(spec);
        } catch (const GrammarError& error) {
            return error.kind() == GrammarError::Kind::Invalid ? "invalid" : "other";
        }
        return "compiled";
    };
    EXPECT_EQ(kind_of({GrammarSpec::Kind::Regex, "(ab", true}), "invalid");
    EXPECT_EQ(kind_of({GrammarSpec::Kind::Ebnf, "root ::= \"a\" |", true}), "invalid");
    EXPECT_EQ(kind_of({GrammarSpec::Kind::JsonSchema, "{\"type\": ", true}), "invalid");
    // xgrammar would drop this multipleOf with a warning: refused instead.
    EXPECT_EQ(
        kind_of({GrammarSpec::Kind::JsonSchema, R"({"type": "number", "multipleOf": 0.5})", true}),
        "invalid");
    EXPECT_EQ(kind_of({GrammarSpec::Kind::StructuralTag, R"({"format": {"type": "nope"}})", true}),
              "invalid");
    EXPECT_EQ(kind_of({GrammarSpec::Kind::Regex, "[a-z]{2,5}", true}), "compiled");
}

TEST_F(GrammarTest, SizeAndTimeLimitsRefuse) {
    GrammarCompiler compiler(*bundle_->tokenizer, {.max_source_bytes = 16});
    try {
        compiler.compile({GrammarSpec::Kind::Regex, std::string(17, 'a'), true});
        ADD_FAILURE() << "a source over the limit compiled";
    } catch (const GrammarError& error) {
        EXPECT_EQ(error.kind(), GrammarError::Kind::TooLarge);
    }
    GrammarCompiler slow(*bundle_->tokenizer, {.compile_timeout_seconds = 1e-6});
    try {
        slow.compile({GrammarSpec::Kind::JsonSchema, kPerson, true});
        ADD_FAILURE() << "compiled within a microsecond";
    } catch (const GrammarError& error) {
        EXPECT_EQ(error.kind(), GrammarError::Kind::TooSlow);
    }
}

}  // namespace grammar_test
}  // namespace ladder::engine::testing
