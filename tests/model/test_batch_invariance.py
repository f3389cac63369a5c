"""Batch invariance, end to end: a token's next-token distribution is the same
bits whether its sequence was computed in one pass or one token per step, as
generation computes it (DESIGN.md: a row's reductions run in a fixed order)."""

import json
import os

import pytest

from conftest import ROOT, load_goldens, run_ladder_failing, run_ladder_json

GEMMA3_MODEL = os.path.join(ROOT, "models", "gemma-3-270m-q4_k_m.gguf")


def test_step_by_step_logprobs_equal_one_pass_logprobs(ladder_bin, default_model):
    case = load_goldens(default_model, "model_goldens.json")["prompts"][1]
    sequence = case["prompt_tokens"] + case["greedy"][:24]
    one_pass = run_ladder_json(ladder_bin, "logprobs", "-m", default_model, "--tokens",
                               json.dumps(sequence), "--top", "10", "-t", "2")
    stepwise = run_ladder_json(ladder_bin, "logprobs", "-m", default_model, "--tokens",
                               json.dumps(sequence), "--top", "10", "-t", "2",
                               "--batch-prefix", str(len(case["prompt_tokens"])))
    assert len(one_pass["top_logprobs"]) == len(stepwise["top_logprobs"]) == len(sequence)
    for position, (a, b) in enumerate(zip(one_pass["top_logprobs"], stepwise["top_logprobs"])):
        assert a == b, f"position {position}: one pass {a[:2]} vs step by step {b[:2]}"


# Past 512 visible positions, one sequence decoding with fewer KV heads than
# threads runs the exact attention cut over positions and dimensions
# (model/paged_attention_split.cpp); a prefill runs it whole. Step-by-step
# logprobs after a long prefix must still equal one pass's, on both models
# (SmolLM2: 3 KV heads on 4 threads; Gemma 3: 1 on 2, and sliding-window
# layers).
@pytest.mark.parametrize("model_name,threads", [("smollm2", "4"), ("gemma3", "2")])
def test_long_context_decode_equals_one_pass(ladder_bin, default_model, model_name, threads):
    model = default_model if model_name == "smollm2" else GEMMA3_MODEL
    if not os.path.exists(model):
        pytest.skip(f"{model} is absent (`make model-gemma3` fetches it)")
    case = load_goldens(model, "model_goldens.json")["prompts"][1]
    tokens = case["prompt_tokens"][1:]
    prefix = case["prompt_tokens"][:1] + tokens * (700 // len(tokens) + 1)
    prefix = prefix[:700]
    sequence = prefix + case["greedy"][:12]
    # Only the decoded positions are compared, so only they pay for the
    # vocabulary product.
    common = ["-m", model, "--tokens", json.dumps(sequence), "--top", "10", "-t", threads,
              "--from", str(len(prefix))]
    one_pass = run_ladder_json(ladder_bin, "logprobs", *common)
    stepwise = run_ladder_json(ladder_bin, "logprobs", *common, "--batch-prefix", str(len(prefix)))
    assert len(one_pass["top_logprobs"]) == len(stepwise["top_logprobs"]) == len(sequence)
    for position in range(len(prefix), len(sequence)):
        a = one_pass["top_logprobs"][position]
        b = stepwise["top_logprobs"][position]
        assert a == b, f"position {position}: one pass {a[:2]} vs step by step {b[:2]}"


def test_logprobs_from_a_position_reports_a_full_runs_rows(ladder_bin, default_model):
    """`logprobs --from N`: null before N, and from N on the very rows a run
    reporting every position gives, in one pass or step by step."""
    case = load_goldens(default_model, "model_goldens.json")["prompts"][1]
    sequence = case["prompt_tokens"] + case["greedy"][:16]
    common = ["-m", default_model, "--tokens", json.dumps(sequence), "--top", "10", "-t", "2"]
    full = run_ladder_json(ladder_bin, "logprobs", *common)["top_logprobs"]
    first = len(case["prompt_tokens"]) + 4
    for extra in ([], ["--batch-prefix", str(first - 3)], ["--batch-prefix", str(first + 5)]):
        part = run_ladder_json(ladder_bin, "logprobs", *common, "--from", str(first), *extra)
        rows = part["top_logprobs"]
        assert len(rows) == len(sequence), extra
        assert rows[:first] == [None] * first, extra
        assert rows[first:] == full[first:], extra


def test_logprobs_from_past_the_last_position_is_a_one_line_error(ladder_bin, default_model):
    line = run_ladder_failing(ladder_bin, "logprobs", "-m", default_model, "--tokens", "[1, 2, 3]",
                              "--from", "3")
    assert "--from 3" in line, line
