#include "ladder/server/openai_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "ladder/server/api_error.h"
#include "ladder/server/request_fields.h"
#include "ladder/server/chat_prompt.h"
#include "ladder/server/structured_output.h"
#include "ladder/server/tool_request.h"

namespace ladder::server {

namespace {

using json = nlohmann::json;

// OpenAI's limits; vLLM's extensions (top_k, min_p, ...) take vLLM's.
constexpr int32_t kMaxCompletionLogprobs = 5;
constexpr int32_t kMaxTopLogprobs = 20;

// A field that is absent or null is not set.
std::optional<double> number_field(const json& body, const char* name, double min, double max) {
    const json* value = non_null_field(body, name);
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
    const json* value = non_null_field(body, name);
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
    const json* value = non_null_field(body, name);
    if (value == nullptr) return std::nullopt;
    if (!value->is_boolean()) invalid_param(name, fmt::format("'{}' must be true or false", name));
    return value->get<bool>();
}

std::optional<std::string> string_field(const json& body, const char* name) {
    const json* value = non_null_field(body, name);
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

engine::StopStrings parse_stop(const json& body) {
    const json* value = non_null_field(body, "stop");
    if (value == nullptr) return {};
    const auto too_long = [](const std::string& stop) {
        if (stop.size() > engine::kMaxStopStringBytes) {
            invalid_param("stop", fmt::format("a stop string may be at most {} bytes (got {})",
                                              engine::kMaxStopStringBytes, stop.size()));
        }
    };
    if (value->is_string()) {
        too_long(value->get_ref<const std::string&>());
        return engine::StopStrings({value->get<std::string>()});
    }
    if (!value->is_array() || value->size() > engine::kMaxStopStrings) {
        invalid_param("stop", fmt::format("'stop' must be a string or a list of at most {} strings",
                                          engine::kMaxStopStrings));
    }
    std::vector<std::string> stops;
    for (const json& stop : *value) {
        if (!stop.is_string()) invalid_param("stop", "'stop' must hold strings only");
        too_long(stop.get_ref<const std::string&>());
        stops.push_back(stop.get<std::string>());
    }
    return engine::StopStrings(std::move(stops));
}

std::set<engine::TokenId> parse_stop_token_ids(const json& body, int32_t vocab_size) {
    const json* ids = non_null_field(body, "stop_token_ids");
    if (ids == nullptr) return {};
    if (!ids->is_array() || ids->size() > engine::kMaxStopTokenIds) {
        invalid_param("stop_token_ids",
                      fmt::format("'stop_token_ids' must be a list of at most {} token ids",
                                  engine::kMaxStopTokenIds));
    }
    const std::vector<engine::TokenId> list = parse_token_ids(*ids, "stop_token_ids", vocab_size);
    return {list.begin(), list.end()};
}

engine::LogitBias parse_logit_bias(const json& body, int32_t vocab_size) {
    const json* value = non_null_field(body, "logit_bias");
    if (value == nullptr) return {};
    if (!value->is_object())
        invalid_param("logit_bias", "'logit_bias' must map token ids to numbers");
    if (value->size() > engine::kMaxLogitBiasEntries) {
        invalid_param("logit_bias", fmt::format("'logit_bias' may hold at most {} tokens (got {})",
                                                engine::kMaxLogitBiasEntries, value->size()));
    }
    engine::LogitBias bias;
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

std::string parse_cache_salt(const json& body) {
    std::string salt = string_field(body, "cache_salt").value_or("");
    if (non_null_field(body, "cache_salt") != nullptr && salt.empty())
        invalid_param("cache_salt", "'cache_salt' must be a non-empty string if given");
    if (salt.size() > engine::kMaxCacheSaltBytes) {
        invalid_param("cache_salt", fmt::format("'cache_salt' may be at most {} bytes (got {})",
                                                engine::kMaxCacheSaltBytes, salt.size()));
    }
    return salt;
}

// What bounds the prompts of one request, checked before any is tokenized or copied.
struct PromptBounds {
    int32_t n;              // choices per prompt: prompts x n stays within kMaxEngineRequests
    size_t max_text_bytes;  // max_prompt_bytes()
    int32_t max_model_len;
};

void check_text_bytes(size_t n_bytes, const PromptBounds& bounds, const char* param) {
    if (n_bytes > bounds.max_text_bytes) {
        invalid_param(param, fmt::format("the prompt has {} bytes of text; at most {} can fit the "
                                         "context limit of {} tokens",
                                         n_bytes, bounds.max_text_bytes, bounds.max_model_len));
    }
}

std::vector<engine::TokenId> parse_prompt_ids(const json& ids, const PromptBounds& bounds,
                                              int32_t vocab_size) {
    if (ids.size() >= static_cast<size_t>(bounds.max_model_len)) {
        invalid_param("prompt",
                      fmt::format("the prompt has {} tokens; the context limit of {} tokens "
                                  "leaves no room for output",
                                  ids.size(), bounds.max_model_len));
    }
    return parse_token_ids(ids, "prompt", vocab_size);
}

std::vector<std::vector<engine::TokenId>> parse_prompt(const json& body,
                                                       const tokenizer::Tokenizer& tokenizer,
                                                       const PromptBounds& bounds) {
    const json* prompt = non_null_field(body, "prompt");
    if (prompt == nullptr) invalid_param("prompt", "'prompt' is required");
    const int32_t vocab_size = tokenizer.vocab_size();
    // Prompts are tokenized as llama.cpp's server and vLLM do: with BOS where
    // the vocabulary wants it, control tokens written in the text recognised.
    auto encode = [&](const json& text) {
        const std::string& bytes = text.get_ref<const std::string&>();
        check_text_bytes(bytes.size(), bounds, "prompt");
        return tokenizer.encode(bytes, true, true);
    };
    if (prompt->is_string()) return {encode(*prompt)};
    const char* shape =
        "'prompt' must be a string, a list of strings, a list of token ids, or a list of token-id "
        "lists";
    if (!prompt->is_array() || prompt->empty()) invalid_param("prompt", shape);
    const json& first = prompt->front();
    if (first.is_number_integer()) return {parse_prompt_ids(*prompt, bounds, vocab_size)};
    if (prompt->size() * static_cast<size_t>(bounds.n) > kMaxEngineRequests) {
        invalid_param("prompt", fmt::format("{} prompts x n = {} is more than the {} choices one "
                                            "request may have",
                                            prompt->size(), bounds.n, kMaxEngineRequests));
    }
    std::vector<std::vector<engine::TokenId>> prompts;
    for (const json& item : *prompt) {
        if (first.is_string() && item.is_string()) {
            prompts.push_back(encode(item));
        } else if (first.is_array() && item.is_array() && !item.empty()) {
            prompts.push_back(parse_prompt_ids(item, bounds, vocab_size));
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

size_t max_prompt_bytes(const engine::ModelBundle& bundle, int32_t max_model_len) {
    return static_cast<size_t>(std::max(max_model_len, 0)) *
           static_cast<size_t>(bundle.max_token_bytes);
}

std::string engine_cache_salt(const std::string& tenant, const std::string& cache_salt) {
    if (tenant.empty() && cache_salt.empty()) return "";
    // The tenant's length first: no (tenant, salt) pair can spell another's.
    return fmt::format("{}:{}{}", tenant.size(), tenant, cache_salt);
}

std::vector<engine::TokenId> chat_prompt_tokens(const json& body, const engine::ModelBundle& bundle,
                                                int32_t max_model_len) {
    return render_chat_prompt(parse_chat_inputs(body), bundle, true,
                              max_prompt_bytes(bundle, max_model_len));
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
        const json* tools = non_null_field(body, "tools");
        const json* choice = non_null_field(body, "tool_choice");
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
            params.cache_salt = engine_cache_salt(request.tenant, request.cache_salt);
            if (params.sampling.seed) *params.sampling.seed += static_cast<uint64_t>(i);
            requests.push_back(std::move(params));
        }
    }
    return requests;
}

CompletionRequest parse_completion_request(const json& body, Endpoint endpoint,
                                           const engine::ModelBundle& bundle,
                                           int32_t max_model_len,
                                           const nlohmann::ordered_json* written) {
    if (!body.is_object()) invalid_param("", "the request body must be a JSON object");
    const tokenizer::Tokenizer& tokenizer = *bundle.tokenizer;
    CompletionRequest request;
    request.endpoint = endpoint;
    request.model = string_field(body, "model").value_or("");
    request.user = string_field(body, "user").value_or("");
    request.stream = bool_field(body, "stream").value_or(false);
    if (const json* options = non_null_field(body, "stream_options")) {
        if (!options->is_object())
            invalid_param("stream_options", "'stream_options' must be an object");
        request.include_usage = bool_field(*options, "include_usage").value_or(false);
    }
    request.n = static_cast<int32_t>(integer_field(body, "n", 1, kMaxChoices).value_or(1));
    request.cache_salt = parse_cache_salt(body);
    if (endpoint == Endpoint::Completions) {
        const PromptBounds bounds{request.n, max_prompt_bytes(bundle, max_model_len),
                                  max_model_len};
        request.prompts = parse_prompt(body, tokenizer, bounds);
        request.echo = bool_field(body, "echo").value_or(false);
    } else {
        request.prompts = {chat_prompt_tokens(body, bundle, max_model_len)};
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
    params.stop_token_ids = parse_stop_token_ids(body, tokenizer.vocab_size());
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
