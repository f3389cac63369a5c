// Runs a fuzz target's LLVMFuzzerTestOneInput over files instead of under
// libFuzzer: the seed corpus and every crash once found (regressions/), so
// an ordinary build replays them as a test and a fixed crash stays fixed.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
    namespace fs = std::filesystem;
    size_t n_inputs = 0;
    for (int i = 1; i < argc; ++i) {
        // A target may have no regressions yet: a missing folder is no input.
        if (!fs::is_directory(argv[i])) continue;
        std::vector<fs::path> files;
        for (const auto& entry : fs::recursive_directory_iterator(argv[i])) {
            if (entry.is_regular_file() && entry.path().filename().string()[0] != '.')
                files.push_back(entry.path());
        }
        std::sort(files.begin(), files.end());
        for (const fs::path& file : files) {
            std::ifstream in(file, std::ios::binary);
            const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                             std::istreambuf_iterator<char>());
            std::fprintf(stderr, "replaying %s\n", file.c_str());
            LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
            ++n_inputs;
        }
    }
    std::printf("replayed %zu inputs\n", n_inputs);
    return n_inputs > 0 ? 0 : 1;
}
