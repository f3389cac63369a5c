// The prompts `ladder bench` sends: synthetic (random token ids or words,
// and the support-bot workload of a shared prefix and a unique question) or
// read from a ShareGPT JSON or a JSONL file. The same options and seed give
// the same prompts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ladder/tools/bench_request.h"
#include "ladder/tools/seeded_random.h"

namespace ladder::tools {

struct DatasetOptions {
    std::string kind = "random";  // random | prefix | sharegpt | jsonl
    std::string path;             // the file of sharegpt and jsonl
    // Defaults depend on the kind: random 1024 in / 128 out, prefix 200 / 300;
    // for files, output_len replaces what the file says (or estimates).
    std::optional<int64_t> input_len;
    std::optional<int64_t> output_len;
    // Lengths are drawn uniformly from [len × (1 − r), len × (1 + r)], as
    // vLLM's --random-range-ratio; the prefix keeps its length.
    double range_ratio = 0.0;
    int64_t prefix_len = 3000;
    // prefix: distinct shared blocks (support bots); each prompt draws one.
    int64_t n_prefixes = 1;
    int64_t n_prompts = 1000;
    uint64_t seed = 0;
    BenchEndpoint endpoint = BenchEndpoint::Completions;
};

// Throws util::InputError on bad options or a file that cannot be read
// (naming the file and line).
std::vector<BenchPrompt> make_dataset(const DatasetOptions& options);

// Random token ids for completions (token-id prompts are exact in length) or
// random common words for chat (about one token each).
std::vector<BenchPrompt> random_dataset(const DatasetOptions& options);
// A block of prefix_len tokens shared by every prompt, then a question of
// input_len of its own: what a prefix cache is for. Chat sends the block as
// the system message and the question as the user's. With n_prefixes > 1,
// that many blocks, and each prompt draws one (a fleet's many bots, whose
// blocks together may not fit one replica's cache).
std::vector<BenchPrompt> prefix_dataset(const DatasetOptions& options);
// The draws the synthetic datasets are made of, one prompt at a time, so
// that the simulator can take millions of bench's prompts without holding
// them: token ids for completions, word indices (about a token each) for chat.
struct SyntheticPrompt {
    int64_t prefix = -1;  // prefix: which shared block leads the prompt; random: none
    std::vector<int32_t> question;
    int64_t max_tokens = 0;
};
class SyntheticPrompts {
public:
    // kind random or prefix; throws util::InputError on bad options.
    explicit SyntheticPrompts(const DatasetOptions& options);
    SyntheticPrompt next();
    // The same draw into `prompt`, whose question's buffer is reused.
    void next(SyntheticPrompt& prompt);
    const std::vector<std::vector<int32_t>>& prefixes() const { return prefixes_; }

private:
    // n draws into `draws`, which they replace.
    void draw_tokens(int64_t n, std::vector<int32_t>& draws);

    DatasetOptions options_;
    SeededRandom random_;
    int64_t input_len_ = 0;
    int64_t output_len_ = 0;
    std::vector<std::vector<int32_t>> prefixes_;
};

// ShareGPT: [{"conversations": [{"from": "human", "value": ...},
// {"from": "gpt", "value": ...}, ...]}, ...]: the first human turn is the
// prompt, the reply after it sets the output length (about 4 characters a
// token) unless output_len is given. Sampled with the seed.
std::vector<BenchPrompt> sharegpt_dataset(const DatasetOptions& options);
std::vector<BenchPrompt> sharegpt_from_text(const std::string& text, const std::string& name,
                                            const DatasetOptions& options);
// JSONL: one object a line with `prompt` (text or token ids) or `messages`,
// and optionally `max_tokens`; the first n_prompts lines, in order.
std::vector<BenchPrompt> jsonl_dataset(const DatasetOptions& options);
std::vector<BenchPrompt> jsonl_from_text(const std::string& text, const std::string& name,
                                         const DatasetOptions& options);

// Tokens in a text without its tokenizer, as a rule of thumb: 4 characters
// a token (at least one for any text).
int64_t estimate_tokens(const std::string& text);

}  // namespace ladder::tools
