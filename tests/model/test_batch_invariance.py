"""Batch invariance, end to end: a token's next-token distribution is the same
bits whether its sequence was computed in one pass or one token per step, as
generation computes it (DESIGN.md: a row's reductions run in a fixed order)."""

import json

from conftest import load_goldens, run_ladder_json


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
