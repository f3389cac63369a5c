"""`ladder serve --speculative-config`: a greedy completion is the same text
as without speculation, and /metrics counts the drafts under vLLM's names,
adding up (accepted <= drafted, per-position counts never rising with the
position)."""

import json
import subprocess
import time

import http_raw
from ladder_server import ladder_bin, start_server

COPY_PROMPT = ("Repeat this list exactly: apples, pears, plums, cherries, lemons, figs, dates. "
               "Repeat this list exactly: apples, pears, plums, cherries, lemons, figs, dates. "
               "Repeat this list exactly:")
SPEC = "ladder:spec_decode_"


def complete(server):
    status, _, body = http_raw.request_json(server, "POST", "/v1/completions", {
        "prompt": COPY_PROMPT, "max_tokens": 32, "temperature": 0})
    assert status == 200, body
    return body["choices"][0]["text"]


def test_speculative_serve_answers_the_same_and_counts_its_drafts(tmp_path):
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
        check_bench_reports_the_drafts(server, tmp_path, values)
    finally:
        assert server.stop() == 0


def check_bench_reports_the_drafts(server, tmp_path, before):
    """`ladder bench` prints vLLM's Speculative Decoding block and writes its
    figures to the JSON, from the server's counters over the run."""
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(json.dumps({"prompt": COPY_PROMPT, "max_tokens": 24}) + "\n")
    out = tmp_path / "out.json"
    done = subprocess.run([ladder_bin(), "bench", "--base-url", server.base_url, "--no-progress",
                           "--api-key", server.api_key, "--dataset", "jsonl", str(prompts),
                           "--num-prompts", "1", "--json", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Speculative Decoding" in done.stdout and "Acceptance rate (%):" in done.stdout, done.stdout
    report = json.loads(out.read_text())
    after = http_raw.metrics(server)
    grown = http_raw.metric(after, SPEC + "num_accepted_tokens_total") - \
        http_raw.metric(before, SPEC + "num_accepted_tokens_total")
    assert 0 < report["spec_decode_accepted_tokens"] <= grown
    assert report["spec_decode_accepted_tokens"] <= report["spec_decode_draft_tokens"]
    assert 0 < report["spec_decode_acceptance_rate"] <= 100
    assert report["spec_decode_acceptance_length"] >= 1
    assert len(report["spec_decode_per_position_acceptance_rates"]) == 4
