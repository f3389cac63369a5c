#include "ladder/server/openai_request.h"

#include <fmt/format.h>

#include <optional>

#include "ladder/server/api_error.h"
#include "ladder/server/structured_output.h"
#include "ladder/server/tool_request.h"

namespace ladder::server {

namespace {

using json = nlohmann::json;

// OpenAI's limits; vLLM's extensions (top_k, min_p, ...) take vLLM's.
constexpr int32_t kMaxCompletionLogprobs = 5;
constexpr int32_t kMaxTopLogprobs = 20;
constexpr size_t kMaxStops = 16;

// A field that is absent or null is not set.
const json* field(const json& body, const char* name) {
    const auto it = body.find(name);
    if (it == body.end() || it->is_null()) return nullptr;
    return &*it;
}

std::optional<double> number_field(const json& body, const char* name, double min, double max) {
    const json* value = field(body, name);
    if (value == nullptr) return std::nullopt;
    if (!value->is_number()) invalid_param(name, fmt::format("'{}' must be a number", name));
    const double number = value->get<double>();
    if (!(number >= min && number <= max)) {
        invalid_param(name,
                      fmt::format("'{}' must be in [{}, {}] (got {})", name, min, max, number));
    }
    return number;
}

std::optional<int64_t> integer_field(const json& body, const char* name, int64_t min, int64_t max) {
    const json* value = field(body, name);
    if (value == nullptr) return std::nullopt;
    if (!value->is_number_integer())
        invalid_param(name, fmt::format("'{}' must be an integer", name));
    // Unsigned JSON numbers above int64 are out of every range here.
    const int64_t number = value->is_number_unsigned() && value->get<uint64_t>() > INT64_MAX
                               ? INT64_MAX
                               : value->get<int64_t>();
    if (number < min || number > max) {
        invalid_param(name,
                      fmt::format("'{}' must be in [{}, {}] (got {})", name, min, max, number));
    }
    return number;
}

std::optional<bool> bool_field(const json& body, const char* name) {
    const json* value = field(body, name);
    if (value == nullptr) return std::nullopt;
    if (!value->is_boolean()) invalid_param(name, fmt::format("'{}' must be true or false", name));
    return value->get<bool>();
}

std::optional<std::string> string_field(const json& body, const char* name) {
    const json* value = field(body, name);
    if (value == nullptr) return std::nullopt;
    if (!value->is_string()) invalid_param(name, fmt::format("'{}' must be a string", name));
    return value->get<std::string>();
}

void parse_sampling(const json& body, engine::SamplingParams& sampling) {
    if (auto v = number_field(body, "temperature", 0.0, 2.0))
        sampling.temperature = static_cast<float>(*v);
    if (auto v = number_field(body, "top_p", 0.0, 1.0)) {
        if (*v == 0.0) invalid_param("top_p", "'top_p' must be in (0, 1] (got 0)");
        sampling.top_p = static_cast<float>(*v);
    }
    // vLLM's -1 and 0 both mean off.
    if (auto v = integer_field(body, "top_k", -1, INT32_MAX))
        sampling.top_k = static_cast<int32_t>(std::max<int64_t>(*v, 0));
    if (auto v = number_field(body, "min_p", 0.0, 1.0)) sampling.min_p = static_cast<float>(*v);
    if (auto v = number_field(body, "frequency_penalty", -2.0, 2.0))
        sampling.frequency_penalty = static_cast<float>(*v);
    if (auto v = number_field(body, "presence_penalty", -2.0, 2.0))
        sampling.presence_penalty = static_cast<float>(*v);
    if (auto v = number_field(body, "repetition_penalty", 0.0, 10.0)) {
        if (*v == 0.0) invalid_param("repetition_penalty", "'repetition_penalty' must be > 0");
        sampling.repetition_penalty = static_cast<float>(*v);
    }
    if (auto v = integer_field(body, "seed", INT64_MIN, INT64_MAX))
        sampling.seed = static_cast<uint64_t>(*v);
}

std::vector<std::string> parse_stop(const json& body) {
    const json* value = field(body, "stop");
    if (value == nullptr) return {};
    if (value->is_string()) return {value->get<std::string>()};
    if (!value->is_array() || value->size() > kMaxStops) {
        invalid_param("stop", fmt::format("'stop' must be a string or a list of at most {} strings",
                                          kMaxStops));
    }
    std::vector<std::string> stops;
    for (const json& stop : *value) {
        if (!stop.is_string()) invalid_param("stop", "'stop' must hold strings only");
        stops.push_back(stop.get<std::string>());
    }
    return stops;
}

std::vector<std::pair<engine::TokenId, float>> parse_logit_bias(const json& body,
                                                                int32_t vocab_size) {
    const json* value = field(body, "logit_bias");
    if (value == nullptr) return {};
    if (!value->is_object())
        invalid_param("logit_bias", "'logit_bias' must map token ids to numbers");
    std::vector<std::pair<engine::TokenId, float>> bias;
    for (const auto& [key, number] : value->items()) {
        size_t used = 0;
        long long id = -1;
        try {
            id = std::stoll(key, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != key.size() || id < 0 || id >= vocab_size) {
            invalid_param(
                "logit_bias",
                fmt::format("'logit_bias' key '{}' is not a token id in [0, {})", key, vocab_size));
        }
        if (!number.is_number() ||
            !(number.get<double>() >= -100.0 && number.get<double>() <= 100.0)) {
            invalid_param("logit_bias", "'logit_bias' values must be numbers in [-100, 100]");
        }
        bias.emplace_back(static_cast<engine::TokenId>(id), number.get<float>());
    }
    return bias;
}

std::vector<std::vector<engine::TokenId>> parse_prompt(const json& body,
                                                       const tokenizer::Tokenizer& tokenizer) {
    const json* prompt = field(body, "prompt");
    if (prompt == nullptr) invalid_param("prompt", "'prompt' is required");
    const int32_t vocab_size = tokenizer.vocab_size();
    // Prompts are tokenized as llama.cpp's server and vLLM do: with BOS where
    // the vocabulary wants it, control tokens written in the text recognised.
    auto encode = [&](const json& text) {
        return tokenizer.encode(text.get<std::string>(), true, true);
    };
    if (prompt->is_string()) return {encode(*prompt)};
    const char* shape =
        "'prompt' must be a string, a list of strings, a list of token ids, or a list of token-id "
        "lists";
    if (!prompt->is_array() || prompt->empty()) invalid_param("prompt", shape);
    const json& first = prompt->front();
    std::vector<std::vector<engine::TokenId>> prompts;
    if (first.is_number_integer()) return {parse_token_ids(*prompt, "prompt", vocab_size)};
    for (const json& item : *prompt) {
        if (first.is_string() && item.is_string()) {
            prompts.push_back(encode(item));
        } else if (first.is_array() && item.is_array() && !item.empty()) {
            prompts.push_back(parse_token_ids(item, "prompt", vocab_size));
        } else {
            invalid_param("prompt", shape);
        }
    }
    return prompts;
}

}  // namespace

std::vector<engine::TokenId> parse_token_ids(const json& value, const char* name,
                                             int32_t vocab_size) {
    std::vector<engine::TokenId> ids;
    for (const json& id : value) {
        // Unsigned ids above int64 are out of range too (get<int64_t> would wrap).
        if (!id.is_number_integer() ||
            (id.is_number_unsigned() && id.get<uint64_t>() > INT32_MAX) || id.get<int64_t>() < 0 ||
            id.get<int64_t>() >= vocab_size) {
            invalid_param(name,
                          fmt::format("'{}' must hold token ids in [0, {})", name, vocab_size));
        }
        ids.push_back(static_cast<engine::TokenId>(id.get<int64_t>()));
    }
    return ids;
}

namespace {

void parse_logprobs(const json& body, Endpoint endpoint, engine::RequestParams& params) {
    if (endpoint == Endpoint::Completions) {
        if (auto n = integer_field(body, "logprobs", 0, kMaxCompletionLogprobs)) {
            params.logprobs = static_cast<int32_t>(*n);
        }
        return;
    }
    const auto top = integer_field(body, "top_logprobs", 0, kMaxTopLogprobs);
    if (bool_field(body, "logprobs").value_or(false)) {
        params.logprobs = static_cast<int32_t>(top.value_or(0));
    } else if (top) {
        invalid_param("top_logprobs", "'top_logprobs' needs 'logprobs': true");
    }
}

// The grammar the output must follow (structured output, tool calls) and how
// the chat endpoint reads it. Compiled last, once everything cheaper to
// check has passed.
void parse_output_rules(const SchemaSource& source, const engine::ModelBundle& bundle,
                        CompletionRequest& request) {
    const json& body = source.body();
    std::optional<OutputGrammar> grammar = parse_output_grammar(source);
    std::string gate;
    if (request.endpoint == Endpoint::Completions) {
        // Tools would change the output: refused rather than ignored (an
        // empty list or tool_choice none asks for nothing).
        const json* tools = field(body, "tools");
        const json* choice = field(body, "tool_choice");
        if ((tools != nullptr && !(tools->is_array() && tools->empty())) ||
            (choice != nullptr && *choice != "none")) {
            const char* name = tools != nullptr ? "tools" : "tool_choice";
            invalid_param(name, fmt::format("'{}' is a field of /v1/chat/completions", name));
        }
    } else {
        const ChatFeatures features = chat_features(bundle);
        if (const std::optional<ToolRequest> tools = parse_tool_request(source)) {
            if (tools->choice != ToolChoice::None) {
                request.chat_output.tool_calls = features.tool_calls;
            }
            grammar = tool_call_grammar(*tools, features.tool_calls, grammar);
        }
        // A reasoning model thinks freely; the grammar holds its answer.
        request.chat_output.reasoning = features.reasoning;
        if (features.reasoning) gate = "</think>";
    }
    if (grammar) {
        request.params.make_constraint = compile_output_grammar(*grammar, *bundle.grammars, gate);
    }
}

}  // namespace

std::vector<engine::RequestParams> engine_requests(const CompletionRequest& request) {
    std::vector<engine::RequestParams> requests;
    for (const std::vector<engine::TokenId>& prompt : request.prompts) {
        for (int32_t i = 0; i < request.n; ++i) {
            engine::RequestParams params = request.params;
            params.prompt = prompt;
            if (params.sampling.seed) *params.sampling.seed += static_cast<uint64_t>(i);
            requests.push_back(std::move(params));
        }
    }
    return requests;
}

CompletionRequest parse_completion_request(const json& body, Endpoint endpoint,
                                           const engine::ModelBundle& bundle,
                                           const nlohmann::ordered_json* written) {
    if (!body.is_object()) invalid_param("", "the request body must be a JSON object");
    const tokenizer::Tokenizer& tokenizer = *bundle.tokenizer;
    CompletionRequest request;
    request.endpoint = endpoint;
    request.model = string_field(body, "model").value_or("");
    request.user = string_field(body, "user").value_or("");
    request.stream = bool_field(body, "stream").value_or(false);
    if (const json* options = field(body, "stream_options")) {
        if (!options->is_object())
            invalid_param("stream_options", "'stream_options' must be an object");
        request.include_usage = bool_field(*options, "include_usage").value_or(false);
    }
    request.n = static_cast<int32_t>(integer_field(body, "n", 1, kMaxChoices).value_or(1));
    if (endpoint == Endpoint::Completions) {
        request.prompts = parse_prompt(body, tokenizer);
        request.echo = bool_field(body, "echo").value_or(false);
    } else {
        request.prompts = {chat_prompt_tokens(body, bundle, written)};
    }

    engine::RequestParams& params = request.params;
    parse_sampling(body, params.sampling);
    // max_completion_tokens is the newer name; completions default to 16
    // tokens as OpenAI's legacy API does, chat to the rest of the context.
    auto max_tokens = integer_field(body, "max_completion_tokens", 1, INT32_MAX);
    if (!max_tokens) max_tokens = integer_field(body, "max_tokens", 1, INT32_MAX);
    if (max_tokens) {
        params.max_tokens = static_cast<int32_t>(*max_tokens);
    } else if (endpoint == Endpoint::Completions) {
        params.max_tokens = 16;
    }
    params.stop = parse_stop(body);
    if (const json* ids = field(body, "stop_token_ids")) {
        if (!ids->is_array())
            invalid_param("stop_token_ids", "'stop_token_ids' must be a list of token ids");
        params.stop_token_ids = parse_token_ids(*ids, "stop_token_ids", tokenizer.vocab_size());
    }
    params.ignore_eos = bool_field(body, "ignore_eos").value_or(false);
    params.logit_bias = parse_logit_bias(body, tokenizer.vocab_size());
    parse_logprobs(body, endpoint, params);
    // Echo with logprobs asks for the prompt's log-probabilities, which the
    // engine does not compute: refuse rather than answer half.
    if (request.echo && params.logprobs) {
        invalid_param("echo", "'echo' together with 'logprobs' is not supported");
    }
    parse_output_rules(SchemaSource(body, written), bundle, request);
    return request;
}

}  // namespace ladder::server
