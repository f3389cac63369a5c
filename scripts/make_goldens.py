#!/usr/bin/env python3
"""Builds the fidelity goldens under tests/data/ with llama.cpp as the oracle.

Offline only: it needs llama-cpp-python (which compiles llama.cpp), gguf,
numpy and jinja2 in the running Python; the tests read the committed results
and never need the oracle. Usage:
    python scripts/make_goldens.py [--model models/X.gguf] [--only model,tokenizer,...]
"""

import argparse
import hashlib
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

DATA = os.path.join(ROOT, "tests", "data")
INPUTS = os.path.join(DATA, "inputs")


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_json(path, payload):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(payload, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {os.path.relpath(path, ROOT)}")


def model_goldens(model_path):
    from goldens import model_goldens as mg

    result = mg.make(
        model_path,
        os.path.join(INPUTS, "model_prompts.json"),
        os.path.join(INPUTS, "perplexity_gpl3.txt"),
    )
    result["model"] = os.path.basename(model_path)
    result["model_sha256"] = sha256_of(model_path)
    result["perplexity"]["text"] = (
        "tests/data/inputs/perplexity_gpl3.txt: the GNU GPL v3 text as Debian's base-files "
        "package ships it (/usr/share/common-licenses/GPL-3)"
    )
    stem = os.path.splitext(os.path.basename(model_path))[0]
    write_json(os.path.join(DATA, stem, "model_goldens.json"), result)


def kv_cache_goldens(model_path):
    from goldens import kv_cache_goldens as kg

    stem = os.path.splitext(os.path.basename(model_path))[0]
    with open(os.path.join(DATA, stem, "model_goldens.json"), encoding="utf-8") as f:
        model = json.load(f)
    result = kg.make(model_path, model, os.path.join(INPUTS, "perplexity_gpl3.txt"))
    result["model"] = os.path.basename(model_path)
    result["model_sha256"] = sha256_of(model_path)
    print(kg.summary(result))
    write_json(os.path.join(DATA, stem, "kv_q8_0_goldens.json"), result)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default=os.path.join(ROOT, "models",
                                                        "SmolLM2-135M-Instruct.Q4_1.gguf"))
    parser.add_argument("--only", default="model",
                        help="comma list of: model, kv_cache (needs the model goldens)")
    args = parser.parse_args()
    parts = set(args.only.split(","))
    if "model" in parts:
        model_goldens(args.model)
    if "kv_cache" in parts:
        kv_cache_goldens(args.model)


if __name__ == "__main__":
    main()
