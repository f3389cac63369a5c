"""`ladder perplexity --kl-divergence-base / --kl-divergence`: a reference
model's log-probabilities saved in llama-perplexity's file format, and another
model's perplexity, KL divergence, top-1 agreement and Δp against them. The
statistics are checked against an independent computation in this file, from
the two models' saved log-probabilities."""

import math
import os
import struct

import numpy as np
import pytest

from conftest import ROOT, run_ladder, run_ladder_failing, run_ladder_json

TEXT = os.path.join(ROOT, "tests", "data", "inputs", "perplexity_gpl3.txt")
CTX = 64


@pytest.fixture(scope="module")
def short_text(tmp_path_factory):
    """The start of the GPL text: a few windows of CTX tokens, enough to compare."""
    path = tmp_path_factory.mktemp("kld") / "text.txt"
    with open(TEXT, encoding="utf-8") as f:
        path.write_text(f.read()[:1200], encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def quantized_model(ladder_bin, default_model, tmp_path_factory):
    """The default model requantized to Q5_0 (a type with a fast kernel): a model a
    little off the reference."""
    path = tmp_path_factory.mktemp("kld") / "q5_0.gguf"
    run_ladder(ladder_bin, "quantize", default_model, str(path), "Q5_0", "--allow-requantize")
    return str(path)


def save_base(ladder_bin, model, text, path):
    return run_ladder_json(ladder_bin, "perplexity", "-m", model, "-f", text, "-c", str(CTX),
                           "--kl-divergence-base", str(path), "--json")


def compare(ladder_bin, model, base_path):
    return run_ladder_json(ladder_bin, "perplexity", "-m", model, "--kl-divergence-base",
                           str(base_path), "--kl-divergence", "--json")


def read_log_prob_file(path):
    """llama-perplexity's format, read independently of ladder's reader:
    (ctx, vocabulary, windows, tokens, log-probabilities [rows, vocabulary])."""
    with open(path, "rb") as f:
        assert f.read(8) == b"_logits_"
        ctx, vocab, n_chunks = struct.unpack("<iii", f.read(12))
        tokens = np.frombuffer(f.read(4 * ctx * n_chunks), dtype="<i4")
        words = 2 * ((vocab + 1) // 2) + 4
        n_rows = n_chunks * (ctx - 1 - ctx // 2)
        raw = np.frombuffer(f.read(2 * words * n_rows), dtype="<u2").reshape(n_rows, words)
        assert f.read() == b"", "bytes after the last row"
    scale = raw[:, 0:2].copy().view("<f4")[:, 0]
    minimum = raw[:, 2:4].copy().view("<f4")[:, 0]
    log_probs = scale[:, None] * raw[:, 4:4 + vocab].astype(np.float32) + minimum[:, None]
    return ctx, vocab, n_chunks, tokens, log_probs


def test_a_model_against_itself_agrees_everywhere(ladder_bin, default_model, short_text, tmp_path):
    base_path = tmp_path / "base.kld"
    base = save_base(ladder_bin, default_model, short_text, base_path)
    ctx, vocab, n_chunks, tokens, rows = read_log_prob_file(base_path)
    assert (ctx, n_chunks) == (CTX, base["n_chunks"]) and vocab == 49152
    assert len(rows) == base["n_scored"]

    result = compare(ladder_bin, default_model, base_path)
    assert result["same_top"]["mean"] == 1.0
    assert abs(result["kl_divergence"]["mean"]) < 1e-3, result["kl_divergence"]
    assert abs(result["delta_p"]["mean"]) < 1e-3
    # Its own perplexity is computed from the same logits as the base run's.
    scored = result["n_scored"]
    assert scored == len(rows)
    assert result["base_perplexity"]["mean"] == pytest.approx(result["perplexity"]["mean"], rel=1e-3)


def test_statistics_match_an_independent_computation(ladder_bin, default_model, quantized_model,
                                                     short_text, tmp_path):
    base_path = tmp_path / "base.kld"
    save_base(ladder_bin, default_model, short_text, base_path)
    other_path = tmp_path / "other.kld"
    save_base(ladder_bin, quantized_model, short_text, other_path)
    result = compare(ladder_bin, quantized_model, base_path)

    ctx, _, n_chunks, tokens, base = read_log_prob_file(base_path)
    _, _, _, _, other = read_log_prob_file(other_path)
    first = ctx // 2
    targets = np.array([tokens[chunk * ctx + j + 1] for chunk in range(n_chunks)
                        for j in range(first, ctx - 1)])
    rows = np.arange(len(targets))
    # KL(base || other) over the tokens the 16-bit base row resolves (> e^-16).
    # The other model's row is clipped 16 nats below its top, like the base's.
    kept = base > -16.0
    kld = np.where(kept, np.exp(base) * (base - other), 0.0).sum(axis=1)
    same_top = base.argmax(axis=1) == other.argmax(axis=1)
    nll = -other[rows, targets]
    nll_base = -base[rows, targets]
    n = len(targets)
    assert result["n_scored"] == n
    assert result["kl_divergence"]["mean"] == pytest.approx(kld.mean(), abs=2e-3, rel=0.05)
    assert result["kl_divergence"]["mean"] > 1e-4, "Q5_0 should differ measurably from Q4_1"
    assert abs(result["same_top"]["mean"] - same_top.mean()) <= 2 / n
    assert result["perplexity"]["mean"] == pytest.approx(math.exp(nll.mean()), rel=1e-3)
    assert result["base_perplexity"]["mean"] == pytest.approx(math.exp(nll_base.mean()), rel=1e-4)
    percentiles = result["kl_divergence_percentiles"]
    assert percentiles["min"] <= percentiles["median"] <= percentiles["max"]


def test_bad_use_is_a_one_line_error(ladder_bin, default_model, short_text, tmp_path):
    assert "--kl-divergence-base" in run_ladder_failing(ladder_bin, "perplexity", "-m", default_model,
                                                 "--kl-divergence")
    bogus = tmp_path / "bogus.kld"
    bogus.write_bytes(b"not a file of log-probabilities")
    assert "bogus.kld" in run_ladder_failing(ladder_bin, "perplexity", "-m", default_model,
                                      "--kl-divergence-base", bogus, "--kl-divergence")
    base_path = tmp_path / "base.kld"
    save_base(ladder_bin, default_model, short_text, base_path)
    assert "-f" in run_ladder_failing(ladder_bin, "perplexity", "-m", default_model, "-f", short_text,
                               "--kl-divergence-base", base_path, "--kl-divergence")
    assert "--ctx 128" in run_ladder_failing(ladder_bin, "perplexity", "-m", default_model, "-c", "128",
                                      "--kl-divergence-base", base_path, "--kl-divergence")
