"""Bounds on every multiplier and tenant isolation, through a real server:
requests that would multiply a large stop list by 256 choices are refused
without slowing a stream that is running, --max-queue has a finite default,
and one tenant's cached prefix never shows as another's cached_tokens."""

import asyncio
import os
import statistics
import tempfile
import threading
import time

import http_raw
from ladder_server import start_server

COMPLETIONS = "/v1/completions"
PROMPTS = [f"Prompt number {i}: tell me about the sea." for i in range(16)]


def stream_gaps(server, payload, start_event, gaps):
    """Streams payload and appends, per chunk after the first, the seconds
    since the previous one with whether start_event was set when it came."""
    sock = http_raw.open_stream(server, COMPLETIONS, payload, timeout=120)
    sock.settimeout(120)
    last = None
    data = b""
    try:
        while b"data: [DONE]" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
            now = time.monotonic()
            if last is not None:
                gaps.append((start_event.is_set(), now - last))
            last = now
    finally:
        sock.close()


def test_multiplied_lists_are_refused_and_do_not_slow_a_running_stream(server):
    # 16 prompts x n = 16 = 256 choices, each with a 1 MiB stop string or
    # 100k stop_token_ids: before the bounds, 256 engine requests each
    # holding its own copy, searched at every token of every sequence.
    big_stop = {"prompt": PROMPTS, "n": 16, "max_tokens": 8, "stop": "x" * (1 << 20)}
    many_ids = {"prompt": PROMPTS, "n": 16, "max_tokens": 8,
                "stop_token_ids": [7] * 100_000}
    attack = threading.Event()
    gaps = []
    streamer = threading.Thread(target=stream_gaps, args=(
        server, {"prompt": "Write a long essay about the sea.", "max_tokens": 160,
                 "ignore_eos": True, "stream": True, "temperature": 0}, attack, gaps))
    streamer.start()
    try:
        deadline = time.monotonic() + 60
        while len(gaps) < 30:  # a baseline before the attack
            assert time.monotonic() < deadline and streamer.is_alive(), "the stream did not run"
            time.sleep(0.05)
        attack.set()
        n_before = len(gaps)

        async def one_round():
            bodies = [big_stop, many_ids] * 4
            return await asyncio.gather(*[
                asyncio.to_thread(http_raw.request_json, server, "POST", COMPLETIONS, body)
                for body in bodies])

        # Rounds of 8 at once, spread over the next 20 gaps of the stream.
        replies = []
        while len(gaps) < n_before + 20 and streamer.is_alive() and len(replies) < 64:
            replies += asyncio.run(one_round())
            time.sleep(0.1)
        attack.clear()
        for status, _, body in replies:
            assert status == 400, body
            assert body["error"]["param"] in ("stop", "stop_token_ids"), body
    finally:
        streamer.join(120)
    baseline = statistics.median(g for during, g in gaps[:n_before] if not during)
    during = statistics.median(g for was_attack, g in gaps[n_before:] if was_attack)
    # The refusals cost only their parse: the stream's step time stays near
    # what it was (the same stream measured before and during). Near, not
    # equal: on 2 cores the client encoding 8 MiB of bodies and the server
    # parsing them take CPU from the stream (3x its gap was seen under a
    # loaded CI). Admitted, the 256 choices would join the stream's steps and
    # make each step take a second or more, far past this bound.
    assert during < 4.0 * baseline + 0.05, (
        f"median gap between tokens {baseline * 1e3:.1f} ms before, {during * 1e3:.1f} ms during")


def test_the_queue_is_bounded_by_default():
    # No --max-queue: 4 x --max-num-seqs = 4 requests may wait, so a request
    # of 5 choices could never enter and is refused at once.
    server = start_server("--max-num-seqs", "1")
    try:
        status, _, body = http_raw.request_json(server, "POST", COMPLETIONS,
                                                {"prompt": "Hi", "n": 5, "max_tokens": 1})
        assert status == 400, body
        assert "queue of 4" in body["error"]["message"], body
        status, _, body = http_raw.request_json(server, "POST", COMPLETIONS,
                                                {"prompt": "Hi", "n": 4, "max_tokens": 1})
        assert status == 200, body
    finally:
        assert server.stop() == 0


# Long enough for a few full 16-token blocks.
SHARED_PROMPT = ("You are the support assistant of a company that sells garden tools. "
                 "Answer politely, mention the warranty of two years when it matters, "
                 "and never promise a delivery date. The customer asks: ")


def cached_tokens(server, key, prompt, **fields):
    body = {"prompt": prompt, "max_tokens": 1, **fields}
    status, _, reply = http_raw.request_json(server, "POST", COMPLETIONS, body,
                                             headers={"Authorization": f"Bearer {key}"})
    assert status == 200, reply
    return reply["usage"]["prompt_tokens_details"]["cached_tokens"]


def test_tenants_never_see_each_others_cached_prefixes():
    with tempfile.NamedTemporaryFile("w", suffix=".keys", delete=False) as keys:
        keys.write("# two tenants, one with two keys\n"
                   "sk-alice-1 alice\nsk-alice-2 alice\nsk-bob bob\n")
    os.chmod(keys.name, 0o600)
    server = start_server("--api-key-file", keys.name, api_key=None)
    try:
        prompt = SHARED_PROMPT + "where is my order?"
        assert cached_tokens(server, "sk-alice-1", prompt) == 0
        hit = cached_tokens(server, "sk-alice-1", prompt)
        assert hit >= 32, "the same tenant's second request hits the cache"
        assert cached_tokens(server, "sk-alice-2", prompt) == hit, "one tenant, two keys"
        # Tenant B sends tenant A's prompt: nothing of A's is found.
        assert cached_tokens(server, "sk-bob", prompt) == 0
        assert cached_tokens(server, "sk-bob", prompt) == hit, "B's own blocks are B's"
        # vLLM's cache_salt splits one tenant's cache further.
        assert cached_tokens(server, "sk-alice-1", prompt, cache_salt="project-x") == 0
        assert cached_tokens(server, "sk-alice-1", prompt, cache_salt="project-x") == hit
        # The scheme is matched in any case; a wrong key is still refused.
        assert cached_tokens(server, "sk-bob", prompt) == hit
        status, _, _ = http_raw.request(server, "POST", COMPLETIONS, {"prompt": "Hi"},
                                        headers={"Authorization": "bearer sk-bob"})
        assert status == 200
        status, _, body = http_raw.request_json(server, "POST", COMPLETIONS, {"prompt": "Hi"},
                                                headers={"Authorization": "Bearer sk-eve"})
        assert status == 401 and body["error"]["code"] == "invalid_api_key"
    finally:
        assert server.stop() == 0
        os.unlink(keys.name)
