// The file `ladder perplexity --kl-divergence-base` writes and
// `--kl-divergence` reads: llama.cpp's llama-perplexity format, so either
// tool can read the other's. It holds the evaluated tokens and, for every
// scored position of every window, the reference model's log-probabilities
// over the vocabulary in 16 bits each:
//   "_logits_", int32 ctx, int32 vocab_size, int32 n_chunks,
//   int32 tokens[n_chunks * ctx],
//   per window, (ctx - 1 - ctx / 2) rows of row_words(vocab_size) uint16:
//   float scale, float min_log_prob, then uint16 q[vocab_size] (padded to an
//   even count) with log p = scale * q + min_log_prob, clipped at 16 nats
//   below the most likely token (q = 0 means "at most that").
#pragma once

#include <cstdint>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "ladder/util/atomic_file.h"

namespace ladder::tools {

// uint16 words of one row: the two floats, then the log-probabilities.
int64_t logits_row_words(int64_t vocab_size);
// Rows written per window of ctx tokens: the scored positions but the last.
int32_t scored_rows_per_window(int32_t ctx);

// Encodes one position's logits into a row, as llama-perplexity does.
// Returns the negative log-likelihood of `target`.
double encode_log_probs(std::span<const float> logits, int32_t target, std::span<uint16_t> row);

struct DecodedRow {
    float scale;
    float min_log_prob;
    std::span<const uint16_t> q;  // vocab_size codes

    float log_prob(int64_t token) const { return scale * q[token] + min_log_prob; }
};
DecodedRow decode_row(std::span<const uint16_t> row, int64_t vocab_size);

// Written whole or not at all: the file appears at close().
class LogitsFileWriter {
public:
    // Writes the header and the tokens. Throws util::InputError when the file
    // cannot be written.
    LogitsFileWriter(const std::string& path, int32_t ctx, int32_t vocab_size,
                     std::span<const int32_t> tokens, int32_t n_chunks);
    // One window's rows, windows in order.
    void write_rows(std::span<const uint16_t> rows);
    void close();

private:
    util::AtomicFile out_;
};

// A whole file, validated: header, token ids (in [0, vocab_size)) and size.
class LogitsFileReader {
public:
    // Throws util::InputError naming the path and what is wrong.
    explicit LogitsFileReader(const std::string& path);

    int32_t ctx() const { return ctx_; }
    int32_t vocab_size() const { return vocab_size_; }
    int32_t n_chunks() const { return n_chunks_; }
    const std::vector<int32_t>& tokens() const { return tokens_; }
    // The next window's rows, windows in order.
    void read_window(std::vector<uint16_t>& rows);

private:
    std::string path_;
    std::ifstream in_;
    int32_t ctx_ = 0;
    int32_t vocab_size_ = 0;
    int32_t n_chunks_ = 0;
    std::vector<int32_t> tokens_;
};

}  // namespace ladder::tools
