"""The operator's endpoints: /health, /metrics under vLLM's names with the
ladder: prefix, /tokenize and /detokenize."""

import asyncio
import json
import time

import http_raw
from ladder_server import MODEL_NAME, start_server

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


HISTOGRAMS = [
    "ladder:time_to_first_token_seconds", "ladder:time_per_output_token_seconds",
    "ladder:e2e_request_latency_seconds", "ladder:request_queue_time_seconds",
    "ladder:request_prefill_time_seconds", "ladder:request_decode_time_seconds",
    "ladder:request_prompt_tokens", "ladder:request_generation_tokens",
]


def finished(values, reason):
    return values[f'ladder:request_success_total{{model_name="{MODEL_NAME}",'
                  f'finished_reason="{reason}"}}']


def test_metrics_count_one_request_exactly(server):
    before = http_raw.wait_for_idle(server)
    # Shorter than a KV block (16 tokens), so the prefix cache cannot hit.
    status, _, response = http_raw.request_json(server, "POST", "/v1/completions", {
        "prompt": "One, two, three,", "max_tokens": 5, "ignore_eos": True})
    assert status == 200, response
    n_prompt = response["usage"]["prompt_tokens"]
    assert 0 < n_prompt < 16 and response["usage"]["completion_tokens"] == 5
    # The engine publishes its counters after the step that finished the
    # request, a moment after the response may have left.
    deadline = time.monotonic() + 5
    while True:
        after = http_raw.metrics(server)
        # The engine's counters are published after the step that sent the
        # last output: wait for that too (no request running).
        if (finished(after, "length") > finished(before, "length")
                and http_raw.metric(after, "ladder:num_requests_running") == 0):
            break
        assert time.monotonic() < deadline, "request_success_total did not count the request"
        time.sleep(0.05)
    for name in EXPECTED_METRICS + [h + suffix for h in HISTOGRAMS for suffix in ("_sum", "_count")]:
        http_raw.metric(after, name)

    def grew(name):
        return http_raw.metric(after, name) - http_raw.metric(before, name)

    assert finished(after, "length") - finished(before, "length") == 1
    assert finished(after, "stop") == finished(before, "stop")
    assert finished(after, "abort") == finished(before, "abort")
    assert grew("ladder:prompt_tokens_total") == n_prompt
    assert grew("ladder:generation_tokens_total") == 5
    assert grew("ladder:prefix_cache_queries_total") == n_prompt
    assert grew("ladder:prefix_cache_hits_total") == 0
    assert grew("ladder:num_preemptions_total") == 0
    for name in HISTOGRAMS:
        assert grew(name + "_count") == 1, f"{name} did not observe the request once"
    assert grew("ladder:request_prompt_tokens_sum") == n_prompt
    assert grew("ladder:request_generation_tokens_sum") == 5
    # 5 tokens fall in the bucket le="5", not le="2" (buckets are cumulative).
    bucket = 'ladder:request_generation_tokens_bucket{{model_name="{}",le="{}"}}'
    assert after[bucket.format(MODEL_NAME, "2")] == before[bucket.format(MODEL_NAME, "2")]
    assert after[bucket.format(MODEL_NAME, "5")] - before[bucket.format(MODEL_NAME, "5")] == 1
    # The request's phases add up: queue + prefill = time to first token, and
    # time to first token + decode = end to end (all from the same timestamps).
    e2e = grew("ladder:e2e_request_latency_seconds_sum")
    ttft = grew("ladder:time_to_first_token_seconds_sum")
    decode = grew("ladder:request_decode_time_seconds_sum")
    queue_and_prefill = (grew("ladder:request_queue_time_seconds_sum") +
                         grew("ladder:request_prefill_time_seconds_sum"))
    assert 0 < ttft < e2e and decode > 0
    assert abs(queue_and_prefill - ttft) <= 1e-6 * e2e + 1e-9
    assert abs(ttft + decode - e2e) <= 1e-6 * e2e + 1e-9
    assert abs(grew("ladder:time_per_output_token_seconds_sum") - decode / 4) <= 1e-6 * e2e + 1e-9
    assert 0 <= http_raw.metric(after, "ladder:kv_cache_usage_perc") <= 1
    assert http_raw.metric(after, "ladder:kv_cache_blocks_total") > 0
    label = f'{{model_name="{MODEL_NAME}",le="+Inf"}}'
    assert after["ladder:e2e_request_latency_seconds_bucket" + label] == \
        after[f'ladder:e2e_request_latency_seconds_count{{model_name="{MODEL_NAME}"}}']


async def completions_at_once(server, prompts, max_tokens):
    payloads = [{"prompt": p, "max_tokens": max_tokens, "ignore_eos": True, "temperature": 0,
                 "stream": True} for p in prompts]
    return await asyncio.gather(*(http_raw.stream_async(server, "/v1/completions", payload)
                                  for payload in payloads))


def streamed_text(events):
    assert events[-1] == "[DONE]"
    return "".join(c["text"] for e in events[:-1] for c in json.loads(e)["choices"])


def test_a_kv_cache_smaller_than_the_batch_preempts_and_recomputes_the_same_text():
    # 4 MiB of SmolLM2's KV cache holds 11 blocks of 16 tokens: three requests
    # of ~110 tokens each cannot all stay, so the scheduler preempts.
    server = start_server("--kv-cache-mem", "4MiB")
    try:
        prompts = ["The river flows", "Mountains rise above", "In the old city"]
        before = http_raw.metrics(server)
        results = asyncio.run(completions_at_once(server, prompts, 100))
        after = http_raw.wait_for_idle(server)
        assert http_raw.metric(after, "ladder:num_preemptions_total") > \
            http_raw.metric(before, "ladder:num_preemptions_total")
        together = [streamed_text(events) for status, _, events in results]
        assert all(status == 200 for status, _, _ in results)
        # Alone, each fits: no preemption, and (batch invariance) the same text.
        alone = [streamed_text(asyncio.run(completions_at_once(server, [p], 100))[0][2])
                 for p in prompts]
        assert together == alone
    finally:
        assert server.stop() == 0


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
