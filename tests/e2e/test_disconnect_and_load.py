"""Faults and load: clients that vanish mid-stream have their requests
aborted and their KV blocks freed; 256 concurrent streams all finish
properly; 429 comes when, and only when, the waiting queue is full."""

import asyncio
import json
import socket
import time

import http_raw
from ladder_server import MODEL_NAME, start_server

COMPLETIONS = "/v1/completions"


def read_events(sock, n_events, timeout=60.0):
    """Reads from a streaming response until n_events SSE events came."""
    sock.settimeout(timeout)
    data = b""
    while data.count(b"data: ") < n_events:
        chunk = sock.recv(4096)
        assert chunk, "the server closed the stream early"
        data += chunk
    return data


ABORTED = f'ladder:request_success_total{{model_name="{MODEL_NAME}",finished_reason="abort"}}'


GENERATED = "ladder:generation_tokens_total"
# Tokens the 8 dropped streams may still generate after their clients reset:
# the server notices at its next write to each, one or two decode steps (of 8
# tokens) later; four steps leave room for a descheduled client.
MAX_TOKENS_AFTER_DROP = 4 * 8  # measured 9 to 16


def test_dropped_streams_are_aborted_and_free_their_blocks(server):
    before = http_raw.wait_for_idle(server)
    payload = {"prompt": "Write a long essay about the sea.", "max_tokens": 2000,
               "ignore_eos": True, "stream": True}
    sockets = [http_raw.open_stream(server, COMPLETIONS, payload) for _ in range(8)]
    for sock in sockets:
        read_events(sock, 3)
    at_drop = http_raw.metrics(server)
    assert (http_raw.metric(at_drop, "ladder:num_requests_running") +
            http_raw.metric(at_drop, "ladder:num_requests_waiting")) == 8
    assert http_raw.metric(at_drop, "ladder:kv_cache_blocks_used") > 0
    for sock in sockets:
        # A reset, as when a client process dies.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        sock.close()
    after = http_raw.wait_for_idle(server)
    assert http_raw.metric(after, ABORTED) - http_raw.metric(before, ABORTED) == 8
    generated = http_raw.metric(after, GENERATED) - http_raw.metric(before, GENERATED)
    after_drop = http_raw.metric(after, GENERATED) - http_raw.metric(at_drop, GENERATED)
    print(f"MEASURE dropped streams: {generated} tokens in all, {after_drop} after the drop")
    assert after_drop <= MAX_TOKENS_AFTER_DROP
    # The aborted requests account for every token generated meanwhile.
    assert (http_raw.metric(after, "ladder:request_generation_tokens_sum") -
            http_raw.metric(before, "ladder:request_generation_tokens_sum")) == generated


def test_dropped_whole_response_is_aborted(server):
    """A non-streaming request whose client hangs up before its answer is
    ready: the server watches the connection while the request runs, and
    the hang-up aborts it at once."""
    aborted_before = http_raw.metric(http_raw.metrics(server), ABORTED)
    sock = http_raw.open_stream(server, COMPLETIONS, {
        "prompt": "Write a long essay about the sea.", "max_tokens": 4000, "ignore_eos": True})
    deadline = time.monotonic() + 30
    while http_raw.metric(http_raw.metrics(server), "ladder:num_requests_running") < 1:
        assert time.monotonic() < deadline, "the request never started"
        time.sleep(0.05)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    sock.close()
    values = http_raw.wait_for_idle(server)
    assert http_raw.metric(values, ABORTED) - aborted_before == 1
    assert http_raw.metric(values, "ladder:http_clients_gone_total") >= 1


def test_slow_whole_response_is_still_json(client):
    """Long enough (a few seconds) that its answer waits for the engine while
    the connection is watched; it comes as one JSON body with a length."""
    response = client.completions.create(model=MODEL_NAME, prompt="Tell me a story.",
                                         max_tokens=400, extra_body={"ignore_eos": True})
    assert response.usage.completion_tokens == 400
    assert response.choices[0].finish_reason == "length"


async def many_streams(server, n, payload):
    return await asyncio.gather(*(http_raw.stream_async(server, COMPLETIONS, payload)
                                  for _ in range(n)))


def test_256_concurrent_streams_all_finish_with_usage_and_done(server):
    payload = {"prompt": "Hello there", "max_tokens": 3, "ignore_eos": True, "stream": True,
               "stream_options": {"include_usage": True}}
    start = time.monotonic()
    results = asyncio.run(many_streams(server, 256, payload))
    elapsed = time.monotonic() - start
    statuses = [status for status, _, _ in results]
    # The server's --max-queue is 256: at this load nothing is refused.
    assert statuses.count(200) == 256, f"statuses: {sorted(set(statuses))}"
    for _, _, events in results:
        assert events[-1] == "[DONE]"
        usage = json.loads(events[-2])
        assert usage["choices"] == []
        assert usage["usage"]["completion_tokens"] == 3
        text = "".join(c["text"] for e in events[:-2] for c in json.loads(e)["choices"])
        assert text
        assert json.loads(events[-3])["choices"][0]["finish_reason"] == "length"
    http_raw.wait_for_idle(server)
    print(f"256 streams in {elapsed:.1f} s")


def test_queue_limit_gives_429_with_retry_after():
    server = start_server("--max-num-seqs", "2", "--max-queue", "4")
    try:
        payload = {"prompt": "Hello", "max_tokens": 24, "ignore_eos": True, "stream": True}
        results = asyncio.run(many_streams(server, 24, payload))
        statuses = [status for status, _, _ in results]
        assert 429 in statuses, f"no 429 at 24 requests for a queue of 4: {statuses}"
        # At least the queue's worth was admitted and ran to the end; what was
        # refused says why and when to come back.
        assert statuses.count(200) >= 4, statuses
        for status, head, body in results:
            if status == 429:
                assert body["error"]["code"] == "queue_full"
                assert "retry-after: 1" in head
            else:
                assert status == 200 and body[-1] == "[DONE]"
        http_raw.wait_for_idle(server)
        # With the queue empty again, requests are admitted, but never one
        # with more choices than the queue holds.
        assert http_raw.request(server, "POST", COMPLETIONS,
                                {"prompt": "Hi", "max_tokens": 2})[0] == 200
        status, _, error = http_raw.request_json(server, "POST", COMPLETIONS,
                                                 {"prompt": "Hi", "max_tokens": 2, "n": 5})
        assert status == 400 and error["error"]["param"] == "n"
    finally:
        assert server.stop() == 0

