#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into tests/fuzz/corpus/<name>/:
small hand-built GGUF files, the tokenizer goldens' texts and ids, and
typical OpenAI request bodies. Each file is named by the SHA-1 of its bytes,
as libFuzzer names what it finds. Run it again after changing a seed list;
the fuzzers add what they discover to a corpus of their own, not to these.

    python3 tests/fuzz/make_seeds.py
"""

import hashlib
import json
import os
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")

# GGUF value types (ggml docs/gguf.md).
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
GGML_F32, GGML_Q8_0 = 0, 8


def write_seed(target, data):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def gguf_string(text):
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def gguf_value(kind, value):
    scalar = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f",
              BOOL: "<?", U64: "<Q", I64: "<q", F64: "<d"}
    if kind == STRING:
        return gguf_string(value)
    if kind == ARRAY:
        element_kind, items = value
        out = struct.pack("<IQ", element_kind, len(items))
        return out + b"".join(gguf_value(element_kind, item) for item in items)
    return struct.pack(scalar[kind], value)


def gguf_file(kvs, tensors=(), alignment=32, version=3):
    """kvs: [(key, kind, value)]; tensors: [(name, dims, ggml_type, data bytes)]."""
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs))
    for key, kind, value in kvs:
        out += gguf_string(key) + struct.pack("<I", kind) + gguf_value(kind, value)
    offset = 0
    layout = []
    for name, dims, ggml_type, data in tensors:
        out += gguf_string(name) + struct.pack("<I", len(dims))
        out += b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", ggml_type, offset)
        layout.append((offset, data))
        offset += (len(data) + alignment - 1) // alignment * alignment
    out += b"\0" * (-len(out) % alignment)
    data_start = len(out)
    for at, data in layout:
        out += b"\0" * (data_start + at - len(out)) + data
    return out


def f32s(n, value=0.5):
    return struct.pack(f"<{n}f", *([value] * n))


def tiny_llama():
    """A one-layer Llama small enough to read, so the model loader is reached."""
    dim, ffn, vocab = 8, 16, 3
    kvs = [
        ("general.architecture", STRING, "llama"),
        ("general.alignment", U32, 32),
        ("llama.block_count", U32, 1),
        ("llama.context_length", U32, 32),
        ("llama.embedding_length", U32, dim),
        ("llama.feed_forward_length", U32, ffn),
        ("llama.attention.head_count", U32, 2),
        ("llama.attention.head_count_kv", U32, 2),
        ("llama.attention.layer_norm_rms_epsilon", F32, 1e-5),
        ("llama.rope.freq_base", F32, 10000.0),
        ("tokenizer.ggml.model", STRING, "gpt2"),
        ("tokenizer.ggml.pre", STRING, "default"),
        ("tokenizer.ggml.tokens", ARRAY, (STRING, ["a", "b", "ab"])),
        ("tokenizer.ggml.token_type", ARRAY, (I32, [1, 1, 1])),
        ("tokenizer.ggml.merges", ARRAY, (STRING, ["a b"])),
        ("tokenizer.ggml.bos_token_id", U32, 0),
        ("tokenizer.ggml.eos_token_id", U32, 1),
    ]
    tensors = [("token_embd.weight", [dim, vocab], GGML_F32, f32s(dim * vocab)),
               ("output_norm.weight", [dim], GGML_F32, f32s(dim, 1.0)),
               ("blk.0.attn_norm.weight", [dim], GGML_F32, f32s(dim, 1.0)),
               ("blk.0.ffn_norm.weight", [dim], GGML_F32, f32s(dim, 1.0))]
    for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
        tensors.append((f"blk.0.{name}.weight", [dim, dim], GGML_F32, f32s(dim * dim)))
    tensors += [("blk.0.ffn_gate.weight", [dim, ffn], GGML_F32, f32s(dim * ffn)),
                ("blk.0.ffn_up.weight", [dim, ffn], GGML_F32, f32s(dim * ffn)),
                ("blk.0.ffn_down.weight", [ffn, dim], GGML_F32, f32s(dim * ffn))]
    return gguf_file(kvs, tensors)


def gguf_seeds():
    write_seed("gguf_parser", gguf_file([]))
    write_seed("gguf_parser", gguf_file([], version=2))
    write_seed("gguf_parser", gguf_file([
        ("u8", U8, 7), ("i8", I8, -3), ("u16", U16, 7), ("i16", I16, -7), ("u32", U32, 1),
        ("i32", I32, -1), ("f32", F32, 2.5), ("flag", BOOL, True), ("name", STRING, "x"),
        ("u64", U64, 1 << 40), ("i64", I64, -9), ("f64", F64, 0.25),
        ("list", ARRAY, (U32, [1, 2, 3])),
        ("nested", ARRAY, (ARRAY, [(I32, [1]), (STRING, ["y"])])),
    ]))
    q8_block = struct.pack("<e", 0.1) + bytes(range(32))
    write_seed("gguf_parser", gguf_file(
        [("general.architecture", STRING, "llama"), ("general.alignment", U32, 16)],
        [("f", [4], GGML_F32, f32s(4)), ("q", [32, 2], GGML_Q8_0, q8_block * 2)],
        alignment=16))
    write_seed("gguf_parser", tiny_llama())


def tokenizer_seeds():
    with open(os.path.join(ROOT, "tests", "data", "tokenizer_corpus.json")) as f:
        cases = json.load(f)["cases"]
    for i, case in enumerate(cases):
        text = bytes.fromhex(case["hex"]) if "hex" in case else case["text"].encode()
        # Every flags value in turn: model, add_special, parse_special.
        write_seed("tokenizer_encode", bytes([i % 8]) + text)
    for text in ("<|im_start|>user\nHi<|im_end|>\n", "<start_of_turn>user\nHi<end_of_turn>\n"):
        for flags in (4, 5, 6, 7):
            write_seed("tokenizer_encode", bytes([flags]) + text.encode())

    for model, flag in (("SmolLM2-135M-Instruct.Q4_1", 0), ("gemma-3-270m-q4_k_m", 1)):
        with open(os.path.join(ROOT, "tests", "data", model, "tokenizer_goldens.json")) as f:
            results = json.load(f)["results"]
        seen = set()
        for result in results:
            ids = tuple(result["ids"])
            if not ids or ids in seen or not result["parse_special"] or len(seen) >= 40:
                continue
            seen.add(ids)
            render = 2 if result["add_special"] else 0
            write_seed("tokenizer_decode",
                       bytes([flag | render]) + struct.pack(f"<{len(ids)}I", *ids))
    # Ids out of range, taken as they come.
    write_seed("tokenizer_decode", bytes([4]) + struct.pack("<3i", 1, -1, 1 << 30))


def request_seeds():
    chat = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi!"}]
    bodies = [
        (0, {"prompt": "Once upon a time", "max_tokens": 16}),
        (0, {"prompt": ["a", "b"], "n": 2, "seed": 7, "temperature": 0.5}),
        (0, {"prompt": [1, 2, 3], "echo": True, "stop": ["\n", "."]}),
        (0, {"prompt": [[1, 2], [3]], "logprobs": 2, "logit_bias": {"15": -100}}),
        (0, {"prompt": "x", "stop_token_ids": [2, 3], "ignore_eos": True, "top_k": -1,
             "top_p": 0.9, "min_p": 0.1, "repetition_penalty": 1.1, "cache_salt": "s"}),
        (0, {"prompt": "x", "stream": True, "stream_options": {"include_usage": True},
             "model": "m", "user": "u", "max_completion_tokens": 4}),
        (1, {"messages": chat, "max_tokens": 32}),
        (1, {"messages": chat, "logprobs": True, "top_logprobs": 3, "n": 3}),
        (1, {"messages": [{"role": "developer", "content": [{"type": "text", "text": "x"}]},
                          {"role": "user", "content": "y"}, {"role": "assistant"}]}),
        (1, {"messages": [{"role": "user", "content": "Hi"}], "frequency_penalty": 1,
             "presence_penalty": -1, "stop": "END"}),
    ]
    for endpoint, body in bodies:
        write_seed("openai_request", bytes([endpoint]) + json.dumps(body).encode())


if __name__ == "__main__":
    gguf_seeds()
    tokenizer_seeds()
    request_seeds()
    for target in sorted(os.listdir(CORPUS)):
        print(f"{target}: {len(os.listdir(os.path.join(CORPUS, target)))} seeds")
