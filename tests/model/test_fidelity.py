"""Fidelity of the forward pass against llama.cpp on the same GGUF file:
greedy continuations, next-token distributions and perplexity, compared with
goldens that scripts/make_goldens.py made with llama-cpp-python. Every check
runs for each model whose file is present: the default SmolLM2 (required) and
Gemma 3 270M (skipped when `make model-gemma3` has not fetched it)."""

import hashlib
import math
import os

import pytest

from conftest import DEFAULT_MODEL, ROOT, load_goldens, run_ladder_json

MIN_GREEDY_MATCH = 32       # tokens of identical greedy continuation ...
MIN_PROMPTS_MATCHING = 4    # ... on at least this many of the 5 prompts
MIN_TOP1_AGREEMENT = 0.98
MAX_MEAN_KL = 0.01
MAX_PERPLEXITY_REL_ERROR = 0.01


GEMMA3_MODEL = os.path.join(ROOT, "models", "gemma-3-270m-q4_k_m.gguf")


@pytest.fixture(scope="module", params=[DEFAULT_MODEL, GEMMA3_MODEL],
                ids=["smollm2", "gemma3"])
def model(request, default_model):
    if request.param == DEFAULT_MODEL:
        return default_model
    if not os.path.exists(request.param):
        pytest.skip(f"{request.param} is absent (`make model-gemma3` fetches it)")
    return request.param


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@pytest.fixture(scope="module")
def goldens(model):
    goldens = load_goldens(model, "model_goldens.json")
    assert goldens["model"] == os.path.basename(model)
    assert goldens["model_sha256"] == sha256_of(model), (
        f"{model} is not the file its goldens were made from: fetch it again or regenerate "
        "them (scripts/make_goldens.py)")
    return goldens


def kl_over_top(reference, ours):
    """KL(reference || ours) over the reference's top-N tokens plus one bucket
    for the rest of the vocabulary: a lower bound of the full KL divergence
    that is exact when the top-N carry almost all the mass."""
    ours_by_id = {token: logprob for token, logprob in ours}
    kl = 0.0
    ref_mass = 0.0
    our_mass = 0.0
    for token, ref_logprob in reference:
        p = math.exp(ref_logprob)
        # A token missing from our top list has at most our smallest listed logprob.
        q_log = ours_by_id.get(token, min(ours_by_id.values()))
        kl += p * (ref_logprob - q_log)
        ref_mass += p
        our_mass += math.exp(q_log)
    ref_rest = max(1.0 - ref_mass, 1e-12)
    our_rest = max(1.0 - our_mass, 1e-12)
    kl += ref_rest * math.log(ref_rest / our_rest)
    return kl


def test_greedy_continuations_match_llama_cpp(ladder_bin, model, goldens):
    matching = []
    for case in goldens["prompts"]:
        n = len(case["greedy"])
        out = run_ladder_json(ladder_bin, "run", "-m", model, "-p", case["text"],
                              "--temp", "0", "-n", str(n), "--json", "-t", "2")
        assert out["prompt_tokens"] == case["prompt_tokens"], (
            f"prompt {case['text']!r} tokenized differently from llama.cpp")
        ours = out["tokens"]
        agree = 0
        while agree < min(len(ours), n) and ours[agree] == case["greedy"][agree]:
            agree += 1
        matching.append(agree)
    good = sum(1 for agree in matching if agree >= MIN_GREEDY_MATCH)
    assert good >= MIN_PROMPTS_MATCHING, (
        f"greedy continuations agree with llama.cpp for {matching} tokens per prompt; "
        f"need >= {MIN_GREEDY_MATCH} on {MIN_PROMPTS_MATCHING} of {len(matching)}")


def assert_distributions_agree(pairs, where):
    """pairs: (reference top list, our top list) per position."""
    n_positions = 0
    n_top1_agree = 0
    kl_sum = 0.0
    for reference, ours in pairs:
        n_positions += 1
        n_top1_agree += reference[0][0] == ours[0][0]
        kl_sum += kl_over_top(reference, ours)
    top1 = n_top1_agree / n_positions
    mean_kl = kl_sum / n_positions
    assert top1 >= MIN_TOP1_AGREEMENT, (
        f"{where}: top-1 agreement {top1:.4f} over {n_positions} positions")
    assert mean_kl <= MAX_MEAN_KL, (
        f"{where}: mean KL divergence {mean_kl:.5f} over {n_positions} positions")


def test_next_token_distributions_match_llama_cpp(ladder_bin, model, goldens):
    pairs = []
    for case in goldens["prompts"]:
        sequence = case["prompt_tokens"] + case["greedy"]
        out = run_ladder_json(ladder_bin, "logprobs", "-m", model, "--tokens",
                              str(sequence), "--top", str(goldens["top_n"]), "-t", "2")
        assert out["tokens"] == sequence
        pairs.extend(zip(case["top_logprobs"], out["top_logprobs"]))
    assert_distributions_agree(pairs, "prompts")


def test_distributions_past_the_sliding_window_match_llama_cpp(ladder_bin, model, goldens):
    """A sequence several windows long: local layers must forget what global
    layers still see, exactly where llama.cpp does."""
    if "long_sequence" not in goldens:
        pytest.skip("the model has no sliding-window layers")
    case = goldens["long_sequence"]
    assert len(case["tokens"]) > 2 * goldens["sliding_window"]
    out = run_ladder_json(ladder_bin, "logprobs", "-m", model, "--tokens", str(case["tokens"]),
                          "--top", str(goldens["top_n"]), "-t", "2")
    assert out["tokens"] == case["tokens"]
    ours = out["top_logprobs"][case["first_scored"]:]
    assert_distributions_agree(zip(case["top_logprobs"], ours),
                               f"positions {case['first_scored']}..{len(case['tokens']) - 1}")


def test_perplexity_within_one_percent_of_llama_cpp(ladder_bin, model, goldens):
    reference = goldens["perplexity"]
    text = os.path.join(ROOT, "tests", "data", "inputs", "perplexity_gpl3.txt")
    out = run_ladder_json(ladder_bin, "perplexity", "-m", model, "-f", text,
                          "--ctx", str(reference["ctx"]), "--json", "-t", "2")
    assert out["n_tokens"] == reference["n_tokens"], "the text tokenized differently"
    assert out["n_scored"] == reference["n_scored"]
    error = abs(out["perplexity"] - reference["perplexity"]) / reference["perplexity"]
    assert error <= MAX_PERPLEXITY_REL_ERROR, (
        f"perplexity {out['perplexity']:.4f} vs llama.cpp {reference['perplexity']:.4f} "
        f"({error:.2%} apart)")


def test_greedy_chat_answer_is_sensible(ladder_bin, default_model):
    out = run_ladder_json(ladder_bin, "run", "-m", default_model, "--chat", "--temp", "0",
                          "-n", "48", "-p", "Hello! What is the capital of France?", "--json", "-t", "2")
    assert "Paris" in out["text"], f"chat answer does not name Paris: {out['text']!r}"
