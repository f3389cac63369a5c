// How one request picks its next token: the knobs of the sampler chain, with
// their defaults and the ranges a request or flag may set them to.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>

#include "ladder/util/error.h"

namespace ladder::engine {

struct SamplingParams {
    float temperature = 1.0f;         // 0 = greedy (argmax after penalties)
    int32_t top_k = 0;                // 0 = off
    float top_p = 1.0f;               // 1 = off
    float min_p = 0.0f;               // 0 = off
    float repetition_penalty = 1.0f;  // 1 = off; CTRL-style, as llama.cpp
    float frequency_penalty = 0.0f;   // OpenAI: minus penalty x count
    float presence_penalty = 0.0f;    // OpenAI: minus penalty once a token appeared
    int32_t penalty_last_n = 64;      // penalties look at this many last tokens; -1 = all, 0 = none
    std::optional<uint64_t> seed;     // unset: seeded from std::random_device
};

// Throws util::InputError naming the first parameter outside its range.
inline void validate(const SamplingParams& p) {
    if (!std::isfinite(p.temperature) || p.temperature < 0.0f) {
        util::fail("temperature must be a finite number >= 0 (got {})", p.temperature);
    }
    if (p.top_k < 0) util::fail("top_k must be >= 0, 0 meaning off (got {})", p.top_k);
    if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) {
        util::fail("top_p must be in (0, 1] (got {})", p.top_p);
    }
    if (!(p.min_p >= 0.0f && p.min_p <= 1.0f)) {
        util::fail("min_p must be in [0, 1] (got {})", p.min_p);
    }
    if (!std::isfinite(p.repetition_penalty) || p.repetition_penalty <= 0.0f) {
        util::fail("repetition_penalty must be a finite number > 0 (got {})", p.repetition_penalty);
    }
    if (!(p.frequency_penalty >= -2.0f && p.frequency_penalty <= 2.0f)) {
        util::fail("frequency_penalty must be in [-2, 2] (got {})", p.frequency_penalty);
    }
    if (!(p.presence_penalty >= -2.0f && p.presence_penalty <= 2.0f)) {
        util::fail("presence_penalty must be in [-2, 2] (got {})", p.presence_penalty);
    }
    if (p.penalty_last_n < -1) {
        util::fail("penalty_last_n must be >= -1, -1 meaning the whole history (got {})",
                   p.penalty_last_n);
    }
}

}  // namespace ladder::engine
