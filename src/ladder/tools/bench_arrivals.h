// When each request of a benchmark is sent: all at once, or as a Poisson
// process of a given rate (exponential gaps), as vLLM's bench serve does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ladder::tools {

// Send times in seconds after the start, the first at 0. An infinite (or
// non-positive) rate sends every request at 0. Deterministic for a seed.
std::vector<double> arrival_times(int64_t n_requests, double requests_per_second, uint64_t seed);

// --request-rate's value: a positive number of requests/s, or "inf".
// Throws util::InputError naming the flag otherwise.
double parse_request_rate(const std::string& text);

}  // namespace ladder::tools
