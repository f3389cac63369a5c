// The bounds every rendering stays within, so that no template (a real one
// with a bug, or a hostile one) can hang or exhaust memory: each is a
// TemplateError when crossed, never a crash.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ladder::tokenizer::jinja {

struct RenderLimits {
    // The longest string (the output included) a rendering may build.
    size_t max_output_bytes = size_t{32} << 20;
    // Bytes of strings and lists built in all, temporaries included.
    size_t max_bytes_built = size_t{256} << 20;
    // Statements run, loop iterations, calls and items filtered.
    int64_t max_steps = 10'000'000;
    // Macro calls in progress at once (recursion).
    int max_call_depth = 100;
};

class Budget {
public:
    explicit Budget(const RenderLimits& limits) : limits_(limits) {}

    void step(int64_t n = 1);
    // Before building a string (or list) of `bytes`.
    void charge(size_t bytes);
    const RenderLimits& limits() const { return limits_; }

private:
    RenderLimits limits_;
    int64_t steps_ = 0;
    size_t bytes_built_ = 0;
};

}  // namespace ladder::tokenizer::jinja
