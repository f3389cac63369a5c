#!/usr/bin/env python3
"""Tokenizer goldens: llama.cpp's token ids for every corpus text.

Tokenizes each case of tests/data/tokenizer_corpus.json with llama-cpp-python
(the reference: llama.cpp on the same GGUF file, vocabulary only) under every
add_special/parse_special combination, and writes
tests/data/<model stem>/tokenizer_goldens.json, which the unit test
tests/unit/tokenizer/tokenizer_goldens_test.cpp compares ladder against.

    python scripts/goldens/tokenizer_goldens.py models/SmolLM2-135M-Instruct.Q4_1.gguf

Needs a Python with llama_cpp importable (pip install llama-cpp-python).
"""

import argparse
import hashlib
import json
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
FLAGS = [
    {"add_special": True, "parse_special": False},
    {"add_special": False, "parse_special": False},
    {"add_special": True, "parse_special": True},
    {"add_special": False, "parse_special": True},
]


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def case_bytes(case):
    if "hex" in case:
        return bytes.fromhex(case["hex"])
    return case["text"].encode("utf-8")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=pathlib.Path, help="GGUF model file")
    parser.add_argument("--corpus", type=pathlib.Path,
                        default=REPO / "tests/data/tokenizer_corpus.json")
    parser.add_argument("--out", type=pathlib.Path,
                        help="default: tests/data/<model stem>/tokenizer_goldens.json")
    args = parser.parse_args()

    import llama_cpp  # imported late so --help works without it

    corpus = json.loads(args.corpus.read_text(encoding="utf-8"))
    llm = llama_cpp.Llama(str(args.model), vocab_only=True, verbose=False)

    results = []
    for case in corpus["cases"]:
        text = case_bytes(case)
        for flags in FLAGS:
            ids = llm.tokenize(text, add_bos=flags["add_special"], special=flags["parse_special"])
            results.append({"name": case["name"], "n_bytes": len(text), **flags, "ids": ids})

    out = args.out or REPO / "tests/data" / args.model.stem / "tokenizer_goldens.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    header = {
        "model_file": args.model.name,
        "model_sha256": sha256_of(args.model),
        "llama_cpp_python_version": llama_cpp.__version__,
        "corpus_file": "tests/data/tokenizer_corpus.json",
        "corpus_sha256": sha256_of(args.corpus),
        "generated_by": "scripts/goldens/tokenizer_goldens.py",
        "flags": FLAGS,
    }
    # One result per line keeps the file reviewable and its diffs small.
    lines = ["{"]
    for key, value in header.items():
        lines.append(f"  {json.dumps(key)}: {json.dumps(value)},")
    lines.append('  "results": [')
    lines.append(",\n".join("    " + json.dumps(r, ensure_ascii=False) for r in results))
    lines.append("  ]")
    lines.append("}")
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(results)} results for {len(corpus['cases'])} texts to {out}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
