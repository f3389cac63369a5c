// `ladder tokenize`: text -> token ids (or pieces) with the model's tokenizer,
// for checking prompts and comparing with llama.cpp's llama-tokenize.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ladder/cli/commands.h"
#include "ladder/engine/tokenizer_loader.h"
#include "ladder/gguf/gguf_file.h"
#include "ladder/util/error.h"

namespace ladder::cli {

namespace {

struct TokenizeOptions {
    std::string model;
    std::string prompt;
    std::string file;
    bool pieces = false;
    bool no_add_special = false;
    bool no_parse_special = false;
};

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) util::fail("cannot read '{}'", path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void run_tokenize(const TokenizeOptions& options) {
    const auto file = gguf::GgufFile::open(resolve_model_path(options.model));
    const auto tokenizer = engine::load_tokenizer(*file);
    const std::string text = options.file.empty() ? options.prompt : read_file(options.file);
    const auto ids = tokenizer->encode(text, !options.no_add_special, !options.no_parse_special);

    nlohmann::json out = nlohmann::json::array();
    for (const auto id : ids) {
        if (options.pieces) {
            out.push_back(tokenizer->token_to_piece(id, /*render_special=*/true));
        } else {
            out.push_back(id);
        }
    }
    // A piece may be part of a UTF-8 character; JSON output shows it as U+FFFD.
    std::puts(out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

}  // namespace

void add_tokenize_command(CLI::App& app) {
    auto options = std::make_shared<TokenizeOptions>();
    CLI::App* command = app.add_subcommand(
        "tokenize", "Print the token ids of a text as a JSON array (llama.cpp-identical)");
    add_model_option(*command, options->model);
    auto* prompt = command->add_option("-p,--prompt", options->prompt, "Text to tokenize");
    auto* file = command->add_option("-f,--file", options->file, "File whose bytes to tokenize");
    prompt->excludes(file);
    command->add_flag("--text,--pieces", options->pieces,
                      "Print each token's text (special tokens included) instead of its id");
    // Defaults follow llama.cpp's llama-tokenize: BOS/EOS as the model says,
    // and special-token text (e.g. <|im_start|>) read as the special token.
    command->add_flag("--no-add-special,--no-bos", options->no_add_special,
                      "Do not add the BOS/EOS tokens the model asks for");
    command->add_flag("--no-parse-special", options->no_parse_special,
                      "Treat special-token text as plain text");
    command->callback([options, prompt, file] {
        if (prompt->count() == 0 && file->count() == 0) {
            util::fail("tokenize needs the text: -p TEXT or -f FILE");
        }
        run_tokenize(*options);
    });
}

}  // namespace ladder::cli
