// Speculative decoding as `ladder bench` sees it from outside: the server's
// spec_decode counters read from GET /metrics (ladder's `ladder:` names or
// vLLM's `vllm:` ones) before and after a run; their difference is the run's.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ladder/engine/spec_decode_stats.h"
#include "ladder/tools/bench_http.h"

namespace ladder::tools {

// The spec_decode_num_*_total counters of a Prometheus text; nullopt when it
// has none (speculative decoding off, or another server).
std::optional<engine::SpecDecodeStats> parse_spec_decode_metrics(std::string_view text);

// GET /metrics of the server; nullopt when it has none or cannot be read
// (a benchmark does not fail for want of metrics).
std::optional<engine::SpecDecodeStats> fetch_spec_decode_metrics(const BaseUrl& url,
                                                                 const std::string& api_key,
                                                                 double timeout_s);

}  // namespace ladder::tools
