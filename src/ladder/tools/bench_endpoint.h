// Before a benchmark: is the endpoint there, does it let us in, does it
// speak OpenAI, and which model to ask for. One GET /v1/models, so that a
// wrong URL or key fails at once with one clear line, not N failed requests.
#pragma once

#include <string>

#include "ladder/tools/bench_http.h"

namespace ladder::tools {

// The model to benchmark: `given` when not empty, else the first that
// /v1/models lists. Throws util::InputError when the endpoint cannot be
// reached, refuses the key (401, 403), or answers what is not OpenAI's
// model list (an endpoint without /v1/models is accepted with `given`).
std::string probe_endpoint(const BaseUrl& url, const std::string& api_key, const std::string& given,
                           double timeout_s);

}  // namespace ladder::tools
