// What the simulator's tests build requests from and read steps back with.
#pragma once

#include <cstdint>
#include <numeric>
#include <vector>

#include "ladder/tools/simulator.h"

namespace ladder::tools::sim_test {

// n prompt tokens first, first + 1, ...: distinct contents for distinct firsts.
inline std::vector<int32_t> iota_tokens(int32_t n, int32_t first) {
    std::vector<int32_t> tokens(static_cast<size_t>(n));
    std::iota(tokens.begin(), tokens.end(), first);
    return tokens;
}

// The tokens of every recorded step, in order.
inline std::vector<int32_t> step_tokens(const SimulationResult& result) {
    std::vector<int32_t> tokens;
    for (const SimStep& step : result.steps) tokens.push_back(step.n_tokens);
    return tokens;
}

}  // namespace ladder::tools::sim_test
