"""`ladder quantize` against llama-quantize: for the same input and type the
output file is the same, byte for byte (tests/data/quantize/quantize_goldens.json,
written by scripts/goldens/quantize_goldens.py with llama.cpp's
llama_model_quantize); and bad input is refused in one line with no file left."""

import hashlib
import json
import os
import pty
import select
import struct
import subprocess

import pytest

from conftest import DEFAULT_MODEL, ROOT, run_ladder_failing

DATA = os.path.join(ROOT, "tests", "data", "quantize")
GOLDENS_PATH = os.path.join(DATA, "quantize_goldens.json")


def load_goldens():
    assert os.path.exists(GOLDENS_PATH), (
        f"goldens missing: {GOLDENS_PATH} (scripts/goldens/quantize_goldens.py makes them)")
    with open(GOLDENS_PATH, encoding="utf-8") as f:
        return json.load(f)


GOLDENS = load_goldens()
CASES = {case["id"]: case for case in GOLDENS["cases"]}


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def flags_of(options):
    flags = []
    for key, value in sorted(options.items()):
        flag = "--" + key.replace("_", "-")
        flags += [flag] if value is True else [flag, str(value)]
    return flags


def quantize(ladder_bin, src, dst, type_name, options=None, threads=2):
    result = subprocess.run(
        [ladder_bin, "quantize", str(src), str(dst), type_name, "-t", str(threads),
         *flags_of(options or {})],
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, (
        f"ladder quantize {os.path.basename(str(src))} {type_name} exited "
        f"{result.returncode}: {result.stderr.strip()}")
    return result


def input_path(case_input, tmp_path, ladder_bin):
    """A committed input, or a golden case's output (requantization), made by ladder."""
    if case_input in CASES:
        parent = CASES[case_input]
        src = input_path(parent["input"], tmp_path, ladder_bin)
        dst = tmp_path / ("parent-" + hashlib.sha1(case_input.encode()).hexdigest() + ".gguf")
        if not dst.exists():
            quantize(ladder_bin, src, dst, parent["type"], parent["options"])
        return dst
    return os.path.join(DATA, case_input)


def test_committed_inputs_are_the_ones_the_goldens_were_made_from():
    for name, digest in GOLDENS["inputs"].items():
        assert sha256_of(os.path.join(DATA, name)) == digest, (
            f"{name} changed since the goldens were made: rerun scripts/goldens/quantize_goldens.py")


@pytest.mark.parametrize("case_id", list(CASES))
def test_output_is_byte_identical_to_llama_quantize(ladder_bin, tmp_path, case_id):
    case = CASES[case_id]
    src = input_path(case["input"], tmp_path, ladder_bin)
    dst = tmp_path / "out.gguf"
    quantize(ladder_bin, src, dst, case["type"], case["options"])
    size = os.path.getsize(dst)
    assert size == case["size"], f"{case_id}: {size} bytes, llama-quantize wrote {case['size']}"
    assert sha256_of(dst) == case["sha256"], f"{case_id}: same size, different bytes"


def test_the_goldens_cover_every_type_ladder_makes():
    types = {case["type"] for case in GOLDENS["cases"]}
    assert types == {"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K",
                     "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K"}


@pytest.fixture(scope="module")
def smollm2_f16(ladder_bin, tmp_path_factory):
    """SmolLM2 requantized from its Q4_1 file to F16: the quality table's reference."""
    case = next(c for c in GOLDENS["real_model"] if c["type"] == "F16")
    assert os.path.exists(DEFAULT_MODEL), f"default model missing at {DEFAULT_MODEL}: run `make model`"
    dst = tmp_path_factory.mktemp("smollm2") / "smollm2-f16.gguf"
    quantize(ladder_bin, DEFAULT_MODEL, dst, "F16", case["options"])
    return dst, case


def test_real_model_requantized_to_f16_is_byte_identical(smollm2_f16):
    dst, case = smollm2_f16
    assert sha256_of(dst) == case["sha256"], "SmolLM2 Q4_1 -> F16 differs from llama-quantize"


@pytest.mark.parametrize("type_name", ["Q8_0", "Q4_K_M"])
def test_real_model_quantized_from_f16_is_byte_identical(ladder_bin, smollm2_f16, tmp_path,
                                                         type_name):
    src, _ = smollm2_f16
    case = next(c for c in GOLDENS["real_model"] if c["type"] == type_name)
    dst = tmp_path / f"smollm2-{type_name}.gguf"
    quantize(ladder_bin, src, dst, type_name)
    assert sha256_of(dst) == case["sha256"], f"SmolLM2 F16 -> {type_name} differs from llama-quantize"


# ---- what a user sees -------------------------------------------------------

TINY = os.path.join(DATA, "tiny-llama.f32.gguf")


def test_summary_gives_sizes_bits_per_weight_and_time(ladder_bin, tmp_path):
    out = quantize(ladder_bin, TINY, tmp_path / "q.gguf", "Q4_K_M").stdout
    assert "Q4_K_M" in out and " s (" in out, out
    assert "bpw" in out and "MiB" in out, out
    weights = next(line for line in out.splitlines() if "weights:" in line)
    assert "(32.00 bpw) ->" in weights, weights  # an F32 input


def test_fallbacks_are_reported(ladder_bin, tmp_path):
    result = quantize(ladder_bin, TINY, tmp_path / "q.gguf", "Q4_K_M")
    assert "blk.9.ffn_down.weight: rows of 40" in result.stderr, result.stderr
    assert "falling back to F16" in result.stderr


def test_requantizing_needs_the_flag_and_warns(ladder_bin, tmp_path):
    q4 = tmp_path / "q4.gguf"
    quantize(ladder_bin, TINY, q4, "Q4_K_M")
    refused = tmp_path / "refused.gguf"
    message = run_ladder_failing(ladder_bin, "quantize", q4, refused, "Q8_0")
    assert "--allow-requantize" in message, message
    assert not refused.exists()
    result = quantize(ladder_bin, q4, tmp_path / "q8.gguf", "Q8_0", {"allow_requantize": True})
    assert "warning: requantizing" in result.stderr, result.stderr


def no_leftovers(folder, expected):
    assert sorted(os.listdir(folder)) == sorted(expected), (
        f"left behind: {sorted(set(os.listdir(folder)) - set(expected))}")


def test_malformed_input_is_one_line_and_writes_nothing(ladder_bin, tmp_path):
    truncated = tmp_path / "truncated.gguf"
    with open(TINY, "rb") as f:
        truncated.write_bytes(f.read(3000))
    message = run_ladder_failing(ladder_bin, "quantize", truncated, tmp_path / "out.gguf", "Q8_0")
    assert "truncated.gguf" in message, message
    no_leftovers(tmp_path, ["truncated.gguf"])


def test_nan_in_a_weight_is_refused_and_writes_nothing(ladder_bin, tmp_path):
    # The file ends with the data of a 2-D F32 weight (blk.1.attn_k.weight,
    # 2048 bytes, no padding): poison sixteen of its floats.
    data = bytearray(open(TINY, "rb").read())
    for offset in range(len(data) - 256, len(data) - 192, 4):
        data[offset:offset + 4] = struct.pack("<f", float("nan"))
    poisoned = tmp_path / "nan.gguf"
    poisoned.write_bytes(bytes(data))
    message = run_ladder_failing(ladder_bin, "quantize", poisoned, tmp_path / "out.gguf", "Q4_0")
    assert "NaN or infinity" in message and "blk.1.attn_k.weight" in message, message
    no_leftovers(tmp_path, ["nan.gguf"])


def test_bad_arguments_are_one_line(ladder_bin, tmp_path):
    assert "Q4_K_M" in run_ladder_failing(ladder_bin, "quantize", TINY, tmp_path / "o.gguf", "Q9_9")
    assert "does not exist" in run_ladder_failing(ladder_bin, "quantize", tmp_path / "missing.gguf",
                                           tmp_path / "o.gguf", "Q8_0")
    assert "is the input" in run_ladder_failing(ladder_bin, "quantize", TINY, TINY, "Q8_0")
    message = run_ladder_failing(ladder_bin, "quantize", TINY, tmp_path / "o.gguf", "Q8_0",
                          "--token-embedding-type", "q4_k")  # its rows are 96 long
    assert "token_embd.weight" in message and "256" in message, message
    assert "cannot write" in run_ladder_failing(ladder_bin, "quantize", TINY,
                                         tmp_path / "no" / "o.gguf", "Q8_0")
    no_leftovers(tmp_path, [])


def test_progress_bar_on_a_terminal(ladder_bin, tmp_path):
    primary, secondary = pty.openpty()
    process = subprocess.Popen(
        [ladder_bin, "quantize", TINY, str(tmp_path / "q.gguf"), "Q6_K", "-t", "1"],
        stdout=subprocess.DEVNULL, stderr=secondary, stdin=subprocess.DEVNULL)
    os.close(secondary)
    seen = b""
    while True:
        ready, _, _ = select.select([primary], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(primary, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    assert process.wait(timeout=60) == 0
    os.close(primary)
    assert b"\r" in seen and b"%" in seen and b"[" in seen, seen[:400]
