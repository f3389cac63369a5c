"""The operator's endpoints: /health, /metrics under vLLM's names with the
ladder: prefix, /tokenize and /detokenize."""

import time

import http_raw
from ladder_server import MODEL_NAME

EXPECTED_METRICS = [
    "ladder:num_requests_running", "ladder:num_requests_waiting", "ladder:kv_cache_usage_perc",
    "ladder:kv_cache_blocks_used", "ladder:kv_cache_blocks_total", "ladder:prompt_tokens_total",
    "ladder:generation_tokens_total", "ladder:num_preemptions_total",
    "ladder:prefix_cache_queries_total", "ladder:prefix_cache_hits_total",
    "ladder:request_success_total",
    "ladder:time_to_first_token_seconds_bucket", "ladder:time_to_first_token_seconds_count",
    "ladder:time_per_output_token_seconds_sum", "ladder:e2e_request_latency_seconds_count",
    "ladder:request_queue_time_seconds_count",
]


def test_health_is_200_while_serving(server):
    status, _, body = http_raw.request_json(server, "GET", "/health", auth=False)
    assert status == 200 and body == {"status": "ok"}


def test_metrics_count_a_request(server):
    before = http_raw.metrics(server)
    status, _, response = http_raw.request_json(server, "POST", "/v1/completions", {
        "prompt": "One, two, three,", "max_tokens": 5, "ignore_eos": True})
    assert status == 200, response
    # The engine publishes its counters after the step that finished the
    # request, a moment after the response may have left.
    deadline = time.monotonic() + 5
    while True:
        after = http_raw.metrics(server)
        tokens = http_raw.metric(after, "ladder:generation_tokens_total")
        if tokens - http_raw.metric(before, "ladder:generation_tokens_total") >= 5:
            break
        assert time.monotonic() < deadline, "generation_tokens_total did not count the request"
        time.sleep(0.05)
    for name in EXPECTED_METRICS:
        http_raw.metric(after, name)

    def grew(name):
        return http_raw.metric(after, name) - http_raw.metric(before, name)

    assert grew("ladder:e2e_request_latency_seconds_count") >= 1
    assert grew("ladder:time_to_first_token_seconds_count") >= 1
    assert grew("ladder:prefix_cache_queries_total") >= 1
    assert 0 <= grew("ladder:prefix_cache_hits_total") <= grew("ladder:prefix_cache_queries_total")
    assert 0 <= http_raw.metric(after, "ladder:kv_cache_usage_perc") <= 1
    assert http_raw.metric(after, "ladder:kv_cache_blocks_total") > 0
    label = f'{{model_name="{MODEL_NAME}",le="+Inf"}}'
    assert after["ladder:e2e_request_latency_seconds_bucket" + label] == \
        after[f'ladder:e2e_request_latency_seconds_count{{model_name="{MODEL_NAME}"}}']


def test_tokenize_and_detokenize_round_trip(server):
    status, _, body = http_raw.request_json(server, "POST", "/tokenize",
                                            {"prompt": "Hello world", "model": MODEL_NAME})
    assert status == 200, body
    assert body["count"] == len(body["tokens"]) > 0
    assert body["max_model_len"] > 0
    status, _, text = http_raw.request_json(server, "POST", "/detokenize",
                                            {"tokens": body["tokens"]})
    assert status == 200 and text["prompt"] == "Hello world"


def test_tokenize_messages_matches_the_chat_prompt(server):
    messages = [{"role": "user", "content": "Hi"}]
    status, _, body = http_raw.request_json(server, "POST", "/tokenize", {"messages": messages})
    assert status == 200, body
    status, _, response = http_raw.request_json(server, "POST", "/v1/chat/completions",
                                                {"messages": messages, "max_tokens": 1})
    assert response["usage"]["prompt_tokens"] == body["count"]


def test_tokenize_errors(server):
    for body, param in (({}, "prompt"), ({"prompt": 3}, "prompt"), ({"messages": []}, "messages")):
        status, _, error = http_raw.request_json(server, "POST", "/tokenize", body)
        assert status == 400 and error["error"]["param"] == param
    for tokens in ([-1], [10 ** 9], ["a"], "x"):
        status, _, error = http_raw.request_json(server, "POST", "/detokenize", {"tokens": tokens})
        assert status == 400 and error["error"]["param"] == "tokens"
