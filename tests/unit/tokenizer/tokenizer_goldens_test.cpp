// ladder's tokenizer against llama.cpp's ids on the real vocabularies: every
// text of tests/data/tokenizer_corpus.json under every add_special /
// parse_special combination (goldens from scripts/goldens/tokenizer_goldens.py).
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <nlohmann/json.hpp>

#include "ladder/engine/tokenizer_loader.h"
#include "ladder/gguf/gguf_file.h"

namespace ladder::tokenizer {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kRepo = LADDER_SOURCE_DIR;

json read_json(const fs::path& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path.string());
    return json::parse(in);
}

std::string from_hex(const std::string& hex) {
    std::string bytes;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) {
        bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    }
    return bytes;
}

// The hex SHA-256 of a file's bytes, as the goldens scripts record it.
std::string sha256_of(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path.string());
    const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> digest(EVP_MD_CTX_new(),
                                                                         EVP_MD_CTX_free);
    if (!digest || EVP_DigestInit_ex(digest.get(), EVP_sha256(), nullptr) != 1)
        throw std::runtime_error("cannot start a SHA-256 digest");
    std::vector<char> chunk(1 << 20);
    while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
        EVP_DigestUpdate(digest.get(), chunk.data(), static_cast<size_t>(in.gcount()));
    }
    unsigned char bytes[EVP_MAX_MD_SIZE];
    unsigned int n_bytes = 0;
    EVP_DigestFinal_ex(digest.get(), bytes, &n_bytes);
    std::string hex;
    for (unsigned int i = 0; i < n_bytes; ++i) hex += fmt::format("{:02x}", bytes[i]);
    return hex;
}

// Corpus case name -> the exact bytes to tokenize.
std::map<std::string, std::string> load_corpus() {
    std::map<std::string, std::string> texts;
    const json corpus = read_json(kRepo / "tests/data/tokenizer_corpus.json");
    for (const auto& c : corpus["cases"]) {
        texts[c["name"].get<std::string>()] =
            c.contains("hex") ? from_hex(c["hex"]) : c["text"].get<std::string>();
    }
    return texts;
}

// Printable form of bytes: escapes for controls and non-UTF-8, cut when long.
std::string shown(const std::string& bytes, size_t limit = 160) {
    std::string out;
    for (size_t i = 0; i < bytes.size() && out.size() < limit; ++i) {
        const auto c = static_cast<unsigned char>(bytes[i]);
        if (c == '\n') out += "\\n";
        else if (c == '\t') out += "\\t";
        else if (c == '\r') out += "\\r";
        else if (c < 0x20 || c == 0x7F) out += fmt::format("\\x{:02x}", c);
        else out += static_cast<char>(c);
    }
    if (out.size() >= limit) out += "...";
    return out;
}

std::string ids_around(const std::vector<TokenId>& ids, size_t at, const Tokenizer& tok) {
    std::string out;
    const size_t begin = at >= 3 ? at - 3 : 0;
    for (size_t i = begin; i < ids.size() && i < at + 5; ++i) {
        out += fmt::format("{}{}('{}') ", i == at ? ">" : "", ids[i],
                           shown(tok.token_to_piece(ids[i], true), 24));
    }
    return out.empty() ? "(end)" : out;
}

// Compares every golden result; reports the first difference in full and
// counts the rest.
void expect_matches_goldens(const fs::path& model, const fs::path& goldens_path) {
    const auto file = gguf::GgufFile::open(model.string());
    const auto tok = engine::load_tokenizer(*file);
    const auto texts = load_corpus();
    const json goldens = read_json(goldens_path);
    ASSERT_EQ(goldens["model_file"].get<std::string>(), model.filename().string())
        << goldens_path << " was made for another model file";
    // The goldens hold for the exact bytes they were made from.
    ASSERT_EQ(goldens["model_sha256"].get<std::string>(), sha256_of(model))
        << model << " is not the file " << goldens_path
        << " was made from: fetch it again (make model) or regenerate the goldens";
    ASSERT_EQ(goldens["corpus_sha256"].get<std::string>(),
              sha256_of(kRepo / goldens["corpus_file"].get<std::string>()))
        << "the corpus changed since " << goldens_path
        << " was made: regenerate it with scripts/goldens/tokenizer_goldens.py";

    size_t n_results = 0, n_differ = 0;
    std::string first_difference;
    std::map<std::string, int> covered;
    for (const auto& r : goldens["results"]) {
        const std::string name = r["name"];
        const auto text = texts.find(name);
        ASSERT_TRUE(text != texts.end()) << "golden case '" << name << "' is not in the corpus: "
                                     << "regenerate with scripts/goldens/tokenizer_goldens.py";
        ASSERT_EQ(text->second.size(), r["n_bytes"].get<size_t>())
            << "corpus text '" << name << "' changed since the goldens were made: regenerate "
            << "them with scripts/goldens/tokenizer_goldens.py";
        covered[name]++;
        const bool add_special = r["add_special"], parse_special = r["parse_special"];
        const auto expected = r["ids"].get<std::vector<TokenId>>();
        const auto actual = tok->encode(text->second, add_special, parse_special);
        ++n_results;
        if (actual == expected) continue;
        ++n_differ;
        if (!first_difference.empty()) continue;
        size_t at = 0;
        while (at < actual.size() && at < expected.size() && actual[at] == expected[at]) ++at;
        first_difference = fmt::format(
            "case '{}' (add_special={}, parse_special={}) text \"{}\"\n"
            "  first difference at token {} of {} expected / {} actual\n"
            "  llama.cpp: {}\n  ladder:    {}",
            name, add_special, parse_special, shown(text->second), at, expected.size(),
            actual.size(), ids_around(expected, at, *tok), ids_around(actual, at, *tok));
    }
    for (const auto& [name, text] : texts) {
        EXPECT_TRUE(covered.count(name)) << "corpus case '" << name << "' has no goldens in "
                                         << goldens_path << ": regenerate them";
    }
    EXPECT_EQ(n_differ, 0u) << n_differ << " of " << n_results
                            << " tokenizations differ from llama.cpp; the first:\n"
                            << first_difference;
}

TEST(TokenizerGoldens, smollm2_matches_llama_cpp_on_whole_corpus) {
    const fs::path model = kRepo / "models/SmolLM2-135M-Instruct.Q4_1.gguf";
    // The default model is part of the test setup (`make model`): fail, not skip.
    ASSERT_TRUE(fs::exists(model)) << model << " is missing: run `make model`";
    expect_matches_goldens(model,
                           kRepo / "tests/data/SmolLM2-135M-Instruct.Q4_1/tokenizer_goldens.json");
}

TEST(TokenizerGoldens, gemma3_matches_llama_cpp_on_whole_corpus) {
    const fs::path model = kRepo / "models/gemma-3-270m-q4_k_m.gguf";
    if (!fs::exists(model)) GTEST_SKIP() << model << " is absent (`make model-gemma3` fetches it)";
    expect_matches_goldens(model, kRepo / "tests/data/gemma-3-270m-q4_k_m/tokenizer_goldens.json");
}

}  // namespace
}  // namespace ladder::tokenizer
