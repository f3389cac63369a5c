"""The quantized KV cache (--kv-cache-dtype, --cache-type-k/-v): next-token
distributions with a q8_0 cache against llama.cpp's with type_k = type_v =
q8_0 (flash attention on, as llama.cpp needs for a quantized V) on the same
files, from goldens that scripts/make_goldens.py --only kv_cache made; that
f16 (and auto) is the cache every other fidelity test checks, bit for bit;
the other types against f16; and the flags' errors."""

import math
import os

import pytest

from conftest import (DEFAULT_MODEL, ROOT, load_goldens, run_ladder, run_ladder_failing,
                      run_ladder_json)

GEMMA3_MODEL = os.path.join(ROOT, "models", "gemma-3-270m-q4_k_m.gguf")
TEXT = os.path.join(ROOT, "tests", "data", "inputs", "perplexity_gpl3.txt")

# Against llama.cpp's q8_0 cache. Issue 16 asks for top-1 agreement >= 98%
# and mean KL <= 0.01. ladder gives llama.cpp's bits: it holds a quantized
# cache in the same Walsh-Hadamard-rotated basis and runs the same online
# softmax (docs/performance.md, "Quantized KV cache"), measured 100% and
# KL ~1e-9 on both models. The bounds sit far inside the so that a
# change of any rounding there fails.
MIN_TOP1_AGREEMENT = 0.99  # measured 1.0000 (both); issue: 0.98
MAX_MEAN_KL = 1e-4         # measured 1.1e-9 (SmolLM2), 5.4e-9 (Gemma 3); issue: 0.01
# Perplexity with q8_0 K and V against f16 over 8 windows of 512 tokens
# (2,040 scored): issue 16's floor, +0.5%. Measured SmolLM2 -0.11%, Gemma 3
# -0.08% (-0.07% and +0.04% before the cache was rotated). Fewer windows are
# noise for this: on two, a rounding moved Gemma 3's perplexity by about 1%
# either way (ladder's q8_0 cache +0.94%, llama.cpp's -0.80%).
PERPLEXITY_WINDOWS = 8
MAX_PERPLEXITY_RISE = 0.005
# Top-1 agreement with the f16 cache on one prompt, per type (the lowest of
# the exact and fast paths measured):
MIN_TOP1_VS_F16 = {"bf16": 0.9, "q4_0": 0.7, "q8_0": 0.9, "f16": 0.9}


@pytest.fixture(scope="module", params=[DEFAULT_MODEL, GEMMA3_MODEL],
                ids=["smollm2", "gemma3"])
def model(request, default_model):
    if request.param == DEFAULT_MODEL:
        return default_model
    if not os.path.exists(request.param):
        pytest.skip(f"{request.param} is absent (`make model-gemma3` fetches it)")
    return request.param


def logprobs(ladder_bin, model, tokens, top, *flags):
    out = run_ladder_json(ladder_bin, "logprobs", "-m", model, "--tokens", str(tokens),
                          "--top", str(top), "-t", "2", *flags)
    assert out["tokens"] == tokens
    return out["top_logprobs"]


def kl_divergence(reference, ours):
    """KL(reference || ours) over the reference's top tokens, with the rest of
    each distribution as one more outcome. A reference token missing from our
    list gets our list's smallest probability (an upper bound on it, so the
    term is a lower bound; the list is twice as long as the reference's, so
    that is rare and counted)."""
    ours_by_id = dict((token, logprob) for token, logprob in ours)
    floor = ours[-1][1]
    kl = 0.0
    ref_mass = 0.0
    our_mass = 0.0
    missing = 0
    for token, ref_logprob in reference:
        our_logprob = ours_by_id.get(token)
        if our_logprob is None:
            missing += 1
            our_logprob = floor
        p = math.exp(ref_logprob)
        kl += p * (ref_logprob - our_logprob)
        ref_mass += p
        our_mass += math.exp(our_logprob)
    rest_ref = max(1.0 - ref_mass, 0.0)
    rest_ours = max(1.0 - our_mass, 1e-12)
    if rest_ref > 0.0:
        kl += rest_ref * math.log(rest_ref / rest_ours)
    return max(kl, 0.0), missing


def test_q8_0_cache_agrees_with_llama_cpps_q8_0_cache(ladder_bin, model):
    goldens = load_goldens(model, "kv_q8_0_goldens.json")
    assert goldens["model"] == os.path.basename(model)
    assert goldens["type_k"] == goldens["type_v"] == "q8_0"
    n_positions = 0
    n_agree = 0
    kl_sum = 0.0
    n_missing = 0
    for case in goldens["sequences"]:
        ours = logprobs(ladder_bin, model, case["tokens"], 2 * goldens["top_n"],
                        "--kv-cache-dtype", "q8_0")
        for reference, mine in zip(case["top_logprobs"], ours):
            n_positions += 1
            n_agree += reference[0][0] == mine[0][0]
            kl, missing = kl_divergence(reference, mine)
            kl_sum += kl
            n_missing += missing
    top1 = n_agree / n_positions
    mean_kl = kl_sum / n_positions
    print(f"MEASURE {os.path.basename(model)} q8_0 KV vs llama.cpp q8_0 KV: top-1 {top1:.4f}, "
          f"mean KL {mean_kl:.3g} over {n_positions} positions ({n_missing} tokens missing)")
    assert top1 >= MIN_TOP1_AGREEMENT, f"top-1 agreement {top1:.4f} with llama.cpp's q8_0 cache"
    assert mean_kl <= MAX_MEAN_KL, f"mean KL divergence {mean_kl:.3g} from llama.cpp's q8_0 cache"


def test_f16_and_auto_are_the_default_cache_bit_for_bit(ladder_bin, default_model):
    tokens = load_goldens(default_model, "model_goldens.json")["prompts"][0]["prompt_tokens"]
    default = logprobs(ladder_bin, default_model, tokens, 5)
    for flags in (["--kv-cache-dtype", "f16"], ["--kv-cache-dtype", "auto"],
                  ["--cache-type-k", "f16", "--cache-type-v", "f16"]):
        assert logprobs(ladder_bin, default_model, tokens, 5, *flags) == default, flags


def fast_attention_reads_bf16_tiles():
    """Whether --attention fast runs the AVX512-BF16 kernels here (LADDER_CPU
    may pin a path without them)."""
    if os.environ.get("LADDER_CPU", "").lower() in ("scalar", "avx2"):
        return False
    with open("/proc/cpuinfo") as cpuinfo:
        flags = cpuinfo.read().split()
    return all(flag in flags for flag in ("avx512f", "avx512bw", "avx512vl", "avx512_bf16"))


def test_auto_under_fast_attention_is_the_cache_its_kernels_read(ladder_bin, default_model):
    """auto is f16 under exact; under fast, bf16 (stored in the tiles the
    AVX512-BF16 kernel reads in place) where that kernel runs, else f16: the
    type is reported, and its logits are the named type's bit for bit."""
    tokens = load_goldens(default_model, "model_goldens.json")["prompts"][0]["prompt_tokens"]
    want = "bf16" if fast_attention_reads_bf16_tiles() else "f16"
    out = run_ladder_json(ladder_bin, "perplexity", "-m", default_model, "-f", TEXT, "--ctx",
                          "64", "--chunks", "1", "--json", "-t", "2", "--attention", "fast")
    assert out["kv_cache_dtype"] == want
    auto = logprobs(ladder_bin, default_model, tokens, 5, "--attention", "fast")
    named = logprobs(ladder_bin, default_model, tokens, 5, "--attention", "fast",
                     "--kv-cache-dtype", want)
    assert auto == named


def test_bf16_keys_need_blocks_of_a_tile_and_auto_falls_back_to_f16(ladder_bin, default_model,
                                                                    tmp_path):
    """A bf16 K cache is stored in tiles of 16 positions: smaller blocks are a
    one-line error naming --block-size, and auto picks f16 for them instead."""
    requests = tmp_path / "in.jsonl"
    requests.write_text('{"prompt": "hello", "max_tokens": 4}\n')
    line = run_ladder_failing(ladder_bin, "generate", "-m", default_model, "--input", requests,
                              "--kv-cache-dtype", "bf16", "--block-size", "8")
    assert "--block-size" in line and "16" in line, line
    run_ladder(ladder_bin, "generate", "-m", default_model, "--input", requests, "--attention",
               "fast", "--block-size", "8")


def perplexity(ladder_bin, model, *flags):
    return run_ladder_json(ladder_bin, "perplexity", "-m", model, "-f", TEXT, "--ctx", "512",
                           "--chunks", str(PERPLEXITY_WINDOWS), "--json", "-t", "2", *flags)


def test_q8_0_cache_perplexity_close_to_f16(ladder_bin, model):
    f16 = perplexity(ladder_bin, model)
    q8 = perplexity(ladder_bin, model, "--kv-cache-dtype", "q8_0")
    assert f16["kv_cache_dtype"] == "f16" and q8["kv_cache_dtype"] == "q8_0"
    rise = q8["perplexity"] / f16["perplexity"] - 1.0
    print(f"MEASURE {os.path.basename(model)}: perplexity f16 KV {f16['perplexity']:.4f}, "
          f"q8_0 KV {q8['perplexity']:.4f} ({rise:+.4%})")
    assert rise <= MAX_PERPLEXITY_RISE, f"q8_0 KV raises perplexity by {rise:.3%}"


def test_every_cache_type_and_mix_runs_on_both_attention_paths(ladder_bin, default_model):
    """bf16, q4_0 and K and V of different types, on the exact and fast
    paths: the most likely tokens stay the f16 cache's nearly everywhere
    (q4_0, 4.5 bits, the least)."""
    case = load_goldens(default_model, "model_goldens.json")["prompts"][1]
    tokens = case["prompt_tokens"] + case["greedy"]
    reference = logprobs(ladder_bin, default_model, tokens, 5)
    for key, value in (("bf16", "bf16"), ("q4_0", "q4_0"), ("q8_0", "f16"), ("f16", "q4_0")):
        flags = ["--cache-type-k", key, "--cache-type-v", value]
        bound = min(MIN_TOP1_VS_F16[key], MIN_TOP1_VS_F16[value])
        for path in ("exact", "fast"):
            ours = logprobs(ladder_bin, default_model, tokens, 5, "--attention", path, *flags)
            agree = sum(a[0][0] == b[0][0] for a, b in zip(reference, ours)) / len(tokens)
            print(f"MEASURE K {key} V {value} --attention {path}: top-1 vs f16 {agree:.3f}")
            assert agree >= bound, f"{flags} --attention {path}: top-1 agreement {agree:.3f}"


def test_unknown_cache_type_is_a_one_line_error_naming_the_flag(ladder_bin, default_model):
    for flag in ("--kv-cache-dtype", "--cache-type-k", "--cache-type-v"):
        line = run_ladder_failing(ladder_bin, "logprobs", "-m", default_model, "-p", "hi", flag,
                                  "fp8")
        assert flag.lstrip("-") in line or "cache-type" in line, line
