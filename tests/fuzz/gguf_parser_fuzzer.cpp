// Fuzzes what a model file goes through before anything runs: GGUF parsing
// and validation, the typed metadata lookups, every tensor's bytes, then the
// tokenizer and model loaders on whatever parsed. Any outcome but success or
// util::InputError is a bug.
#include <cstdint>

#include "ladder/engine/tokenizer_loader.h"
#include "ladder/gguf/gguf_file.h"
#include "ladder/model/model.h"
#include "ladder/util/check.h"
#include "ladder/util/error.h"

namespace {

using namespace ladder;

// Each lookup a loader may make, in every type: a wrong type is an InputError.
void read_every_value(const gguf::GgufFile& file) {
    for (const auto& entry : file.metadata()) {
        const std::string& key = entry.first;  // clang 14 cannot capture a structured binding
        const auto attempt = [](auto&& lookup) {
            try {
                lookup();
            } catch (const util::InputError&) {
            }
        };
        attempt([&] { (void)file.get_int(key); });
        attempt([&] { (void)file.get_float(key); });
        attempt([&] { (void)file.get_bool(key); });
        attempt([&] { (void)file.get_string(key); });
        attempt([&] { (void)file.get_string_array(key); });
        attempt([&] { (void)file.get_float_array(key); });
        attempt([&] { (void)file.get_int_array(key); });
    }
}

// Touches the first and last byte of every tensor, which must lie in the file.
uint8_t touch_every_tensor(const gguf::GgufFile& file) {
    uint8_t sum = 0;
    for (const gguf::TensorInfo& info : file.tensors()) {
        const std::span<const uint8_t> data = file.tensor_data(info);
        LADDER_CHECK(data.size() == info.size_bytes, "a tensor's span is not its size");
        if (!data.empty()) sum = static_cast<uint8_t>(sum + data.front() + data.back());
    }
    return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::unique_ptr<gguf::GgufFile> file;
    try {
        file = gguf::GgufFile::parse({data, size}, "fuzz.gguf");
    } catch (const util::InputError&) {
        return 0;
    }
    read_every_value(*file);
    volatile uint8_t sink = touch_every_tensor(*file);
    (void)sink;
    try {
        (void)engine::load_tokenizer(*file);
    } catch (const util::InputError&) {
    }
    try {
        (void)model::load_model(*file);
    } catch (const util::InputError&) {
    }
    return 0;
}
