#!/usr/bin/env python3
"""Golden data for ladder's scalar tensor reference (tests/unit/tensor).

Writes, under tests/data/quant/ by default:

  dequantize.json  seeded random blocks of every supported type and the floats
                   gguf.quants (ggml's Python reference) decodes them to.
  quantize.json    a few float rows and their encodings: gguf.quants for
                   F16/BF16/Q4_0/Q4_1/Q5_0/Q5_1/Q8_0; for Q8_1 and Q8_K, which
                   gguf.quants cannot quantize, a numpy port (below) of ggml's
                   quantize_row_q8_1_ref / quantize_row_q8_K_ref.
  vec_dot.json     (only with --libggml) weight rows, activation rows and the
                   result of ggml's own scalar ggml_vec_dot_*_generic.

With --libggml DIR (a folder holding libggml-base.so and libggml-cpu.so from a
llama.cpp build, e.g. the one llama-cpp-python ships), every gguf / numpy
result is also checked bit for bit against ggml's C reference before it is
written, and vec_dot.json is produced. Without it the existing vec_dot.json is
left alone.

Floats are stored as the hex of their little-endian float32 bytes so the
comparison is bit exact; blocks as the hex of their bytes.

Usage: python scripts/goldens/quant_goldens.py [--out DIR] [--libggml DIR]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import sys
from pathlib import Path

import numpy as np
import gguf
from gguf import GGMLQuantizationType as QT
from gguf.constants import GGML_QUANT_SIZES as GGUF_QUANT_SIZES

# gguf-py still lists Q8_1 as 40 bytes (float d and s); ggml-common.h has been
# 36 (two halves) for years. Q8_1 never appears in files, so only we care.
GGML_QUANT_SIZES = {**GGUF_QUANT_SIZES, QT.Q8_1: (32, 2 + 2 + 32)}

SEED = 20240607
REPO = Path(__file__).resolve().parents[2]

# (type, number of blocks) for dequantize goldens: odd counts, a few blocks.
DEQUANT_TYPES = [
    (QT.F16, 96), (QT.BF16, 96),
    (QT.Q4_0, 5), (QT.Q4_1, 5), (QT.Q5_0, 5), (QT.Q5_1, 5), (QT.Q8_0, 5),
    (QT.Q2_K, 2), (QT.Q3_K, 2), (QT.Q4_K, 2), (QT.Q5_K, 2), (QT.Q6_K, 2),
]
GGUF_QUANTIZE_TYPES = [QT.F16, QT.BF16, QT.Q4_0, QT.Q4_1, QT.Q5_0, QT.Q5_1, QT.Q8_0]
PORTED_QUANTIZE_TYPES = [QT.Q8_1, QT.Q8_K]

# Byte offsets of the fp16 scale fields in each block (d, m/dmin/s), which
# must hold finite values for a random block to be meaningful.
HALF_FIELDS = {
    QT.Q4_0: [0], QT.Q4_1: [0, 2], QT.Q5_0: [0], QT.Q5_1: [0, 2], QT.Q8_0: [0],
    QT.Q2_K: [80, 82], QT.Q3_K: [108], QT.Q4_K: [0, 2], QT.Q5_K: [0, 2], QT.Q6_K: [208],
}


def hexf(values: np.ndarray) -> str:
    return np.ascontiguousarray(values, dtype="<f4").tobytes().hex()


def random_blocks(rng: np.random.Generator, qtype: QT, n_blocks: int) -> np.ndarray:
    """Random block bytes with finite, moderately sized fp16 scales."""
    _, type_size = GGML_QUANT_SIZES[qtype]
    raw = rng.integers(0, 256, size=(n_blocks, type_size), dtype=np.uint8)
    for offset in HALF_FIELDS.get(qtype, []):
        scale = (rng.uniform(1e-3, 0.5, size=n_blocks) * rng.choice([-1, 1], size=n_blocks))
        raw[:, offset:offset + 2] = scale.astype(np.float16).view(np.uint8).reshape(n_blocks, 2)
    return raw


def random_half_bits(rng: np.random.Generator, n: int, quiet_nans: bool) -> np.ndarray:
    bits = rng.integers(0, 1 << 16, size=n, dtype=np.uint32).astype(np.uint16)
    specials = np.array([0x0000, 0x8000, 0x7C00, 0xFC00, 0x0001, 0x03FF, 0x0400, 0x7BFF],
                        dtype=np.uint16)
    bits[:len(specials)] = specials
    if quiet_nans:
        # numpy widens a signaling F16 NaN unchanged, while F16C hardware (and
        # ladder, following llama.cpp on x86) quiets it; keep only quiet NaNs
        # here and leave signaling ones to the unit tests.
        is_nan = ((bits & 0x7C00) == 0x7C00) & ((bits & 0x03FF) != 0)
        bits[is_nan] |= 0x0200
    return bits


def dequantize_case(rng: np.random.Generator, qtype: QT, n_blocks: int) -> dict:
    block_size, _ = GGML_QUANT_SIZES[qtype]
    if qtype in (QT.F16, QT.BF16):
        # BF16 decoding is a plain shift, so its NaNs may stay signaling.
        raw = random_half_bits(rng, n_blocks, quiet_nans=qtype == QT.F16).view(np.uint8)
    else:
        raw = random_blocks(rng, qtype, n_blocks).reshape(-1)
    values = gguf.quants.dequantize(raw.reshape(1, -1), qtype).reshape(-1)
    return {"type": qtype.name, "n": n_blocks * block_size, "data": raw.tobytes().hex(),
            "expected_f32": hexf(values)}


def float_rows(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Rows of 512 floats (two Q8_K super-blocks, sixteen 32-blocks)."""
    n = 512
    normal = (rng.standard_normal(n) * 0.5).astype(np.float32)

    edge = (rng.standard_normal(n)).astype(np.float32)
    edge[0:32] = 0.0                       # all-zero block: d = 0, id = 0
    edge[32:64] = 0.75                     # constant block: Q4_1/Q5_1 d = 0
    edge[64:96] *= 1e-6                    # scale underflows to an fp16 subnormal
    edge[96:128] *= 3e4                    # large, still finite in fp16
    edge[130] = -40.0                      # one outlier in its block
    edge[256:512] = 0.0                    # a whole zero Q8_K super-block

    # Halfway cases: every 32-block holds -127 first, so Q8_0/Q8_1 get d = 1
    # and Q8_K gets iscale = 1; the other values sit exactly on .5, where
    # roundf (away from zero) and nearest-even differ.
    ties = (rng.integers(-60, 60, size=n) + 0.5).astype(np.float32)
    ties[::32] = -127.0
    return {"normal": normal, "edge": edge, "ties": ties}


# ---- numpy ports of the two activation quantizers gguf.quants lacks --------

def quantize_q8_1(x: np.ndarray) -> np.ndarray:
    """ggml quantize_row_q8_1_ref: Q8_0 plus s = fp16(sum(q) * d)."""
    blocks = x.reshape(-1, 32).astype(np.float32)
    d = (np.abs(blocks).max(axis=1, keepdims=True) / np.float32(127)).astype(np.float32)
    with np.errstate(divide="ignore"):
        inv = np.where(d == 0, np.float32(0), np.float32(1) / d).astype(np.float32)
    q = gguf.quants.np_roundf((blocks * inv).astype(np.float32)).astype(np.int8)
    s = (q.astype(np.int32).sum(axis=1, keepdims=True).astype(np.float32) * d).astype(np.float32)
    with np.errstate(over="ignore"):  # s of a large block overflows fp16 to inf, as in ggml
        d16, s16 = d.astype(np.float16), s.astype(np.float16)
    return np.concatenate([d16.view(np.uint8), s16.view(np.uint8), q.view(np.uint8)],
                          axis=1).reshape(-1)


def quantize_q8_k(x: np.ndarray) -> np.ndarray:
    """ggml quantize_row_q8_K_ref: iscale = -127 / (signed absmax), codes by
    round-half-even, d = 1 / iscale as float32, bsums over 16s. A zero block
    gets d = 0, zero codes and (here, and in ladder) zero bsums."""
    out = []
    for block in x.reshape(-1, 256).astype(np.float32):
        amax_index = int(np.argmax(np.abs(block)))  # first of equal maxima, as ggml
        vmax = block[amax_index]
        if vmax == 0:
            out.append(np.zeros(292, dtype=np.uint8))
            continue
        iscale = np.float32(-127.0) / vmax
        q = np.minimum(np.rint((iscale * block).astype(np.float32)), 127).astype(np.int8)
        bsums = q.astype(np.int32).reshape(16, 16).sum(axis=1).astype("<i2")
        d = np.array([np.float32(1.0) / iscale], dtype="<f4")
        out.append(np.concatenate([d.view(np.uint8), q.view(np.uint8), bsums.view(np.uint8)]))
    return np.concatenate(out)


def quantize_with(qtype: QT, row: np.ndarray) -> np.ndarray:
    if qtype == QT.Q8_1:
        return quantize_q8_1(row)
    if qtype == QT.Q8_K:
        return quantize_q8_k(row)
    with np.errstate(over="ignore"):
        return np.asarray(gguf.quants.quantize(row.reshape(1, -1), qtype)).view(np.uint8).reshape(-1)


# ---- optional cross-check against ggml's C library ---------------------------

class Ggml:
    """ctypes access to ggml's exported reference functions."""

    def __init__(self, folder: Path):
        self.base = ctypes.CDLL(str(folder / "libggml-base.so"), mode=ctypes.RTLD_GLOBAL)
        self.cpu = ctypes.CDLL(str(folder / "libggml-cpu.so"), mode=ctypes.RTLD_GLOBAL)
        # Fills the fp16 lookup table the CPU dot products read scales through;
        # without it every scale reads as 0.
        self.cpu.ggml_cpu_init()

    def quantize(self, qtype: QT, row: np.ndarray) -> np.ndarray:
        row = np.ascontiguousarray(row, dtype=np.float32)
        if qtype == QT.F16:
            out = np.zeros(row.size, dtype=np.uint16)
            self.base.ggml_fp32_to_fp16_row(ptr(row), ptr(out), ctypes.c_int64(row.size))
            return out.view(np.uint8)
        if qtype == QT.BF16:
            out = np.zeros(row.size, dtype=np.uint16)
            self.base.ggml_fp32_to_bf16_row_ref(ptr(row), ptr(out),
                                                ctypes.c_int64(row.size))
            return out.view(np.uint8)
        block_size, type_size = GGML_QUANT_SIZES[qtype]
        out = np.zeros(row.size // block_size * type_size, dtype=np.uint8)
        fn = getattr(self.base, f"quantize_row_{ggml_name(qtype)}_ref")
        fn(ptr(row), ptr(out), ctypes.c_int64(row.size))
        return out

    def dequantize(self, qtype: QT, raw: np.ndarray, n: int) -> np.ndarray:
        raw = np.ascontiguousarray(raw, dtype=np.uint8)
        out = np.zeros(n, dtype=np.float32)
        if qtype == QT.F16:
            self.base.ggml_fp16_to_fp32_row(ptr(raw), ptr(out), ctypes.c_int64(n))
        elif qtype == QT.BF16:
            self.base.ggml_bf16_to_fp32_row(ptr(raw), ptr(out), ctypes.c_int64(n))
        else:
            fn = getattr(self.base, f"dequantize_row_{ggml_name(qtype)}")
            fn(ptr(raw), ptr(out), ctypes.c_int64(n))
        return out

    def vec_dot(self, wtype: QT, atype: QT, w: np.ndarray, a: np.ndarray, n: int) -> np.float32:
        fn = getattr(self.cpu, f"ggml_vec_dot_{ggml_name(wtype)}_{ggml_name(atype)}_generic")
        result = ctypes.c_float(0)
        fn(ctypes.c_int(n), ctypes.byref(result), ctypes.c_size_t(0), ptr(w),
           ctypes.c_size_t(0), ptr(a), ctypes.c_size_t(0), ctypes.c_int(1))
        return np.float32(result.value)


def ptr(array: np.ndarray) -> ctypes.c_void_p:
    # ctypes would pass a bare int as a 32-bit int and truncate the address.
    return ctypes.c_void_p(array.ctypes.data)


def ggml_name(qtype: QT) -> str:
    return qtype.name.lower().replace("_k", "_K")


def check_same(what: str, ours: np.ndarray, ggml: np.ndarray) -> None:
    a = np.ascontiguousarray(ours).view(np.uint8)
    b = np.ascontiguousarray(ggml).view(np.uint8)
    if a.shape != b.shape or not np.array_equal(a, b):
        diff = int(np.argmax(a != b)) if a.shape == b.shape else -1
        sys.exit(f"quant_goldens: {what} differs from ggml's C reference (first byte {diff})")


VEC_DOT_PAIRS = [
    (QT.Q4_0, QT.Q8_0, 7), (QT.Q4_1, QT.Q8_1, 7), (QT.Q5_0, QT.Q8_0, 7),
    (QT.Q5_1, QT.Q8_1, 7), (QT.Q8_0, QT.Q8_0, 7),
    (QT.Q2_K, QT.Q8_K, 3), (QT.Q3_K, QT.Q8_K, 3), (QT.Q4_K, QT.Q8_K, 3),
    (QT.Q5_K, QT.Q8_K, 3), (QT.Q6_K, QT.Q8_K, 3),
]


def vec_dot_cases(rng: np.random.Generator, lib: Ggml) -> list[dict]:
    cases = []
    for wtype, atype, n_blocks in VEC_DOT_PAIRS:
        block_size, _ = GGML_QUANT_SIZES[wtype]
        n = n_blocks * block_size
        w = random_blocks(rng, wtype, n_blocks).reshape(-1)
        x = (rng.standard_normal(n) * 0.7).astype(np.float32)
        a = lib.quantize(atype, x)
        cases.append({"weight_type": wtype.name, "activation_type": atype.name, "n": n,
                      "weights": w.tobytes().hex(), "activations": a.tobytes().hex(),
                      "expected_f32": hexf(np.array([lib.vec_dot(wtype, atype, w, a, n)]))})
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "tests/data/quant")
    parser.add_argument("--libggml", type=Path, help="folder with libggml-base.so, libggml-cpu.so")
    args = parser.parse_args()
    lib = Ggml(args.libggml) if args.libggml else None
    rng = np.random.default_rng(SEED)

    dequant = [dequantize_case(rng, qtype, n_blocks) for qtype, n_blocks in DEQUANT_TYPES]
    if lib:
        for case in dequant:
            qtype = QT[case["type"]]
            raw = np.frombuffer(bytes.fromhex(case["data"]), dtype=np.uint8)
            expected = np.frombuffer(bytes.fromhex(case["expected_f32"]), dtype="<f4")
            check_same(f"dequantize {qtype.name}", expected, lib.dequantize(qtype, raw, case["n"]))

    rows = float_rows(rng)
    quant = []
    for name, row in rows.items():
        encodings = {}
        for qtype in GGUF_QUANTIZE_TYPES + PORTED_QUANTIZE_TYPES:
            encoded = quantize_with(qtype, row)
            if lib:
                check_same(f"quantize {qtype.name} of row '{name}'", encoded, lib.quantize(qtype, row))
            encodings[qtype.name] = encoded.tobytes().hex()
        quant.append({"case": name, "n": int(row.size), "input_f32": hexf(row),
                      "expected": encodings})

    header = {"generator": "scripts/goldens/quant_goldens.py", "seed": SEED,
              "numpy": np.__version__,
              "checked_against_ggml_c": bool(lib)}
    args.out.mkdir(parents=True, exist_ok=True)
    write(args.out / "dequantize.json", {**header, "source": "gguf.quants.dequantize",
                                          "cases": dequant})
    write(args.out / "quantize.json", {
        **header,
        "source": {t.name: "gguf.quants.quantize" for t in GGUF_QUANTIZE_TYPES} |
                  {t.name: "numpy port of ggml quantize_row_*_ref" for t in PORTED_QUANTIZE_TYPES},
        "rows": quant})
    if lib:
        write(args.out / "vec_dot.json", {
            **header, "source": "ggml-cpu ggml_vec_dot_*_generic via ctypes",
            "cases": vec_dot_cases(rng, lib)})
    elif not (args.out / "vec_dot.json").exists():
        print("quant_goldens: no --libggml given, vec_dot.json not written", file=sys.stderr)


def write(path: Path, doc: dict) -> None:
    path.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {path.relative_to(REPO) if path.is_relative_to(REPO) else path} "
          f"({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
