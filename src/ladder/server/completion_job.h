// One API request in the engine: its choices (n per prompt, one engine
// request each), what each has produced so far, and the usage they add up
// to. Owned by the response that writes it (a stream or a pending whole
// body); when it is let go, whatever has not finished is aborted. Nothing
// here waits: the engine's outputs wake the owner (on_output).
#pragma once

#include <functional>
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
    std::string error;  // with FinishReason::Error: what failed in the engine
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
    // The first choice that ended with FinishReason::Error, or null.
    const ChoiceState* failed_choice() const;

    // wake is called from the engine thread when outputs arrive (see
    // ChoiceOutputs::on_ready); it must only schedule a take().
    void on_output(std::function<void()> wake);
    // The outputs that arrived, with the choices' counts and finish reasons
    // updated and chat text read into message deltas, for the caller to
    // render.
    std::vector<ChoiceOutput> take();
    // take(), gathering text and logprobs into the choices; true when every
    // choice finished.
    bool collect();
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
