// Speculative decoding in the engine on the real models: with every drafter,
// outputs equal speculation off token for token (greedy, and seeded sampling
// for the point-mass drafters) alone, in a mixed batch, under a KV budget that
// preempts, and with prefix-cache hits; after each run every KV block is free
// and every cached block holds the K/V of its own tokens (never of a rejected
// draft); the counters add up. The draft model's sampled output follows the
// target's distribution (a chi-square test against its exact probabilities).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "chi_square.h"
#include "engine_test_support.h"
#include "ladder/engine/draft_model_drafter.h"
#include "ladder/util/error.h"

namespace ladder::engine::testing {
namespace {

std::string fixture_path(const char* file_name) {
    return (std::filesystem::path(LADDER_BINARY_DIR) / "fixtures" / file_name).string();
}
// The draft-model pair: a higher-precision copy of SmolLM2 as the target
// (written by `make model-draft-pair`), the Q4_1 file as the draft.
std::string q8_target_path() { return fixture_path("SmolLM2-135M-Instruct.Q8_0.gguf"); }

SpeculativeConfig speculation(SpeculativeMethod method, int32_t n_tokens = 5) {
    SpeculativeConfig config;
    config.method = method;
    config.num_speculative_tokens = n_tokens;
    config.prompt_lookup_max = 4;
    config.prompt_lookup_min = 2;
    // Every decode drafts in full: what is tested must not depend on timing.
    config.adaptive = false;
    if (method == SpeculativeMethod::DraftModel) config.model = default_model_path();
    return config;
}

const char* kCopyPrompt =
    "Copy the list exactly.\nList: apples, pears, plums, figs, dates, limes, kiwis, grapes, "
    "melons, lemons, cherries, peaches.\nCopy: apples, pears, plums, figs, dates, limes,";

RequestParams request(const std::vector<TokenId>& prompt, int32_t max_tokens, float temperature,
                      uint64_t seed = 7) {
    RequestParams params;
    params.prompt = prompt;
    params.max_tokens = max_tokens;
    params.sampling.temperature = temperature;
    params.sampling.seed = seed;
    params.ignore_eos = true;
    return params;
}

struct EngineRun {
    std::map<RequestId, Collected> results;
    EngineStats stats;
    std::unique_ptr<EngineCore> core;
};

// Runs batches of requests in turn (each batch submitted at once, run to
// the end), on one engine.
EngineRun run_batches(ModelBundle& bundle, EngineConfig config,
                      const std::vector<std::vector<RequestParams>>& batches) {
    EngineRun run;
    run.core =
        std::make_unique<EngineCore>(*bundle.model, *bundle.tokenizer, shared_pool(), config);
    uint64_t id = 1;
    for (const auto& batch : batches) {
        for (const RequestParams& params : batch) {
            run.core->add_request(RequestId{id}, params,
                                  EngineTest::collect_into(run.results, RequestId{id}));
            ++id;
        }
        for (int guard = 0; run.core->has_work(); ++guard) {
            EXPECT_LT(guard, 100000) << "the engine made no progress";
            if (guard >= 100000) break;
            run.core->step();
        }
    }
    run.stats = run.core->stats();
    return run;
}

// Every block free; every cached block of the speculative run holds exactly
// the K/V the run without speculation cached for the same hash (the same
// tokens from the start of the sequence), so none holds a rejected draft.
void expect_clean_kv(const EngineRun& speculative, const EngineRun& reference) {
    EXPECT_TRUE(speculative.core->all_blocks_free()) << "KV blocks are still held";
    const kv::BlockPool& pool = speculative.core->block_pool();
    const kv::BlockPool& reference_pool = reference.core->block_pool();
    const model::KvCacheStorage& kv = speculative.core->kv_storage();
    const model::KvCacheStorage& reference_kv = reference.core->kv_storage();
    const model::KvCacheShape& shape = kv.shape();
    const size_t n_halves = static_cast<size_t>(shape.block_size) * shape.head_dim;
    int n_compared = 0;
    for (kv::BlockId block = 0; block < pool.n_blocks(); ++block) {
        const std::optional<kv::BlockHash>& hash = pool.cached_hash(block);
        if (!hash) continue;
        const std::optional<kv::BlockId> twin = reference_pool.find_cached(*hash);
        if (!twin) continue;
        ++n_compared;
        for (int32_t layer = 0; layer < shape.n_layers; ++layer) {
            if (kv.in_window_group(layer)) continue;  // block ids of the other group
            for (int32_t head = 0; head < shape.n_kv_heads; ++head) {
                ASSERT_EQ(std::memcmp(kv.keys(layer, block, head),
                                      reference_kv.keys(layer, *twin, head), n_halves * 2),
                          0)
                    << "cached block " << block << " holds other keys (layer " << layer << ")";
                ASSERT_EQ(std::memcmp(kv.values(layer, block, head),
                                      reference_kv.values(layer, *twin, head), n_halves * 2),
                          0)
                    << "cached block " << block << " holds other values (layer " << layer << ")";
            }
        }
    }
    EXPECT_GT(n_compared, 0) << "no cached block to compare: the test checks nothing";
}

// accepted <= drafted, per-position counts summing to accepted and never
// rising with the position, and speculation that actually happened.
void expect_counters_add_up(const SpecDecodeStats& spec) {
    EXPECT_GT(spec.n_draft_tokens, 0) << "nothing was drafted: the test compares nothing";
    EXPECT_GT(spec.n_accepted_tokens, 0) << "no draft was accepted";
    EXPECT_LE(spec.n_accepted_tokens, spec.n_draft_tokens);
    EXPECT_LE(spec.n_drafts, spec.n_draft_tokens);
    int64_t sum = 0;
    for (size_t i = 0; i < spec.n_accepted_per_position.size(); ++i) {
        sum += spec.n_accepted_per_position[i];
        if (i > 0) {
            EXPECT_LE(spec.n_accepted_per_position[i], spec.n_accepted_per_position[i - 1]);
        }
        EXPECT_LE(spec.n_accepted_per_position[i], spec.n_drafts);
    }
    EXPECT_EQ(sum, spec.n_accepted_tokens);
}

void expect_same_outputs(const EngineRun& speculative, const EngineRun& reference,
                         const std::vector<uint64_t>& ids) {
    for (const uint64_t id : ids) {
        const Collected& got = speculative.results.at(RequestId{id});
        const Collected& want = reference.results.at(RequestId{id});
        EXPECT_EQ(got.tokens, want.tokens) << "request " << id;
        EXPECT_EQ(got.text, want.text) << "request " << id;
        EXPECT_EQ(got.finish_reason, want.finish_reason) << "request " << id;
        ASSERT_EQ(got.logprobs.size(), want.logprobs.size()) << "request " << id;
        for (size_t i = 0; i < got.logprobs.size(); ++i) {
            EXPECT_EQ(got.logprobs[i].logprob, want.logprobs[i].logprob) << id << " at " << i;
            EXPECT_EQ(got.logprobs[i].top, want.logprobs[i].top) << id << " at " << i;
        }
    }
}

struct Drafter {
    SpeculativeMethod method;
    const char* name;
};
const Drafter kDrafters[] = {{SpeculativeMethod::Ngram, "ngram"},
                             {SpeculativeMethod::Suffix, "suffix"},
                             {SpeculativeMethod::DraftModel, "draft_model"}};

class SpeculativeEngineTest : public EngineTest {
protected:
    // The target: the default model, or for the draft model the Q8_0 copy
    // (the Q4_1 file drafts for it).
    ModelBundle* target_for(SpeculativeMethod method) {
        if (method != SpeculativeMethod::DraftModel) return bundle_;
        return shared_model(q8_target_path());
    }

    // Runs the batches with speculation off, then with each drafter, on one
    // engine config. exact_ids must equal speculation off token for token;
    // sampled_ids too, except with the draft model, whose rejection sampling
    // draws differently (its distribution is tested below).
    void compare(EngineConfig config, const std::vector<std::vector<RequestParams>>& batches,
                 const std::vector<uint64_t>& exact_ids, const std::vector<uint64_t>& sampled_ids) {
        std::map<ModelBundle*, EngineRun> references;
        for (const Drafter& drafter : kDrafters) {
            SCOPED_TRACE(drafter.name);
            ModelBundle* target = target_for(drafter.method);
            if (target == nullptr) {
                ADD_FAILURE() << "no Q8_0 target; run `make model-draft-pair`";
                continue;
            }
            // ngram and suffix share the run without speculation.
            auto [it, added] = references.try_emplace(target);
            if (added) it->second = run_batches(*target, config, batches);
            const EngineRun& reference = it->second;
            EngineConfig speculative_config = config;
            speculative_config.speculative = speculation(drafter.method);
            const EngineRun speculative = run_batches(*target, speculative_config, batches);
            std::vector<uint64_t> ids = exact_ids;
            if (drafter.method != SpeculativeMethod::DraftModel)
                ids.insert(ids.end(), sampled_ids.begin(), sampled_ids.end());
            expect_same_outputs(speculative, reference, ids);
            expect_counters_add_up(speculative.stats.spec_decode);
            if (config.prefix_caching) expect_clean_kv(speculative, reference);
            EXPECT_TRUE(speculative.core->all_blocks_free());
            check(drafter, speculative.stats);
        }
    }
    // A case's own check of each speculative run.
    std::function<void(const Drafter&, const EngineStats&)> check = [](const Drafter&,
                                                                       const EngineStats&) {};
};

TEST_F(SpeculativeEngineTest, GreedyAloneEqualsSpeculationOff) {
    // Suffix drafts from earlier requests: the same request twice.
    const RequestParams copy = request(encode(kCopyPrompt), 28, 0.0f);
    compare({.max_num_seqs = 4}, {{copy}, {copy}}, {1, 2}, {});
}

TEST_F(SpeculativeEngineTest, MixedBatchEqualsSpeculationOff) {
    const std::vector<TokenId> copy = encode(kCopyPrompt);
    RequestParams with_logprobs = request(encode("Count: one, two, three, four,"), 16, 0.0f);
    with_logprobs.logprobs = 3;
    with_logprobs.logit_bias = LogitBias{{11, -2.0f}};
    RequestParams penalized = request(copy, 20, 0.0f);
    penalized.sampling.repetition_penalty = 1.3f;
    RequestParams stopped = request(copy, 24, 0.0f);
    stopped.stop = StopStrings({"lemons"});
    RequestParams sampled = request(copy, 20, 0.8f, 11);
    sampled.sampling.top_p = 0.95f;
    sampled.sampling.top_k = 40;
    const std::vector<RequestParams> batch = {request(copy, 24, 0.0f), with_logprobs, penalized,
                                              stopped, sampled};
    compare({.max_num_seqs = 8}, {batch, batch}, {1, 2, 3, 4, 6, 7, 8, 9}, {5, 10});
}

TEST_F(SpeculativeEngineTest, PreemptionUnderASmallKvBudgetEqualsSpeculationOff) {
    const std::vector<TokenId> copy = encode(kCopyPrompt);
    std::vector<RequestParams> batch;
    for (int i = 0; i < 4; ++i) batch.push_back(request(copy, 64, i == 3 ? 0.8f : 0.0f, i));
    // 16 blocks of 16 tokens: four sequences of ~115 tokens cannot all fit.
    const int64_t block_bytes = int64_t{2} * 30 * 3 * 64 * 2 * 16;
    check = [](const Drafter& drafter, const EngineStats& stats) {
        EXPECT_GT(stats.n_preemptions, 0) << drafter.name << ": nothing was preempted";
    };
    compare({.kv_cache_bytes = 16 * block_bytes, .max_num_seqs = 4}, {batch}, {1, 2, 3}, {4});
}

TEST_F(SpeculativeEngineTest, PrefixCacheHitsEqualSpeculationOff) {
    const std::vector<TokenId> copy = encode(kCopyPrompt);
    const std::vector<TokenId> longer = encode(std::string(kCopyPrompt) + " grapes, melons");
    check = [](const Drafter& drafter, const EngineStats& stats) {
        EXPECT_GT(stats.n_prefix_hit_tokens, 0) << drafter.name << ": no prefix hit";
    };
    compare({.max_num_seqs = 4},
            {{request(copy, 24, 0.0f)}, {request(longer, 24, 0.0f), request(copy, 24, 0.0f)}},
            {1, 2, 3}, {});
}

TEST_F(SpeculativeEngineTest, TheDraftModelComputesAPromptInTheStepsTheTargetDoes) {
    // A prompt of three chunks or more: after each prompt step the draft
    // holds the KV of everything the target computed, so the first decode
    // steps have only the last prompt token and the new ones left to catch up.
    ModelBundle* target = target_for(SpeculativeMethod::DraftModel);
    ASSERT_NE(target, nullptr) << "no Q8_0 target; run `make model-draft-pair`";
    EngineConfig config{.max_num_seqs = 1, .max_num_batched_tokens = 16};
    config.speculative = speculation(SpeculativeMethod::DraftModel);
    EngineCore core(*target->model, *target->tokenizer, shared_pool(), config);
    const std::vector<TokenId> prompt = encode(kCopyPrompt);
    ASSERT_GT(prompt.size(), 32u);
    std::map<RequestId, Collected> results;
    core.add_request(RequestId{1}, request(prompt, 8, 0.0f), collect_into(results, RequestId{1}));
    const auto& drafter = dynamic_cast<const DraftModelDrafter&>(core.speculator()->drafter());
    const int32_t block_size = core.kv_plan().block_size;
    for (int32_t computed = 16; computed < static_cast<int32_t>(prompt.size()); computed += 16) {
        core.step();
        EXPECT_EQ(drafter.n_blocks_used(), (computed + block_size - 1) / block_size)
            << "after the prompt step that computed " << computed << " tokens";
    }
    run_to_end(core);
    EXPECT_EQ(results[RequestId{1}].tokens.size(), 8u);
    EXPECT_EQ(drafter.n_blocks_used(), 0);
    EXPECT_TRUE(core.all_blocks_free());
}

TEST_F(SpeculativeEngineTest, SeededSamplingEqualsSpeculationOff) {
    std::vector<RequestParams> batch;
    for (uint64_t seed = 0; seed < 4; ++seed) {
        RequestParams params = request(encode(kCopyPrompt), 28, 0.7f, seed);
        params.sampling.top_k = 20;
        params.sampling.min_p = 0.05f;
        batch.push_back(params);
    }
    // The draft model's runs only check that the counters add up and the KV is clean.
    compare({.max_num_seqs = 8}, {batch, batch}, {}, {1, 2, 3, 4, 5, 6, 7, 8});
}

// The target's own distribution of the first two tokens after prompt, as the
// sampler shapes it (temperature 1, the top k): p(a) p(b | a) from the raw
// log-probabilities of its k most likely tokens, read without speculation.
std::map<std::pair<TokenId, TokenId>, double> two_token_distribution(
    ModelBundle& target, const std::vector<TokenId>& prompt, int32_t top_k) {
    const auto top_probabilities = [&](const std::vector<TokenId>& context) {
        RequestParams params = request(context, 1, 0.0f);
        params.logprobs = top_k;
        EngineCore core(*target.model, *target.tokenizer, shared_pool(), {.max_num_seqs = 1});
        std::map<RequestId, Collected> results;
        core.add_request(RequestId{1}, params, EngineTest::collect_into(results, RequestId{1}));
        while (core.has_work()) core.step();
        const std::vector<std::pair<TokenId, float>>& top =
            results[RequestId{1}].logprobs.at(0).top;
        double total = 0.0;
        for (const auto& [id, logprob] : top) total += std::exp(static_cast<double>(logprob));
        std::vector<std::pair<TokenId, double>> out;
        for (const auto& [id, logprob] : top)
            out.push_back({id, std::exp(static_cast<double>(logprob)) / total});
        return out;
    };
    std::map<std::pair<TokenId, TokenId>, double> distribution;
    for (const auto& [first, p_first] : top_probabilities(prompt)) {
        std::vector<TokenId> context = prompt;
        context.push_back(first);
        for (const auto& [second, p_second] : top_probabilities(context))
            distribution[{first, second}] = p_first * p_second;
    }
    return distribution;
}

// Rejection sampling end to end: the first two tokens (the second drafted by
// the Q4_1 draft and verified by the Q8_0 target) of 2,000 seeded requests,
// against the target's exact distribution (a chi-square goodness of fit).
TEST_F(SpeculativeEngineTest, DraftModelSamplesFollowTheTargetDistribution) {
    ModelBundle* target = shared_model(q8_target_path());
    ASSERT_NE(target, nullptr) << "no Q8_0 target; run `make model-draft-pair`";
    const std::vector<TokenId> prompt = encode("My favourite");
    constexpr int32_t kTopK = 6;
    constexpr int kSamples = 2000;
    std::vector<RequestParams> batch;
    for (uint64_t seed = 0; seed < kSamples; ++seed) {
        RequestParams params = request(prompt, 2, 1.0f, 1000 + seed);
        params.sampling.top_k = kTopK;
        batch.push_back(params);
    }
    EngineConfig config{.max_num_seqs = 256, .max_num_batched_tokens = 1024};
    config.speculative = speculation(SpeculativeMethod::DraftModel, 1);
    const EngineRun speculative = run_batches(*target, config, {{batch}});
    const SpecDecodeStats& spec = speculative.stats.spec_decode;
    EXPECT_EQ(spec.n_drafts, kSamples) << "every second token should have been drafted";
    EXPECT_LT(spec.n_accepted_tokens, spec.n_draft_tokens) << "no draft was rejected";
    EXPECT_TRUE(speculative.core->all_blocks_free());

    const std::map<std::pair<TokenId, TokenId>, double> p =
        two_token_distribution(*target, prompt, kTopK);
    std::map<std::pair<TokenId, TokenId>, double> counts;
    for (const auto& [id, c] : speculative.results) {
        ASSERT_EQ(c.tokens.size(), 2u);
        ASSERT_TRUE(p.contains({c.tokens[0], c.tokens[1]}))
            << "a pair outside the target's top " << kTopK << " x " << kTopK;
        counts[{c.tokens[0], c.tokens[1]}] += 1.0;
    }
    std::vector<double> observed;
    std::vector<double> expected;
    for (const auto& [pair, probability] : p) {
        observed.push_back(counts[pair]);
        expected.push_back(probability * kSamples);
    }
    const ChiSquare test = chi_square(observed, expected);
    EXPECT_GT(test.p_value, 0.01) << "chi-square " << test.statistic << " on "
                                  << test.degrees_of_freedom << " degrees of freedom";
    EXPECT_GT(test.degrees_of_freedom, 5) << "too few categories to tell distributions apart";
}

// The second architecture, with its sliding-window KV group: the draft model
// is the file itself (every greedy draft accepted).
class SpeculativeGemmaTest : public EngineTest {
public:
    static void SetUpTestSuite() {
        bundle_ = shared_model(model_path("gemma-3-270m-q4_k_m.gguf"));
        pool_ = &shared_pool();
    }
    void SetUp() override {
        if (bundle_ == nullptr) GTEST_SKIP() << "Gemma 3 not present; run `make model-gemma3`";
    }
};

TEST_F(SpeculativeGemmaTest, GreedyEqualsSpeculationOffWithEveryDrafter) {
    const RequestParams copy = request(encode(kCopyPrompt), 32, 0.0f);
    for (const Drafter& drafter : kDrafters) {
        SCOPED_TRACE(drafter.name);
        const EngineConfig config{.max_num_seqs = 2};
        const EngineRun reference = run_batches(*bundle_, config, {{copy}, {copy}});
        EngineConfig speculative_config = config;
        speculative_config.speculative = speculation(drafter.method);
        if (drafter.method == SpeculativeMethod::DraftModel) {
            speculative_config.speculative->model = model_path("gemma-3-270m-q4_k_m.gguf");
        }
        const EngineRun speculative = run_batches(*bundle_, speculative_config, {{copy}, {copy}});
        expect_same_outputs(speculative, reference, {1, 2});
        expect_counters_add_up(speculative.stats.spec_decode);
        expect_clean_kv(speculative, reference);
        EXPECT_TRUE(speculative.core->all_blocks_free());
    }
}

TEST_F(SpeculativeEngineTest, ADraftWithAnotherVocabularyIsRefused) {
    const std::string gemma = model_path("gemma-3-270m-q4_k_m.gguf");
    if (!std::filesystem::exists(gemma)) GTEST_SKIP() << "Gemma 3 not present";
    EngineConfig config;
    config.speculative = speculation(SpeculativeMethod::DraftModel);
    config.speculative->model = gemma;
    try {
        EngineCore core(*bundle_->model, *bundle_->tokenizer, *pool_, config);
        FAIL() << "a draft with another vocabulary was accepted";
    } catch (const util::InputError& error) {
        EXPECT_NE(std::string(error.what()).find("vocabulary"), std::string::npos) << error.what();
    }
}

}  // namespace
}  // namespace ladder::engine::testing
