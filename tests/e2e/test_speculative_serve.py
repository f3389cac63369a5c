"""`ladder serve --speculative-config`: a greedy completion is the same text
as without speculation, and /metrics counts the drafts under vLLM's names,
adding up (accepted <= drafted, per-position counts never rising with the
position)."""

import json
import time

import http_raw
from ladder_server import start_server

COPY_PROMPT = ("Repeat this list exactly: apples, pears, plums, cherries, lemons, figs, dates. "
               "Repeat this list exactly: apples, pears, plums, cherries, lemons, figs, dates. "
               "Repeat this list exactly:")
SPEC = "ladder:spec_decode_"


def complete(server):
    status, _, body = http_raw.request_json(server, "POST", "/v1/completions", {
        "prompt": COPY_PROMPT, "max_tokens": 32, "temperature": 0})
    assert status == 200, body
    return body["choices"][0]["text"]


def test_speculative_serve_answers_the_same_and_counts_its_drafts():
    plain = start_server()
    try:
        expected = complete(plain)
    finally:
        assert plain.stop() == 0
    config = {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 3,
              "prompt_lookup_min": 2}
    server = start_server("--speculative-config", json.dumps(config))
    try:
        assert complete(server) == expected
        deadline = time.monotonic() + 5
        while True:
            values = http_raw.metrics(server)
            drafts = http_raw.metric(values, SPEC + "num_drafts_total")
            if drafts > 0:
                break
            assert time.monotonic() < deadline, "no draft was counted"
            time.sleep(0.05)
        drafted = http_raw.metric(values, SPEC + "num_draft_tokens_total")
        accepted = http_raw.metric(values, SPEC + "num_accepted_tokens_total")
        assert 0 < accepted <= drafted <= drafts * 4
        per_position = [http_raw.metric(values, SPEC + "num_accepted_tokens_per_pos_total"
                                        f'{{model_name="SmolLM2-135M-Instruct.Q4_1",position="{i}"}}')
                        for i in range(4)]
        assert sum(per_position) == accepted
        assert all(a >= b for a, b in zip(per_position, per_position[1:])), per_position
    finally:
        assert server.stop() == 0
