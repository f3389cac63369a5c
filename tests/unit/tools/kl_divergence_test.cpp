// The KL-divergence statistics and llama-perplexity's log-probability file:
// rows decode to the log-softmax they encode, the divergence of known
// distributions comes out as computed by hand, and malformed files are refused.
#include "ladder/tools/kl_divergence.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "ladder/tools/logits_file.h"
#include "ladder/util/error.h"

namespace ladder::tools {
namespace {

std::vector<double> log_softmax(const std::vector<float>& logits) {
    double max = logits[0];
    for (float l : logits) max = std::max(max, static_cast<double>(l));
    double sum = 0.0;
    for (float l : logits) sum += std::exp(l - max);
    std::vector<double> out;
    for (float l : logits) out.push_back(l - max - std::log(sum));
    return out;
}

std::vector<uint16_t> encoded(const std::vector<float>& logits, int32_t target,
                              double* nll = nullptr) {
    std::vector<uint16_t> row(static_cast<size_t>(logits_row_words(std::ssize(logits))));
    const double value = encode_log_probs(logits, target, row);
    if (nll) *nll = value;
    return row;
}

TEST(LogitsFile, a_row_decodes_to_the_log_softmax_within_one_step) {
    const std::vector<float> logits = {2.0f, -1.0f, 0.5f, 7.0f, -30.0f};
    double nll = 0.0;
    const auto row = encoded(logits, 2, &nll);
    EXPECT_EQ(row.size(), 2u * 3 + 4);  // vocabulary padded to even, plus two floats
    const DecodedRow decoded = decode_row(row, 5);
    const auto expected = log_softmax(logits);
    EXPECT_NEAR(nll, -expected[2], 1e-5);
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(decoded.log_prob(i), expected[i], decoded.scale) << i;
    // More than 16 nats below the top: stored as the clip value, not below it.
    EXPECT_NEAR(decoded.log_prob(4), expected[3] - 16.0, 1e-4);
}

TEST(KlDivergence, identical_distributions_agree_and_diverge_by_almost_nothing) {
    KlDivergenceAccumulator accumulator;
    const std::vector<std::vector<float>> positions = {
        {1.0f, 2.0f, 3.0f, 0.0f}, {0.0f, -1.0f, 4.0f, 4.5f}, {5.0f, 5.0f, 1.0f, -2.0f}};
    for (size_t p = 0; p < positions.size(); ++p) {
        const auto row = encoded(positions[p], 1);
        accumulator.add(positions[p], decode_row(row, 4), 1);
    }
    const KlDivergenceResult r = accumulator.result();
    EXPECT_EQ(r.n_scored, 3);
    // Only the 16-bit storage of the reference separates them: a step is at
    // most 16 / 65535 nats.
    EXPECT_LT(std::fabs(r.kl_divergence.mean), 5e-4);
    EXPECT_DOUBLE_EQ(r.same_top.mean, 1.0);
    EXPECT_NEAR(r.perplexity.mean, r.base_perplexity.mean, 1e-4);
    EXPECT_LT(std::fabs(r.delta_p.mean), 1e-4);
}

TEST(KlDivergence, matches_the_divergence_computed_by_hand) {
    const std::vector<float> base = {0.0f, 1.0f, 2.0f, -1.0f};
    const std::vector<float> model = {0.5f, 0.5f, 2.5f, -1.0f};
    const auto row = encoded(base, 2);
    KlDivergenceAccumulator accumulator;
    accumulator.add(model, decode_row(row, 4), 2);
    const KlDivergenceResult r = accumulator.result();
    const auto lp = log_softmax(base);
    const auto lq = log_softmax(model);
    double kld = 0.0;
    for (size_t i = 0; i < lp.size(); ++i) kld += std::exp(lp[i]) * (lp[i] - lq[i]);
    EXPECT_NEAR(r.kl_divergence.mean, kld, 1e-3);
    EXPECT_GT(r.kl_divergence.mean, 0.0);
    EXPECT_NEAR(r.perplexity.mean, std::exp(-lq[2]), 1e-4);
    EXPECT_NEAR(r.base_perplexity.mean, std::exp(-lp[2]), 1e-3);
    EXPECT_NEAR(r.delta_p.mean, std::exp(lq[2]) - std::exp(lp[2]), 1e-3);
    EXPECT_DOUBLE_EQ(r.same_top.mean, 1.0);  // token 2 first in both
    const std::vector<float> disagreeing = {3.0f, 0.0f, 0.0f, 0.0f};
    accumulator.add(disagreeing, decode_row(row, 4), 2);
    EXPECT_DOUBLE_EQ(accumulator.result().same_top.mean, 0.5);
}

class LogitsFileOnDisk : public ::testing::Test {
protected:
    void SetUp() override {
        path_ = (std::filesystem::temp_directory_path() /
                 ("ladder_logits_" + std::to_string(::getpid()) + ".kld"))
                    .string();
    }
    void TearDown() override { std::filesystem::remove(path_); }

    // A valid file: ctx 8 (3 scored rows per window), vocabulary 5, 2 windows.
    void write_valid() {
        const std::vector<int32_t> tokens(16, 1);
        LogitsFileWriter writer(path_, 8, 5, tokens, 2);
        const std::vector<uint16_t> rows(3 * static_cast<size_t>(logits_row_words(5)), 0);
        writer.write_rows(rows);
        writer.write_rows(rows);
        writer.close();
    }

    std::string path_;
};

TEST_F(LogitsFileOnDisk, reads_back_what_it_wrote) {
    write_valid();
    LogitsFileReader reader(path_);
    EXPECT_EQ(reader.ctx(), 8);
    EXPECT_EQ(reader.vocab_size(), 5);
    EXPECT_EQ(reader.n_chunks(), 2);
    EXPECT_EQ(reader.tokens().size(), 16u);
    std::vector<uint16_t> rows;
    reader.read_window(rows);
    EXPECT_EQ(rows.size(), 3u * 10);
}

TEST_F(LogitsFileOnDisk, refuses_a_truncated_file) {
    write_valid();
    std::filesystem::resize_file(path_, std::filesystem::file_size(path_) - 2);
    EXPECT_THROW(LogitsFileReader{path_}, util::InputError);
}

TEST_F(LogitsFileOnDisk, refuses_another_kind_of_file) {
    std::ofstream(path_) << "GGUF and more bytes than a header";
    EXPECT_THROW(LogitsFileReader{path_}, util::InputError);
}

TEST_F(LogitsFileOnDisk, refuses_tokens_outside_the_vocabulary) {
    std::vector<int32_t> tokens(16, 1);
    tokens[9] = 5;
    LogitsFileWriter writer(path_, 8, 5, tokens, 2);
    const std::vector<uint16_t> rows(6 * static_cast<size_t>(logits_row_words(5)), 0);
    writer.write_rows(rows);
    writer.close();
    EXPECT_THROW(LogitsFileReader{path_}, util::InputError);
}

}  // namespace
}  // namespace ladder::tools
