#include "ladder/server/completion_job.h"

#include <fmt/format.h>

#include <algorithm>

#include "ladder/server/api_error.h"
#include "ladder/server/server_context.h"

namespace ladder::server {

namespace {

using json = nlohmann::json;


// The engine checks this too; here the parameter to blame gets its name.
void check_context(const CompletionRequest& request, const engine::KvCachePlan& plan) {
    const int64_t limit = std::min<int64_t>(plan.max_model_len, plan.n_tokens());
    const std::string limit_name = limit == plan.max_model_len
                                       ? fmt::format("the context limit of {} tokens", limit)
                                       : fmt::format("the KV cache of {} tokens", limit);
    const char* prompt_param =
        request.endpoint == Endpoint::ChatCompletions ? "messages" : "prompt";
    for (const std::vector<engine::TokenId>& prompt : request.prompts) {
        const auto n_prompt = static_cast<int64_t>(prompt.size());
        if (n_prompt == 0) invalid_param(prompt_param, "the prompt is empty");
        if (n_prompt >= limit) {
            invalid_param(prompt_param,
                          fmt::format("the prompt has {} tokens; {} leaves no room for output",
                                      n_prompt, limit_name));
        }
        const std::optional<int32_t>& max_tokens = request.params.max_tokens;
        if (max_tokens && n_prompt + *max_tokens > limit) {
            invalid_param("max_tokens",
                          fmt::format("the prompt ({} tokens) plus max_tokens ({}) exceeds {}",
                                      n_prompt, *max_tokens, limit_name));
        }
    }
}

}  // namespace

CompletionJob::CompletionJob(ServerContext& context, CompletionRequest request)
    : context_(context), request_(std::move(request)) {
    const size_t n_choices = request_.prompts.size() * static_cast<size_t>(request_.n);
    if (n_choices > kMaxEngineRequests) {
        invalid_param("n", fmt::format("prompts x n is {}; at most {} choices per request",
                                       n_choices, kMaxEngineRequests));
    }
    check_context(request_, context_.engine.kv_plan());

    // Choice index = prompt index * n + i, as OpenAI numbers them.
    std::vector<engine::RequestParams> requests = engine_requests(request_);
    for (size_t p = 0; p < request_.prompts.size(); ++p) {
        for (int32_t i = 0; i < request_.n; ++i) {
            ChoiceState& choice = choices_.emplace_back();
            choice.prompt_index = static_cast<int32_t>(p);
            choice.n_prompt_tokens = static_cast<int32_t>(request_.prompts[p].size());
            if (request_.echo) {
                choice.echo = context_.bundle.tokenizer->decode(request_.prompts[p]);
            }
            if (request_.chat_output.active()) {
                choice.chat = std::make_unique<ChatOutputParser>(request_.chat_output);
                choice.message = AssistantMessage(request_.chat_output.reasoning);
            }
        }
    }
    ServerMetrics& metrics = context_.metrics;
    ids_ = context_.admission.submit(std::move(requests), [&](size_t index) {
        return [outputs = outputs_, &metrics, index](engine::RequestOutput&& output) {
            if (output.finished()) metrics.record_finished(output);
            outputs->push(static_cast<int32_t>(index), std::move(output));
        };
    });
}

CompletionJob::~CompletionJob() {
    outputs_->on_ready({});  // the engine's last outputs wake nobody
    if (!finished()) abort();
}

void CompletionJob::on_output(std::function<void()> wake) { outputs_->on_ready(std::move(wake)); }

std::vector<ChoiceOutput> CompletionJob::take() {
    std::vector<ChoiceOutput> taken = outputs_->take();
    for (ChoiceOutput& news : taken) {
        ChoiceState& choice = choices_[static_cast<size_t>(news.choice)];
        const engine::RequestOutput& output = news.output;
        choice.n_prompt_tokens = output.n_prompt_tokens;
        choice.n_generated_tokens = output.n_generated_tokens;
        choice.n_cached_prompt_tokens = output.n_cached_prompt_tokens;
        if (output.finished() && !choice.finish_reason) {
            choice.finish_reason = output.finish_reason;
            choice.error = output.error;
            ++n_finished_;
        }
        if (choice.chat) {
            MessageDelta delta = choice.chat->push(output.text);
            if (output.finished()) append_delta(delta, choice.chat->finish());
            choice.message.add(delta);
            news.message = std::move(delta);
        }
    }
    return taken;
}

bool CompletionJob::collect() {
    for (ChoiceOutput& news : take()) {
        ChoiceState& choice = choices_[static_cast<size_t>(news.choice)];
        choice.text += news.output.text;
        for (engine::TokenLogprob& logprob : news.output.logprobs) {
            choice.logprobs.push_back(std::move(logprob));
        }
    }
    return finished();
}

void CompletionJob::abort() { context_.admission.abort(ids_); }

const ChoiceState* CompletionJob::failed_choice() const {
    for (const ChoiceState& choice : choices_) {
        if (choice.finish_reason == engine::FinishReason::Error) return &choice;
    }
    return nullptr;
}

json CompletionJob::usage() const {
    int64_t n_prompt = 0;
    int64_t n_cached = 0;
    int64_t n_completion = 0;
    for (size_t i = 0; i < choices_.size(); ++i) {
        const ChoiceState& choice = choices_[i];
        n_completion += choice.n_generated_tokens;
        // A prompt is counted once however many choices it has, as OpenAI does.
        if (i % static_cast<size_t>(request_.n) == 0) {
            n_prompt += choice.n_prompt_tokens;
            n_cached += choice.n_cached_prompt_tokens;
        }
    }
    return {{"prompt_tokens", n_prompt},
            {"completion_tokens", n_completion},
            {"total_tokens", n_prompt + n_completion},
            {"prompt_tokens_details", {{"cached_tokens", n_cached}}}};
}

}  // namespace ladder::server
