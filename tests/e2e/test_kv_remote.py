"""The prefix cache's remote tier (--kv-remote) against a real redis-server
that each test starts on a free loopback port (no persistence) and stops:
a block one replica computed is read by another process with an empty
memory cache; a block of another model, or corrupted, is a miss (the answer
is the one computed cold); a Redis killed mid-request or never started
fails no request and is counted."""

import signal
import threading
import time

import pytest

import http_raw
from ladder_server import GEMMA3_MODEL, start_server
from redis_server import RedisServer, free_port

BLOCK = 16
# About 300 tokens: 18 full blocks.
PROMPT = ("The support desk answers questions about the ladder inference server. " * 30
          + "Question: how do I restart a replica? Answer:")
REQUEST = {"prompt": PROMPT, "max_tokens": 6, "temperature": 0, "ignore_eos": True}

class Redis(RedisServer):
    def block_keys(self):
        listed = self.cli("--scan", "--pattern", "ladder:kv:v1:*:f16:*")
        return sorted(line for line in listed.splitlines() if line)


@pytest.fixture
def redis():
    server = Redis()
    yield server
    server.stop(signal.SIGKILL)


def complete(server, body=REQUEST):
    status, _, response = http_raw.request_json(server, "POST", "/v1/completions", body)
    assert status == 200, response
    return response


def cached_tokens(response):
    return response["usage"]["prompt_tokens_details"]["cached_tokens"]


def remote_metric(server, name):
    return http_raw.metric(http_raw.metrics(server), f"ladder:kv_remote_{name}")


def wait_until_written(server, redis, n_blocks):
    """The writes run off the engine thread: waits until they are in Redis."""
    deadline = time.monotonic() + 20
    while len(redis.block_keys()) < n_blocks:
        assert time.monotonic() < deadline, (
            f"{len(redis.block_keys())} of {n_blocks} blocks reached Redis")
        time.sleep(0.05)
    assert remote_metric(server, "bytes_written_total") > 0


def compute_cold(redis, model=None, wait=True):
    """Serves REQUEST once on a fresh replica and waits for its blocks in
    Redis (or stops it at once: it sends its queue on the way out)."""
    kwargs = {"model": model} if model else {}
    server = start_server("--kv-remote", redis.url, **kwargs)
    try:
        response = complete(server)
        assert cached_tokens(response) == 0
        n_blocks = (response["usage"]["prompt_tokens"] - 1) // BLOCK
        if wait:
            wait_until_written(server, redis, n_blocks)
        return response, n_blocks
    finally:
        server.stop()


def test_a_second_process_reads_the_blocks_the_first_computed(redis):
    # Stopped right after its answer, as a rolling update would: what it had
    # queued still reaches Redis.
    cold, n_blocks = compute_cold(redis, wait=False)
    assert len(redis.block_keys()) == n_blocks
    # A new process: its memory cache is empty, Redis has every full block.
    # (A deadline a loaded CI machine always meets: this is about the blocks.)
    replica = start_server("--kv-remote", redis.url, "--kv-remote-timeout-ms", "2000")
    try:
        warm = complete(replica)
        assert cached_tokens(warm) == n_blocks * BLOCK
        assert remote_metric(replica, "hits_total") == n_blocks * BLOCK
        assert warm["choices"][0]["text"] == cold["choices"][0]["text"]
        assert remote_metric(replica, "errors_total") == 0
    finally:
        replica.stop()


def test_salted_blocks_are_shared_across_replicas_only_with_the_same_salt(redis):
    # The salt's keys come from the secret the replicas share through Redis,
    # so the same tenant hits on another replica and another tenant does not.
    salted = {**REQUEST, "cache_salt": "tenant-a"}
    first = start_server("--kv-remote", redis.url)
    try:
        n_blocks = (complete(first, salted)["usage"]["prompt_tokens"] - 1) // BLOCK
    finally:
        first.stop()
    second = start_server("--kv-remote", redis.url, "--kv-remote-timeout-ms", "2000")
    try:
        assert cached_tokens(complete(second, {**REQUEST, "cache_salt": "tenant-b"})) == 0
        assert cached_tokens(complete(second, salted)) == n_blocks * BLOCK
    finally:
        second.stop()


def test_a_block_of_another_model_or_corrupted_is_a_miss(redis):
    smol, n_smol = compute_cold(redis)
    smol_keys = redis.block_keys()
    gemma, n_gemma = compute_cold(redis, model=GEMMA3_MODEL)
    gemma_keys = [key for key in redis.block_keys() if key not in smol_keys]
    assert len(smol_keys) == n_smol and len(gemma_keys) == n_gemma
    # Another model's blocks under this model's keys.
    for source, target in zip(smol_keys, gemma_keys):
        assert redis.cli("COPY", source, target, "REPLACE") == "1"
    # This model's own blocks, every one made bad: half with K/V bytes
    # changed (after the 80-byte header and 16 token ids), half claiming
    # another KV type.
    for i, key in enumerate(smol_keys):
        offset, value = ("300", "\x7f\x7f\x7f\x7f") if i % 2 == 0 else ("12", "\x02")
        redis.cli("SETRANGE", key, offset, value)
    for model, cold in ((GEMMA3_MODEL, gemma), (None, smol)):
        kwargs = {"model": model} if model else {}
        replica = start_server("--kv-remote", redis.url, **kwargs)
        try:
            warm = complete(replica)
            # The chain breaks at the first bad block: nothing is loaded.
            assert cached_tokens(warm) == 0
            assert remote_metric(replica, "hits_total") == 0
            assert remote_metric(replica, "rejected_blocks_total") >= 1
            assert warm["choices"][0]["text"] == cold["choices"][0]["text"]
        finally:
            replica.stop()


def test_redis_killed_mid_request_fails_nothing(redis):
    server = start_server("--kv-remote", redis.url)
    try:
        results = []
        long_prompt = {**REQUEST, "prompt": PROMPT * 3, "max_tokens": 24}
        worker = threading.Thread(target=lambda: results.append(complete(server, long_prompt)))
        worker.start()
        time.sleep(0.2)
        redis.stop(signal.SIGKILL)
        worker.join(60)
        assert results and results[0]["choices"][0]["finish_reason"] == "length"
        # And after it: served, the failures counted.
        for i in range(3):
            response = complete(server, {**REQUEST, "prompt": f"{i} " + PROMPT})
            assert response["usage"]["completion_tokens"] == 6
        deadline = time.monotonic() + 10
        while remote_metric(server, "errors_total") == 0:
            assert time.monotonic() < deadline, "no remote-tier error counted"
            time.sleep(0.05)
    finally:
        server.stop()


def test_a_redis_never_started_costs_nothing_and_is_counted():
    server = start_server("--kv-remote", f"redis://127.0.0.1:{free_port()}")
    try:
        for i in range(4):
            response = complete(server, {**REQUEST, "prompt": f"{i} " + PROMPT})
            assert response["usage"]["completion_tokens"] == 6
            assert cached_tokens(response) == 0
        values = http_raw.metrics(server)
        assert http_raw.metric(values, "ladder:kv_remote_errors_total") >= 3
        assert http_raw.metric(values, "ladder:kv_remote_dropped_writes_total") > 0
        assert http_raw.metric(values, "ladder:kv_remote_bytes_written_total") == 0
    finally:
        server.stop()


def test_a_bad_url_is_refused_at_start():
    with pytest.raises(AssertionError, match="exited"):
        start_server("--kv-remote", "http://127.0.0.1:6379")
