// Where the model comes from when -m is not given, and a clear message when
// it is not there.
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "ladder/cli/commands.h"
#include "ladder/util/error.h"
#include "ladder/util/thread_pool.h"

namespace ladder::cli {

namespace {

constexpr const char* kDefaultModelFile = "SmolLM2-135M-Instruct.Q4_1.gguf";

std::filesystem::path executable_dir() {
    std::error_code error;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
    return error ? std::filesystem::path{} : self.parent_path();
}

}  // namespace

void add_model_option(CLI::App& command, std::string& model_path) {
    command.add_option("-m,--model", model_path,
                       std::string("GGUF model file (default: models/") + kDefaultModelFile +
                           ", fetched by `make model`; or $LADDER_MODEL)");
}

void add_threads_option(CLI::App& command, int& n_threads) {
    n_threads = util::default_thread_count();
    command.add_option("-t,--threads", n_threads, "CPU threads (default: all cores)")
        ->check(CLI::Range(1, 1024));
}

std::string resolve_model_path(const std::string& given) {
    namespace fs = std::filesystem;
    if (!given.empty()) {
        if (!fs::exists(given)) util::fail("model file '{}' does not exist", given);
        return given;
    }
    if (const char* from_env = std::getenv("LADDER_MODEL"); from_env && *from_env) {
        if (!fs::exists(from_env)) util::fail("model file '{}' (from $LADDER_MODEL) does not exist", from_env);
        return from_env;
    }
    // The repo layout puts the binary at build/bin/ladder and models at models/.
    const fs::path candidates[] = {
        fs::path("models") / kDefaultModelFile,
        executable_dir() / ".." / ".." / "models" / kDefaultModelFile,
    };
    for (const auto& candidate : candidates) {
        if (fs::exists(candidate)) return candidate.lexically_normal().string();
    }
    util::fail("the default model models/{} is missing: run `make model` in the ladder "
               "repository to fetch it, or pass -m PATH",
               kDefaultModelFile);
}

}  // namespace ladder::cli
