// One API request in the engine: its choices (n per prompt, one engine
// request each), what each has produced so far, and the usage they add up
// to. Shared between the handler and a stream's content provider; when the
// last owner lets go, whatever has not finished is aborted.
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ladder/server/choice_outputs.h"
#include "ladder/server/openai_request.h"

namespace ladder::server {

struct ServerContext;

struct ChoiceState {
    int32_t prompt_index = 0;
    std::string echo;  // the prompt's text, when the request asked for echo
    // Whole responses gather everything here; streams send it as it comes.
    std::string text;
    std::vector<engine::TokenLogprob> logprobs;
    std::optional<engine::FinishReason> finish_reason;
    int32_t n_prompt_tokens = 0;
    int32_t n_generated_tokens = 0;
    int32_t n_cached_prompt_tokens = 0;
    // Chat with tools or a reasoning model: how the text is read, and the
    // message it makes (null: the text is the content).
    std::unique_ptr<ChatOutputParser> chat;
    AssistantMessage message;
};

class CompletionJob {
public:
    // Submits every choice (throws ApiError: nothing is left running then).
    CompletionJob(ServerContext& context, CompletionRequest request);
    ~CompletionJob();
    CompletionJob(const CompletionJob&) = delete;
    CompletionJob& operator=(const CompletionJob&) = delete;

    const CompletionRequest& request() const { return request_; }
    const std::vector<ChoiceState>& choices() const { return choices_; }
    bool finished() const { return n_finished_ == choices_.size(); }

    // Waits up to timeout for news, updates the choices' counts and finish
    // reasons, reads chat text into message deltas, and returns the outputs
    // for the caller to render.
    std::vector<ChoiceOutput> take(std::chrono::milliseconds timeout);
    // take() until every choice finished or the time is up, gathering text
    // and logprobs; true when every choice finished.
    bool collect_for(std::chrono::milliseconds budget);
    // Ends the choices still running (a client went away).
    void abort();

    // {prompt_tokens, completion_tokens, total_tokens, prompt_tokens_details}.
    nlohmann::json usage() const;

private:
    ServerContext& context_;
    CompletionRequest request_;
    std::vector<ChoiceState> choices_;
    std::vector<engine::RequestId> ids_;
    size_t n_finished_ = 0;
    std::shared_ptr<ChoiceOutputs> outputs_ = std::make_shared<ChoiceOutputs>();
};

}  // namespace ladder::server
