#!/usr/bin/env python3
"""Goldens for `ladder quantize`: llama-quantize's output, byte for byte.

Writes, under tests/data/quantize/ by default:

  tiny-llama.{f32,f16,bf16}.gguf       two small random-weight Llama-architecture
  tiny-llama-tied.{f32,f16,bf16}.gguf  models (the second shares its embeddings
                                       with the output), shaped to exercise
                                       llama-quantize's rules: 16 and 8 layers for
                                       the layer-position rules, grouped and
                                       ungrouped attention, rows of 256, 96 (no
                                       K-quant fits: fallbacks) and 40 elements
                                       (no 32-block fits: F16), a 2-D norm, a
                                       tensor stored with a trailing dimension
                                       of 1, tensors out of llama-quantize's
                                       order, blocks of zeros, ties, outliers
                                       and tiny values, and every metadata
                                       value type.
  quantize_goldens.json                the sha256 and size of what
                                       llama_model_quantize (llama.cpp, through
                                       llama-cpp-python) writes for each input,
                                       type and option set; requantization cases
                                       start from one of those outputs. With
                                       --real-model, also SmolLM2 requantized
                                       from its Q4_1 file.

Offline only; the tests read the committed results. Run it with the oracle's
Python (llama-cpp-python 0.3.36, numpy):

    python scripts/goldens/quantize_goldens.py [--out DIR] [--real-model models/X.gguf]
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import os
import struct
import sys
import tempfile
from pathlib import Path

try:  # only the tiny models need numpy; the oracle does not
    import numpy as np
except ImportError:
    np = None

REPO = Path(__file__).resolve().parents[2]
SEED = 20250116

# ggml type ids and the names the goldens use.
GGML_F32, GGML_F16, GGML_BF16 = 0, 1, 30
TYPE_IDS = {"F32": 0, "F16": 1, "Q4_0": 2, "Q4_1": 3, "Q5_0": 6, "Q5_1": 7, "Q8_0": 8,
            "Q2_K": 10, "Q3_K": 11, "Q4_K": 12, "Q5_K": 13, "Q6_K": 14, "BF16": 30}
# llama_ftype of each `quantize` type name.
FILE_TYPES = {"Q4_0": 2, "Q4_1": 3, "Q5_0": 8, "Q5_1": 9, "Q2_K": 10, "Q3_K_S": 11,
              "Q3_K_M": 12, "Q3_K_L": 13, "Q4_K_S": 14, "Q4_K_M": 15, "Q5_K_S": 16,
              "Q5_K_M": 17, "Q6_K": 18, "Q8_0": 7, "F16": 1, "BF16": 32, "F32": 0}
INPUT_FILE_TYPES = {"f32": 0, "f16": 1, "bf16": 32}

# ---- a minimal GGUF writer: the test inputs must be exactly what we say ----

GGUF_U8, GGUF_I8, GGUF_U16, GGUF_I16, GGUF_U32, GGUF_I32 = 0, 1, 2, 3, 4, 5
GGUF_F32, GGUF_BOOL, GGUF_STR, GGUF_ARR, GGUF_U64, GGUF_I64, GGUF_F64 = 6, 7, 8, 9, 10, 11, 12
SCALAR_FORMATS = {GGUF_U8: "<B", GGUF_I8: "<b", GGUF_U16: "<H", GGUF_I16: "<h", GGUF_U32: "<I",
                  GGUF_I32: "<i", GGUF_F32: "<f", GGUF_BOOL: "<?", GGUF_U64: "<Q", GGUF_I64: "<q",
                  GGUF_F64: "<d"}
ALIGNMENT = 32


def gguf_string(s: str) -> bytes:
    data = s.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def gguf_value(vtype: int, value) -> bytes:
    if vtype == GGUF_STR:
        return gguf_string(value)
    if vtype == GGUF_ARR:
        etype, items = value
        return struct.pack("<IQ", etype, len(items)) + b"".join(gguf_value(etype, v) for v in items)
    return struct.pack(SCALAR_FORMATS[vtype], value)


def write_gguf(path: Path, metadata: list, tensors: list) -> None:
    """metadata: [(key, type, value)]; tensors: [(name, ggml type, ne list, bytes)]."""
    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata)))
    for key, vtype, value in metadata:
        out += gguf_string(key) + struct.pack("<I", vtype) + gguf_value(vtype, value)
    offset = 0
    for name, ttype, ne, data in tensors:
        out += gguf_string(name) + struct.pack("<I", len(ne))
        out += b"".join(struct.pack("<Q", d) for d in ne)
        out += struct.pack("<IQ", ttype, offset)
        offset += (len(data) + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
    out += bytes(-len(out) % ALIGNMENT)
    for _, _, _, data in tensors:
        out += data + bytes(-len(data) % ALIGNMENT)
    path.write_bytes(bytes(out))


# ---- the tiny models --------------------------------------------------------

def special_rows(rng: np.random.Generator, n_cols: int) -> np.ndarray:
    """One row of blocks that stress the encoders' corner cases."""
    row = rng.normal(0.0, 0.02, n_cols).astype(np.float32)
    pieces = [
        np.zeros(32, np.float32),                                   # all zero
        np.full(32, 0.125, np.float32),                             # constant
        np.linspace(-1.0, 1.0, 32, dtype=np.float32),               # ramps with ties
        np.where(np.arange(32) == 7, 3.0, 0.01).astype(np.float32),  # one outlier
        np.abs(rng.normal(0.0, 0.05, 32)).astype(np.float32) + 0.5,  # positive only
        -np.abs(rng.normal(0.0, 0.05, 32)).astype(np.float32),      # negative only
        (rng.integers(-8, 8, 32) * 0.0625).astype(np.float32),      # exact grid values
        np.full(32, 1e-20, np.float32),                             # below F16's range
    ]
    special = np.concatenate(pieces)[:n_cols]
    row[: special.size] = special
    return row


def weight(rng: np.random.Generator, n_cols: int, n_rows: int, special: bool) -> np.ndarray:
    w = rng.normal(0.0, 0.02, (n_rows, n_cols)).astype(np.float32)
    if special:
        w[0] = special_rows(rng, n_cols)
    return w


def to_bytes(values: np.ndarray, ttype: int) -> bytes:
    values = np.ascontiguousarray(values, dtype=np.float32)
    if ttype == GGML_F32:
        return values.tobytes()
    if ttype == GGML_F16:
        return values.astype("<f2").tobytes()
    bits = values.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype("<u2")  # ggml's fp32 -> bf16
    return rounded.tobytes()


def model_spec(tied: bool):
    """(metadata, tensors as (name, ne, values, is_weight)) of one tiny model."""
    rng = np.random.default_rng(SEED + (1 if tied else 0))
    n_layer, dim = (8, 256) if tied else (16, 256)
    n_head, n_head_kv = (2, 2) if tied else (4, 1)
    vocab = 8
    metadata = [
        ("general.architecture", GGUF_STR, "llama"),
        ("general.name", GGUF_STR, "tiny-llama-tied" if tied else "tiny-llama"),
        ("llama.context_length", GGUF_U32, 128),
        ("llama.embedding_length", GGUF_U32, dim),
        ("llama.block_count", GGUF_U32, n_layer),
        ("llama.feed_forward_length", GGUF_U32, dim),
        ("llama.attention.head_count", GGUF_U32, n_head),
        ("llama.attention.head_count_kv", GGUF_U32, n_head_kv),
        ("llama.attention.layer_norm_rms_epsilon", GGUF_F32, 1e-5),
        ("llama.rope.freq_base", GGUF_F32, 10000.0),
        ("llama.vocab_size", GGUF_U32, vocab),
        ("tokenizer.ggml.model", GGUF_STR, "gpt2"),
        ("tokenizer.ggml.tokens", GGUF_ARR, (GGUF_STR, [f"t{i}" for i in range(vocab)])),
        ("tokenizer.ggml.token_type", GGUF_ARR, (GGUF_I32, [1] * vocab)),
        ("tokenizer.ggml.scores", GGUF_ARR, (GGUF_F32, [-float(i) for i in range(vocab)])),
        ("tokenizer.ggml.bos_token_id", GGUF_U32, 1),
        ("test.u8", GGUF_U8, 200), ("test.i8", GGUF_I8, -7), ("test.u16", GGUF_U16, 65000),
        ("test.i16", GGUF_I16, -300), ("test.i32", GGUF_I32, -70000),
        ("test.u64", GGUF_U64, 1 << 40), ("test.i64", GGUF_I64, -(1 << 40)),
        ("test.f64", GGUF_F64, 0.1), ("test.bool", GGUF_BOOL, True),
        ("test.bools", GGUF_ARR, (GGUF_BOOL, [True, False])),
        ("test.f64s", GGUF_ARR, (GGUF_F64, [1.5, -2.5])),
        ("test.empty", GGUF_ARR, (GGUF_U64, [])),
    ]
    if not tied:
        # Keys llama-quantize moves to the end (quantization version, file
        # type) and the explicit default alignment.
        metadata.insert(2, ("general.quantization_version", GGUF_U32, 1))
        metadata.insert(3, ("general.file_type", GGUF_U32, 0))
        metadata.append(("general.alignment", GGUF_U32, ALIGNMENT))

    tensors = []
    emb_cols = 256 if tied else 96
    tensors.append(("token_embd.weight", [emb_cols, vocab], weight(rng, emb_cols, vocab, True)))
    tensors.append(("output_norm.weight", [dim], np.ones(dim, np.float32)))
    if not tied:
        tensors.append(("output.weight", [dim, vocab], weight(rng, dim, vocab, True)))
        tensors.append(("rope_freqs.weight", [32], np.linspace(1, 2, 32, dtype=np.float32)))
    for i in range(n_layer):
        # ffn_down rows: mostly 256; 96 (K-quants fall back), 40 (F16), 512.
        down_cols = {5: 96, 6: 96, 9: 40, 12: 512}.get(i, 256) if not tied else {3: 96}.get(i, 256)
        layer = [
            ("attn_norm.weight", [dim], rng.normal(1.0, 0.1, dim).astype(np.float32)),
            ("attn_q.weight", [dim, 2], weight(rng, dim, 2, i == 0)),
            ("attn_k.weight", [dim, 2], weight(rng, dim, 2, i == 1)),
            ("attn_v.weight", [dim, 2], weight(rng, dim, 2, i == 2)),
            ("attn_output.weight", [dim, 2], weight(rng, dim, 2, i == 3)),
            ("ffn_norm.weight", [dim], rng.normal(1.0, 0.1, dim).astype(np.float32)),
            ("ffn_gate.weight", [dim, 2], weight(rng, dim, 2, i == 4)),
            ("ffn_up.weight", [dim, 2, 1] if i == 3 else [dim, 2], weight(rng, dim, 2, i == 5)),
            ("ffn_down.weight", [down_cols, 2], weight(rng, down_cols, 2, i == 6)),
        ]
        if i == 1 and not tied:
            layer.append(("attn_q_norm.weight", [64, 2], weight(rng, 64, 2, False)))
        tensors += [(f"blk.{i}.{name}", ne, values) for name, ne, values in layer]
    # Not llama-quantize's order (by layer, then name): blocks 10 and up
    # first, and names reversed, so the sort is exercised.
    tensors.sort(key=lambda t: (not t[0].startswith("blk.1"), t[0]), reverse=True)
    return metadata, tensors


def write_tiny_models(out: Path) -> list[Path]:
    paths = []
    for tied in (False, True):
        metadata, tensors = model_spec(tied)
        stem = "tiny-llama-tied" if tied else "tiny-llama"
        for suffix, ttype in (("f32", GGML_F32), ("f16", GGML_F16), ("bf16", GGML_BF16)):
            md = [(k, t, INPUT_FILE_TYPES[suffix] if k == "general.file_type" else v)
                  for k, t, v in metadata]
            packed = []
            for name, ne, values in tensors:
                # Norms and other 1-D tensors stay F32, as converters write them.
                kind = ttype if len([d for d in ne if d > 1]) >= 2 else GGML_F32
                packed.append((name, kind, ne, to_bytes(values, kind)))
            path = out / f"{stem}.{suffix}.gguf"
            write_gguf(path, md, packed)
            paths.append(path)
            print(f"wrote {path.relative_to(REPO) if path.is_relative_to(REPO) else path}"
                  f" ({path.stat().st_size} bytes)")
    return paths


# ---- llama-quantize through llama-cpp-python ---------------------------------

def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class QuantizeParams(ctypes.Structure):
    """llama.h's llama_model_quantize_params (llama-cpp-python 0.3.36's llama.cpp)."""
    _fields_ = [("nthread", ctypes.c_int32), ("ftype", ctypes.c_int), ("output_tensor_type", ctypes.c_int),
                ("token_embedding_type", ctypes.c_int), ("allow_requantize", ctypes.c_bool),
                ("quantize_output_tensor", ctypes.c_bool), ("only_copy", ctypes.c_bool),
                ("pure", ctypes.c_bool), ("keep_split", ctypes.c_bool), ("dry_run", ctypes.c_bool),
                ("imatrix", ctypes.c_void_p), ("kv_overrides", ctypes.c_void_p),
                ("tt_overrides", ctypes.c_void_p), ("prune_layers", ctypes.c_void_p),
                ("max_buf_size", ctypes.c_size_t)]


class Oracle:
    """llama_model_quantize from llama-cpp-python, or straight from the libllama.so
    of such a build (--libllama: the same code, without the Python package)."""

    def __init__(self, libllama: Path | None):
        if libllama is None:
            import llama_cpp
            self.version = f"llama-cpp-python {llama_cpp.__version__}"
            self.default_params = llama_cpp.llama_model_quantize_default_params
            self.quantize = lambda src, dst, params: llama_cpp.llama_model_quantize(src, dst, params)
            return
        for dep in ("libggml-base.so", "libggml-cpu.so", "libggml.so"):
            ctypes.CDLL(str(libllama.parent / dep), mode=ctypes.RTLD_GLOBAL)
        lib = ctypes.CDLL(str(libllama))
        lib.llama_model_quantize_default_params.restype = QuantizeParams
        lib.llama_model_quantize.argtypes = [ctypes.c_char_p, ctypes.c_char_p,
                                             ctypes.POINTER(QuantizeParams)]
        lib.llama_model_quantize.restype = ctypes.c_uint32
        self.version = "libllama.so of a llama-cpp-python build, called directly"
        self.default_params = lib.llama_model_quantize_default_params
        self.quantize = lambda src, dst, params: lib.llama_model_quantize(src, dst, ctypes.byref(params))


ORACLE: Oracle | None = None


def use_oracle(libllama: Path | None) -> Oracle:
    global ORACLE
    ORACLE = Oracle(libllama)
    return ORACLE


def llama_quantize(src: Path, dst: Path, type_name: str, options: dict, n_threads: int = 2) -> None:
    params = ORACLE.default_params()
    params.nthread = n_threads
    params.ftype = FILE_TYPES[type_name]
    params.allow_requantize = bool(options.get("allow_requantize", False))
    params.pure = bool(options.get("pure", False))
    params.quantize_output_tensor = not options.get("leave_output_tensor", False)
    if "output_tensor_type" in options:
        params.output_tensor_type = TYPE_IDS[options["output_tensor_type"].upper()]
    if "token_embedding_type" in options:
        params.token_embedding_type = TYPE_IDS[options["token_embedding_type"].upper()]
    status = ORACLE.quantize(str(src).encode(), str(dst).encode(), params)
    if status != 0:
        raise RuntimeError(f"llama_model_quantize {src.name} -> {type_name} failed ({status})")


QUANTIZE_TYPES = list(FILE_TYPES)

# Option sets beyond the plain type, on the untied F32 model unless named.
OPTION_CASES = [
    ("tiny-llama.f32.gguf", "Q4_K_M", {"pure": True}),
    ("tiny-llama.f32.gguf", "Q2_K", {"pure": True}),
    ("tiny-llama.f32.gguf", "Q4_K_M", {"leave_output_tensor": True}),
    ("tiny-llama.f32.gguf", "Q5_K_M", {"output_tensor_type": "q4_0"}),
    ("tiny-llama.f32.gguf", "Q3_K_M", {"token_embedding_type": "q8_0"}),
    ("tiny-llama.f16.gguf", "Q6_K", {"output_tensor_type": "f16", "token_embedding_type": "bf16"}),
    ("tiny-llama-tied.f32.gguf", "Q4_K_S", {"output_tensor_type": "q5_1"}),
    ("tiny-llama-tied.bf16.gguf", "F16", {"output_tensor_type": "q8_0"}),
]
# Requantization: (input case id, type, options); the input is a golden output.
REQUANTIZE_CASES = [
    ("tiny-llama.f32.gguf:Q4_K_M", "Q8_0", {"allow_requantize": True}),
    ("tiny-llama.f32.gguf:Q4_K_M", "Q5_K_S", {"allow_requantize": True}),
    ("tiny-llama.f32.gguf:Q4_K_M", "F16", {"allow_requantize": True}),
    ("tiny-llama-tied.f16.gguf:Q3_K_L", "Q4_0", {"allow_requantize": True}),
]


def case_id(input_name: str, type_name: str, options: dict) -> str:
    flags = ",".join(f"{k}={v}" for k, v in sorted(options.items()))
    return f"{input_name}:{type_name}" + (f":{flags}" if flags else "")


def make_cases(out: Path, inputs: list[Path], work: Path) -> list[dict]:
    cases = []
    outputs = {}

    def run(src: Path, input_name: str, type_name: str, options: dict) -> None:
        cid = case_id(input_name, type_name, options)
        dst = work / (hashlib.sha1(cid.encode()).hexdigest() + ".gguf")
        llama_quantize(src, dst, type_name, options)
        outputs[cid] = dst
        cases.append({"id": cid, "input": input_name, "type": type_name, "options": options,
                      "sha256": sha256_of(dst), "size": dst.stat().st_size})

    for src in inputs:
        for type_name in QUANTIZE_TYPES:
            run(src, src.name, type_name, {})
    for input_name, type_name, options in OPTION_CASES:
        run(out / input_name, input_name, type_name, options)
    for input_id, type_name, options in REQUANTIZE_CASES:
        run(outputs[input_id], input_id, type_name, options)
    return cases


def real_model_cases(model: Path, work: Path) -> list[dict]:
    """SmolLM2 requantized from its Q4_1 file: to F16 (the quality table's
    reference), then from that F16 copy to a few types."""
    cases = []
    f16 = work / "real-f16.gguf"
    llama_quantize(model, f16, "F16", {"allow_requantize": True})
    cases.append({"id": f"{model.name}:F16:allow_requantize=True", "input": model.name,
                  "type": "F16", "options": {"allow_requantize": True},
                  "sha256": sha256_of(f16), "size": f16.stat().st_size})
    for type_name in ("Q8_0", "Q4_K_M", "Q6_K"):
        dst = work / f"real-{type_name}.gguf"
        llama_quantize(f16, dst, type_name, {})
        cases.append({"id": f"{model.name}:F16:{type_name}", "input": f"{model.name}:F16",
                      "type": type_name, "options": {}, "sha256": sha256_of(dst),
                      "size": dst.stat().st_size})
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=REPO / "tests" / "data" / "quantize")
    parser.add_argument("--real-model", type=Path, default=None,
                        help="also record SmolLM2 requantized from this Q4_1 file")
    parser.add_argument("--libllama", type=Path, default=None,
                        help="call llama_model_quantize in this libllama.so (from a "
                             "llama-cpp-python build) instead of through the llama_cpp package")
    parser.add_argument("--inputs-only", action="store_true",
                        help="write the tiny models and stop (no oracle needed)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    inputs = write_tiny_models(args.out)
    if args.inputs_only:
        return

    use_oracle(args.libllama)
    golden_path = args.out / "quantize_goldens.json"
    previous = json.loads(golden_path.read_text()) if golden_path.exists() else {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cases = make_cases(args.out, inputs, work)
        real = previous.get("real_model", [])
        if args.real_model:
            real = real_model_cases(args.real_model, work)
    payload = {
        "generator": "scripts/goldens/quantize_goldens.py",
        "oracle": f"{ORACLE.version} (llama_model_quantize)",
        "seed": SEED,
        "inputs": {p.name: sha256_of(p) for p in inputs},
        "cases": cases,
        "real_model": real,
    }
    golden_path.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"wrote {golden_path} ({len(cases)} cases, {len(real)} real-model cases)")


if __name__ == "__main__":
    sys.exit(main())
