// libFuzzer target: the Jinja interpreter over chat templates and
// conversations (the input layout is in chat_template_fuzz_input.h).
#include "chat_template_fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    ladder::tokenizer::fuzz::render_fuzz_input(data, size);
    return 0;
}
