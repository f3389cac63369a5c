#include "ladder/tools/logits_file.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "ladder/tensor/k_quant_scales.h"
#include "ladder/util/check.h"
#include "ladder/util/error.h"

namespace ladder::tools {

namespace {

constexpr char kMagic[8] = {'_', 'l', 'o', 'g', 'i', 't', 's', '_'};
constexpr float kClipNats = 16.0f;  // log-probabilities below max - 16 are stored as "at most"
constexpr int32_t kMaxVocab = 1 << 24;
constexpr uint64_t kHeaderBytes = sizeof(kMagic) + 3 * sizeof(int32_t);

}  // namespace

int64_t logits_row_words(int64_t vocab_size) { return 2 * ((vocab_size + 1) / 2) + 4; }

int32_t scored_rows_per_window(int32_t ctx) { return ctx - 1 - ctx / 2; }

double encode_log_probs(std::span<const float> logits, int32_t target, std::span<uint16_t> row) {
    LADDER_CHECK(row.size() == static_cast<size_t>(logits_row_words(std::ssize(logits))),
                 "row size does not match the vocabulary");
    float max_logit = logits[0];
    float min_logit = logits[0];
    for (size_t i = 1; i < logits.size(); ++i) {
        max_logit = std::max(max_logit, logits[i]);
        min_logit = std::min(min_logit, logits[i]);
    }
    min_logit = std::max(min_logit, max_logit - kClipNats);
    double sum_exp = 0.0;
    for (const float logit : logits) sum_exp += std::exp(logit - max_logit);
    const auto log_sum_exp = static_cast<float>(std::log(sum_exp));
    const float min_log_prob = min_logit - max_logit - log_sum_exp;
    const float scale = (max_logit - min_logit) / 65535.0f;
    std::memcpy(row.data(), &scale, sizeof scale);
    std::memcpy(row.data() + 2, &min_log_prob, sizeof min_log_prob);
    uint16_t* q = row.data() + 4;
    std::fill(q, row.data() + row.size(), uint16_t{0});
    if (scale != 0.0f) {
        const float inv_scale = 1.0f / scale;
        for (size_t i = 0; i < logits.size(); ++i) {
            if (logits[i] > min_logit) {
                q[i] =
                    static_cast<uint16_t>(tensor::nearest_int(inv_scale * (logits[i] - min_logit)));
            }
        }
    }
    return max_logit + log_sum_exp - logits[static_cast<size_t>(target)];
}

DecodedRow decode_row(std::span<const uint16_t> row, int64_t vocab_size) {
    DecodedRow decoded{};
    std::memcpy(&decoded.scale, row.data(), sizeof(float));
    std::memcpy(&decoded.min_log_prob, row.data() + 2, sizeof(float));
    decoded.q = row.subspan(4, static_cast<size_t>(vocab_size));
    return decoded;
}

LogitsFileWriter::LogitsFileWriter(const std::string& path, int32_t ctx, int32_t vocab_size,
                                   std::span<const int32_t> tokens, int32_t n_chunks)
    : out_(path) {
    LADDER_CHECK(tokens.size() >= static_cast<size_t>(ctx) * static_cast<size_t>(n_chunks),
                 "fewer tokens than the windows need");
    out_.write(kMagic, sizeof kMagic);
    for (const int32_t field : {ctx, vocab_size, n_chunks}) out_.write(&field, sizeof field);
    out_.write(tokens.data(),
               sizeof(int32_t) * static_cast<size_t>(ctx) * static_cast<size_t>(n_chunks));
}

void LogitsFileWriter::write_rows(std::span<const uint16_t> rows) {
    out_.write(rows.data(), rows.size_bytes());
}

void LogitsFileWriter::close() { out_.commit(); }

LogitsFileReader::LogitsFileReader(const std::string& path)
    : path_(path), in_(path, std::ios::binary) {
    if (!in_) util::fail("cannot read '{}'", path);
    char magic[sizeof kMagic] = {};
    int32_t header[3] = {};
    in_.read(magic, sizeof magic);
    in_.read(reinterpret_cast<char*>(header), sizeof header);
    if (!in_ || std::memcmp(magic, kMagic, sizeof kMagic) != 0) {
        util::fail("'{}' is not a file of log-probabilities (written by --kl-divergence-base)",
                   path);
    }
    ctx_ = header[0];
    vocab_size_ = header[1];
    n_chunks_ = header[2];
    if (ctx_ < 4 || ctx_ > (1 << 20) || vocab_size_ < 1 || vocab_size_ > kMaxVocab ||
        n_chunks_ < 1 || n_chunks_ > (1 << 20)) {
        util::fail("'{}' has an implausible header (ctx {}, vocabulary {}, {} windows)", path, ctx_,
                   vocab_size_, n_chunks_);
    }
    const uint64_t n_tokens = static_cast<uint64_t>(ctx_) * static_cast<uint64_t>(n_chunks_);
    const uint64_t row_bytes = 2 * static_cast<uint64_t>(logits_row_words(vocab_size_));
    const uint64_t expected = kHeaderBytes + 4 * n_tokens +
                              static_cast<uint64_t>(n_chunks_) *
                                  static_cast<uint64_t>(scored_rows_per_window(ctx_)) * row_bytes;
    std::error_code error;
    const uint64_t actual = std::filesystem::file_size(path, error);
    if (error || actual != expected) {
        util::fail("'{}' is {} bytes; its header (ctx {}, vocabulary {}, {} windows) needs {}",
                   path, actual, ctx_, vocab_size_, n_chunks_, expected);
    }
    tokens_.resize(n_tokens);
    in_.read(reinterpret_cast<char*>(tokens_.data()),
             static_cast<std::streamsize>(sizeof(int32_t) * n_tokens));
    if (!in_) util::fail("cannot read the tokens of '{}'", path);
    for (const int32_t token : tokens_) {
        if (token < 0 || token >= vocab_size_) {
            util::fail("'{}' holds token {}, outside its vocabulary of {}", path, token,
                       vocab_size_);
        }
    }
}

void LogitsFileReader::read_window(std::vector<uint16_t>& rows) {
    rows.resize(static_cast<size_t>(scored_rows_per_window(ctx_)) *
                static_cast<size_t>(logits_row_words(vocab_size_)));
    in_.read(reinterpret_cast<char*>(rows.data()),
             static_cast<std::streamsize>(rows.size() * sizeof(uint16_t)));
    if (!in_) util::fail("'{}' ends before its last window", path_);
}

}  // namespace ladder::tools
