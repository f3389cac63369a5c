#include "ladder/server/response_format.h"

#include <fmt/format.h>

#include <chrono>
#include <random>

#include "ladder/server/http_io.h"

namespace ladder::server {

namespace {

using json = nlohmann::json;

std::string random_hex(int n_digits) {
    thread_local std::mt19937_64 generator{std::random_device{}()};
    std::string out;
    while (static_cast<int>(out.size()) < n_digits) out += fmt::format("{:016x}", generator());
    out.resize(static_cast<size_t>(n_digits));
    return out;
}

int64_t unix_seconds_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

ApiError engine_failure(const std::string& what) {
    return ApiError(500, "internal_error", "the engine failed on this request: " + what, "",
                    "engine_error");
}

}  // namespace

ResponseMeta make_response_meta(const ResponseFormat& format, const std::string& model) {
    return {std::string(format.id_prefix()) + random_hex(24), unix_seconds_now(), model};
}

json finish_reason_json(const std::optional<engine::FinishReason>& reason, bool tool_calls) {
    if (!reason) return nullptr;
    if (tool_calls && *reason == engine::FinishReason::Stop) return "tool_calls";
    return engine::finish_reason_name(*reason);
}

json response_json(const ResponseMeta& meta, const ResponseFormat& format, const CompletionJob& job,
                   const tokenizer::Tokenizer& tokenizer) {
    if (const ChoiceState* failed = job.failed_choice()) throw engine_failure(failed->error);
    json choices = json::array();
    const std::vector<ChoiceState>& states = job.choices();
    for (size_t i = 0; i < states.size(); ++i) {
        choices.push_back(format.response_choice(static_cast<int32_t>(i), states[i], tokenizer));
    }
    return {{"id", meta.id},       {"object", format.object()},     {"created", meta.created},
            {"model", meta.model}, {"choices", std::move(choices)}, {"usage", job.usage()}};
}

ChunkRenderer::ChunkRenderer(const ResponseMeta& meta, const ResponseFormat& format,
                             bool include_usage)
    : head_(fmt::format(R"(data: {{"id":{},"object":"{}","created":{},"model":{},"choices":[)",
                        dump_json(meta.id), format.chunk_object(), meta.created,
                        dump_json(meta.model))),
      include_usage_(include_usage) {}

void ChunkRenderer::append_choice(std::string& out, const json& choice) const {
    out += head_;
    out += dump_json(choice);
    out += include_usage_ ? "],\"usage\":null}\n\n" : "]}\n\n";
}

void ChunkRenderer::append_usage(std::string& out, const json& usage) const {
    out += head_;
    out += "],\"usage\":";
    out += dump_json(usage);
    out += "}\n\n";
}

std::string sse_error_event(const std::string& what) {
    return "data: " + dump_json(error_body(engine_failure(what))) + "\n\n";
}

}  // namespace ladder::server
