"""`ladder bench-model` and `ladder roofline` as tools read them: llama-bench's
record fields with values that agree with each other and with the model file,
roofline arithmetic that follows from the figures it prints, and one-line
errors for bad flags. Speeds are only checked to be positive: the machine
may be shared."""

import math
import re

import pytest

from conftest import run_ladder, run_ladder_json
from test_cli import run_failing

LLAMA_BENCH_FIELDS = {
    "build_commit": str, "cpu_info": str, "model_filename": str, "model_type": str,
    "model_size": int, "model_n_params": int, "n_threads": int, "n_prompt": int, "n_gen": int,
    "test_time": str,
    "avg_ns": int, "stddev_ns": int, "avg_ts": float, "stddev_ts": float, "samples_ns": list,
    "samples_ts": list,
}
LADDER_FIELDS = {
    "cpu_path": str, "ceiling_ts": float, "ceiling_pct": float, "bytes_per_token": int,
    "bandwidth_gbs": float, "model_sized_bandwidth_gbs": float, "cached_ceiling_ts": float,
}


@pytest.fixture(scope="module")
def records(ladder_bin, default_model):
    return run_ladder_json(ladder_bin, "bench-model", "-m", default_model, "-p", "16", "-n", "4",
                           "-r", "2", "-t", "2", "--json")


@pytest.fixture(scope="module")
def info(ladder_bin, default_model):
    return run_ladder_json(ladder_bin, "info", "-m", default_model, "--json")


def matmul_params(info):
    """Layer matrices, and the output matrix (SmolLM2 ties it to token_embd)."""
    shapes = {t["name"]: t["shape"] for t in info["tensors"]}
    layer = sum(s[0] * s[1] for name, s in shapes.items()
                if name.startswith("blk.") and len(s) == 2)
    output = shapes["token_embd.weight"]
    return layer, output[0] * output[1]


def test_one_record_per_test_with_llama_bench_field_names(records, default_model):
    assert [(r["n_prompt"], r["n_gen"]) for r in records] == [(16, 0), (0, 4)]
    for record in records:
        for field, kind in {**LLAMA_BENCH_FIELDS, **LADDER_FIELDS}.items():
            assert isinstance(record.get(field), kind), f"{field}: {record.get(field)!r}"
        assert record["model_filename"] == default_model
        assert record["model_type"].startswith("llama ") and record["model_type"].endswith("Q4_1")
        assert record["n_threads"] == 2
        assert record["cpu_path"] in ("scalar", "avx2", "avx512")
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", record["test_time"])


def test_samples_and_their_statistics_agree(records):
    for record in records:
        n_tokens = record["n_prompt"] + record["n_gen"]
        assert len(record["samples_ns"]) == len(record["samples_ts"]) == 2
        assert all(ns > 0 for ns in record["samples_ns"])
        for ns, ts in zip(record["samples_ns"], record["samples_ts"]):
            assert ts == pytest.approx(1e9 * n_tokens / ns)
        ts = record["samples_ts"]
        assert record["avg_ts"] == pytest.approx(sum(ts) / 2)
        assert record["stddev_ts"] == pytest.approx(abs(ts[0] - ts[1]) / math.sqrt(2))
        assert record["avg_ns"] == pytest.approx(sum(record["samples_ns"]) / 2, abs=1)


def test_sizes_come_from_the_model_file(records, info):
    totals = info["totals"]
    for record in records:
        assert record["model_size"] == totals["bytes"]
        assert record["model_n_params"] == totals["n_parameters"]
        # The tied embedding is the output matrix: every tensor is read once per token,
        # and besides the weights a generated token reads the KV cache it attends to.
        assert record["weight_bytes_per_token"] == totals["bytes"]
        kv = record["kv_bytes_per_token"] if record["n_gen"] > 0 else 0
        assert record["bytes_per_token"] == totals["bytes"] + kv


def test_ceilings_follow_from_bandwidth_and_kernel_peak(records, info):
    prompt, generation = records
    assert generation["ceiling_bound"] == "memory_bandwidth"
    assert generation["bandwidth_gbs"] > 0
    assert generation["ceiling_ts"] == pytest.approx(
        generation["bandwidth_gbs"] * 1e9 / generation["bytes_per_token"])
    layer, output = matmul_params(info)
    assert prompt["ceiling_bound"] == "kernel_peak"
    # The output matrix runs for the prompt's last token only.
    assert prompt["ops_per_token"] == pytest.approx(2 * (layer + output / 16))
    assert prompt["ceiling_ts"] == pytest.approx(prompt["peak_gops"] * 1e9 / prompt["ops_per_token"])
    # Each weight type's share of the ops runs at its own kernel's peak: the
    # Q4_1 layers and the Q8_0 output matrix (SmolLM2 has no other types).
    peaks = prompt["kernel_peaks_gops"]
    assert set(peaks) == {"Q4_1", "Q8_0"} and all(p > 0 for p in peaks.values())
    seconds = 2 * layer / peaks["Q4_1"] + 2 * output / 16 / peaks["Q8_0"]
    assert prompt["peak_gops"] == pytest.approx(prompt["ops_per_token"] / seconds)
    for record in records:
        assert record["ceiling_pct"] == pytest.approx(100 * record["avg_ts"] / record["ceiling_ts"])
        assert record["ceiling_pct"] > 0


def test_text_table_shows_each_test_beside_its_ceiling(ladder_bin, default_model):
    out = run_ladder(ladder_bin, "bench-model", "-m", default_model, "-p", "8", "-n", "0", "-r", "1",
                     "-t", "2")
    header, _, row = out.splitlines()[:3]
    assert "t/s" in header and "ceiling t/s" in header and "% ceil" in header
    assert "| pp8 " in row.replace("  ", " ") or " pp8 |" in row
    assert re.search(r"\d+\.\d\d ± \d+\.\d\d", row)
    assert "pp8 ceiling:" in out
    assert re.search(r"kernel peaks: Q4_1 \d+\.\d GOP/s \(blk\.", out), out
    assert "tg" not in out, "-n 0 skips the generation test"


@pytest.mark.parametrize("flags, expected", [
    (("-r", "0"), "repetitions"),
    (("-p", "-1"), "n-prompt"),
    (("-p", "0", "-n", "0"), "nothing to measure"),
    (("-n", "100000"), "context"),
    (("-t", "0"), "threads"),
])
def test_bench_model_flags_are_validated(ladder_bin, default_model, flags, expected):
    message = run_failing(ladder_bin, "bench-model", "-m", default_model, *flags)
    assert expected in message, message


def test_roofline_arithmetic_follows_from_given_figures(ladder_bin, default_model, info):
    out = run_ladder_json(ladder_bin, "roofline", "-m", default_model, "--bandwidth", "50",
                          "--peak", "500", "-c", "512", "--batch", "1,4,64,256", "--json")
    assert out["bandwidth_gbs"] == 50 and out["peak_gops"] == 500
    assert out["ridge_ops_per_byte"] == pytest.approx(10.0)
    assert out["weight_bytes_per_step"] == info["totals"]["bytes"]
    hyper = info["hyperparameters"]
    head_dim = hyper["llama.embedding_length"] // hyper["llama.attention.head_count"]
    kv_per_position = (2 * hyper["llama.block_count"] * hyper["llama.attention.head_count_kv"]
                       * head_dim * 2)
    assert out["kv_bytes_per_token"] == 512 * kv_per_position
    layer, output = matmul_params(info)
    assert out["matmul_ops_per_token"] == pytest.approx(2 * (layer + output))

    points = out["points"]
    assert [p["batch"] for p in points] == [1, 4, 64, 256]

    def seconds(b):
        return ((out["weight_bytes_per_step"] + b * out["kv_bytes_per_token"]) / 50e9,
                b * out["ops_per_token"] / 500e9)

    for p in points:
        b = p["batch"]
        read_s, compute_s = seconds(b)
        assert p["bound"] == ("compute" if compute_s >= read_s else "memory")
        assert p["tokens_per_second"] == pytest.approx(b / max(read_s, compute_s))
        assert p["ops_per_byte"] == pytest.approx(b * out["ops_per_token"] / (read_s * 50e9))
    assert [p["bound"] for p in points] == ["memory", "memory", "compute", "compute"]
    knee = out["knee_batch"]
    assert seconds(knee)[1] >= seconds(knee)[0] and seconds(knee - 1)[1] < seconds(knee - 1)[0]


def test_roofline_measures_the_machine_when_not_told(ladder_bin, default_model):
    out = run_ladder(ladder_bin, "roofline", "-m", default_model, "-t", "2", "--batch", "1,256")
    assert re.search(r"bandwidth  \d+\.\d GB/s memory read bandwidth \(", out), out
    assert re.search(r"peak       \d+\.\d GOP/s matmul peak for this model's mix of weight "
                     r"types: Q4_1 \d+\.\d GOP/s .*Q8_0 \d+\.\d GOP/s", out), out
    # Whether batch 1 is memory-bound depends on the machine measured (a CPU
    # with a slow matmul peak has its ridge near batch 1's ops per byte), so
    # each row's verdict is checked against the ridge printed beside it.
    ridge = float(re.search(r"ridge      (\d+\.\d+) ops/byte", out).group(1))
    rows = re.findall(r"^\|\s+(\d+) \|\s+(\d+\.\d+) \| (memory|compute)\s+\|", out,
                      re.MULTILINE)
    assert [batch for batch, _, _ in rows] == ["1", "256"], out
    for _, ops_per_byte, bound in rows:
        if abs(float(ops_per_byte) - ridge) > 0.01:  # printed to 2 decimals
            assert bound == ("memory" if float(ops_per_byte) < ridge else "compute"), out
    assert rows[-1][2] == "compute", out  # 256 sequences share each weight read
    assert "knee:" in out


@pytest.mark.parametrize("flags, expected", [
    (("--batch", "0"), "batch"),
    (("--batch", "1,x"), "batch"),
    (("--bandwidth", "-5"), "bandwidth"),
    (("--peak", "0"), "peak"),
    (("-c", "0"), "context"),
])
def test_roofline_flags_are_validated(ladder_bin, default_model, flags, expected):
    message = run_failing(ladder_bin, "roofline", "-m", default_model, "--bandwidth", "10",
                          "--peak", "10", *flags)
    assert expected in message, message


def test_depth_runs_each_test_on_a_filled_cache(ladder_bin, default_model, info):
    """-d as llama-bench's: every test again on top of N cached tokens, tg's
    ceiling counting the KV bytes each generated token reads."""
    records = run_ladder_json(ladder_bin, "bench-model", "-m", default_model, "-p", "16", "-n",
                              "4", "-d", "0,64", "-r", "1", "-t", "2", "--attention", "fast",
                              "--json")
    tests = sorted((r["n_prompt"], r["n_gen"], r["n_depth"]) for r in records)
    assert tests == [(0, 4, 0), (0, 4, 64), (16, 0, 0), (16, 0, 64)]
    assert all(r["attention"] == "fast" for r in records)
    hyper = info["hyperparameters"]
    head_dim = hyper["llama.embedding_length"] // hyper["llama.attention.head_count"]
    kv_per_position = (2 * hyper["llama.block_count"] * hyper["llama.attention.head_count_kv"]
                       * head_dim * 2)
    for r in records:
        if r["n_gen"] == 0:
            continue
        # Generated token i (1..4) sees n_depth + i positions: 2.5 more than the depth on average.
        expected_kv = (r["n_depth"] + 2.5) * kv_per_position
        assert math.isclose(r["kv_bytes_per_token"], expected_kv, rel_tol=0.01)
        assert r["bytes_per_token"] == r["weight_bytes_per_token"] + r["kv_bytes_per_token"]
        assert math.isclose(r["ceiling_ts"], r["bandwidth_gbs"] * 1e9 / r["bytes_per_token"],
                            rel_tol=0.01)
    table = run_ladder(ladder_bin, "bench-model", "-m", default_model, "-p", "16", "-n", "4",
                       "-d", "64", "-r", "1", "-t", "2")
    assert "pp16 @ d64" in table and "tg4 @ d64" in table
