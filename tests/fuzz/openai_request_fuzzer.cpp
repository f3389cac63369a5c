// Fuzzes the mapping of OpenAI request bodies onto engine requests, on the
// default model's tokenizer and chat template: any JSON is either mapped
// (within every bound of engine/request.h) or refused with a 400 ApiError.
// Anything else escaping (a nlohmann exception, say) is a check the mapping
// missed.
//
// Input: one byte (bit 0: chat completions), then the body's text.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string_view>

#include "fuzz_support.h"
#include "ladder/server/api_error.h"
#include "ladder/server/openai_request.h"
#include "ladder/util/check.h"

namespace {

using namespace ladder;

constexpr int32_t kMaxModelLen = 2048;

const engine::ModelBundle& bundle() {
    static const engine::ModelBundle loaded =
        engine::load_model_bundle(fuzz::require_model(fuzz::kSmolLm2));
    return loaded;
}

void check_bounds(const server::CompletionRequest& request) {
    const size_t n_choices = request.prompts.size() * static_cast<size_t>(request.n);
    LADDER_CHECK(n_choices >= 1 && n_choices <= server::kMaxEngineRequests, "choices unbounded");
    const engine::RequestParams& params = request.params;
    LADDER_CHECK(params.stop->size() <= engine::kMaxStopStrings, "stop strings unbounded");
    LADDER_CHECK(params.stop_token_ids->size() <= engine::kMaxStopTokenIds, "stop ids unbounded");
    LADDER_CHECK(params.logit_bias->size() <= engine::kMaxLogitBiasEntries, "bias unbounded");
    for (const auto& prompt : request.prompts) {
        for (const engine::TokenId id : prompt) {
            LADDER_CHECK(id >= 0 && id < bundle().tokenizer->vocab_size(),
                         "prompt id out of range");
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const auto endpoint =
        (data[0] & 1) != 0 ? server::Endpoint::ChatCompletions : server::Endpoint::Completions;
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    const nlohmann::json body = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded()) return 0;  // the server answers 400 invalid_json before mapping
    try {
        server::CompletionRequest request =
            server::parse_completion_request(body, endpoint, bundle(), kMaxModelLen);
        check_bounds(request);
        request.tenant = "fuzz";
        const std::vector<engine::RequestParams> requests = server::engine_requests(request);
        LADDER_CHECK(requests.size() == request.prompts.size() * static_cast<size_t>(request.n),
                     "one engine request per choice");
    } catch (const server::ApiError& error) {
        LADDER_CHECK(error.status() == 400, "a body was refused with a status other than 400");
    }
    return 0;
}
