"""The fleet: replicas behind HAProxy (deploy/haproxy.cfg, scripts/fleet.sh).
Requests that share a first message land on one replica; a drained replica
gets no new requests; a rolling update under load loses nothing; the
requests of a killed replica go to the other."""

import os
import signal
import subprocess
import time

import pytest

import http_raw
from fleet import ROLLING_UPDATE_SCRIPT, Fleet, StreamingLoad

CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    running = Fleet(tmp_path_factory.mktemp("fleet"))
    try:
        yield running
        assert running.stop() == 0, running.log
    finally:
        running.kill()


def system_prompt(bot):
    return f"You are support bot {bot} of a hardware store. Answer in one short sentence."


def chat(fleet, system, question, max_tokens=1):
    """Returns the replica that answered (HAProxy's X-Ladder-Replica)."""
    fleet.wait_idle()
    status, headers, body = http_raw.request(fleet, "POST", CHAT, {
        "messages": [{"role": "system", "content": system},
                     {"role": "user", "content": question}],
        "max_tokens": max_tokens})
    assert status == 200, body
    return headers["x-ladder-replica"]


def successes(replica):
    return http_raw.metric(http_raw.metrics(replica), "ladder:request_success_total")


def test_the_same_first_message_lands_on_the_same_replica(fleet):
    chosen = {}
    for bot in range(8):
        replicas = {chat(fleet, system_prompt(bot), f"Question {q} about bolts?")
                    for q in range(3)}
        assert len(replicas) == 1, f"bot {bot}'s questions went to {replicas}"
        chosen[bot] = replicas.pop()
    # Different first messages spread over the replicas (the hash ring is
    # fixed by the server names, so this split is the same on every run).
    assert set(chosen.values()) == {"replica1", "replica2"}, chosen

    # Completions: the prompt's first KiB is the key.
    shared = "Manual of the store. " * 60
    answered = set()
    for q in range(3):
        fleet.wait_idle()
        status, headers, body = http_raw.request(fleet, "POST", COMPLETIONS, {
            "prompt": f"{shared}\nQuestion {q}:", "max_tokens": 1})
        assert status == 200, body
        answered.add(headers["x-ladder-replica"])
    assert len(answered) == 1, answered

    # Completions with token ids (as `ladder bench` sends them): the key is
    # the array's first KiB, about 200 ids here, so the question is past it.
    chosen = {}
    for block in range(8):
        prefix = [1000 + 500 * block + i for i in range(300)]
        answered = set()
        for q in range(3):
            fleet.wait_idle()
            status, headers, body = http_raw.request(fleet, "POST", COMPLETIONS, {
                "prompt": prefix + [20000 + q], "max_tokens": 1})
            assert status == 200, body
            answered.add(headers["x-ladder-replica"])
        assert len(answered) == 1, f"block {block}'s prompts went to {answered}"
        chosen[block] = answered.pop()
    assert set(chosen.values()) == {"replica1", "replica2"}, chosen


def test_a_drained_replica_gets_no_new_requests(fleet):
    drained = fleet.replicas[0]
    bot = next(b for b in range(8) if chat(fleet, system_prompt(b), "Hi?") == drained.name)
    fleet.admin(f"set server ladder/{drained.name} state drain")
    try:
        fleet.wait_status(drained.name, "DRAIN")
        before = successes(drained)
        for q in range(4):
            assert chat(fleet, system_prompt(bot), f"Question {q}?") == "replica2"
        assert successes(drained) == before
    finally:
        fleet.admin(f"set server ladder/{drained.name} state ready")
    fleet.wait_status(drained.name, "UP")
    # Back in the pool, it gets its prefixes back (consistent hashing).
    assert chat(fleet, system_prompt(bot), "Again?") == drained.name


def test_a_rolling_update_under_load_loses_nothing(fleet):
    old_pids = [replica.pid for replica in fleet.replicas]
    load = StreamingLoad(fleet, clients=3, max_tokens=24)
    try:
        time.sleep(1)  # requests in flight on both replicas when the update begins
        update = subprocess.run([ROLLING_UPDATE_SCRIPT, "--fleet-dir", fleet.directory,
                                 "--drain-timeout", "60"],
                                capture_output=True, text=True, timeout=300)
        time.sleep(1)  # and after it ends, on the new ones
    finally:
        results = load.stop()
    assert update.returncode == 0, update.stderr
    assert "rolling update done: 2 replicas" in update.stderr
    assert all(replica.pid not in old_pids for replica in fleet.replicas)
    failures = [r for r in results if r.outcome != "ok"]
    assert not failures, f"{len(failures)} of {len(results)} requests failed: {failures[:5]}"
    assert len(results) >= 6, results
    assert {r.replica for r in results} == {"replica1", "replica2"}
    for name in ("replica1", "replica2"):
        assert fleet.server_status(name) == "UP"


def test_requests_for_a_killed_replica_are_answered_by_the_other(fleet):
    victim = fleet.replicas[0]
    bot = next(b for b in range(8) if chat(fleet, system_prompt(b), "Hi?") == victim.name)
    os.kill(victim.pid, signal.SIGKILL)
    # Sent at once, before a health check can have seen it: the refused
    # connection is retried on the other replica, and the client sees nothing.
    for q in range(4):
        assert chat(fleet, system_prompt(bot), f"Question {q}?") == "replica2"
    fleet.wait_status(victim.name, "DOWN", timeout=5)
