#!/usr/bin/env python3
"""Side-by-side speed of ladder and llama.cpp on the same GGUF file, machine and
thread count: prefill tokens/s for a prompt and decode tokens/s for greedy
generation, alternating the two engines so both see the same machine load.

Offline tool: needs llama-cpp-python (as scripts/make_goldens.py does).
    python scripts/compare_llama_cpp.py [--model M] [--threads 2] [--prompt-tokens 512]
"""

import argparse
import json
import os
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def llama_cpp_run(llama_cpp, llm, prompt_tokens, n_decode):
    llm.reset()
    start = time.perf_counter()
    llm.eval(prompt_tokens)
    prefill = time.perf_counter() - start
    import numpy as np

    n_vocab = llm.n_vocab()
    start = time.perf_counter()
    for _ in range(n_decode):
        last = np.ctypeslib.as_array(llama_cpp.llama_get_logits(llm.ctx), shape=(n_vocab,))
        llm.eval([int(last.argmax())])
    decode = time.perf_counter() - start
    return len(prompt_tokens) / prefill, n_decode / decode


def ladder_run(ladder, model, prompt_tokens, n_decode, threads):
    text_ids = json.dumps(prompt_tokens)
    # logprobs --batch-prefix computes the prompt in one pass, then one token
    # per step, like generation; timing it brackets the two phases.
    start = time.perf_counter()
    subprocess.run([ladder, "logprobs", "-m", model, "--tokens", text_ids, "--top", "1",
                    "-t", str(threads)], check=True, capture_output=True)
    prefill = time.perf_counter() - start
    out = subprocess.run([ladder, "run", "-m", model, "--temp", "0", "-n", str(n_decode + 1),
                          "--json", "-t", str(threads), "-p", "The history of the"],
                         check=True, capture_output=True, text=True)
    result = json.loads(out.stdout)
    decode_steps = len(result["tokens"]) - 1
    return len(prompt_tokens) / prefill, decode_steps / result["generation_seconds"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=os.path.join(ROOT, "models",
                                                        "SmolLM2-135M-Instruct.Q4_1.gguf"))
    parser.add_argument("--ladder", default=os.path.join(ROOT, "build", "bin", "ladder"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prompt-tokens", type=int, default=512)
    parser.add_argument("--decode-tokens", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    import llama_cpp

    llm = llama_cpp.Llama(model_path=args.model, n_ctx=2048, n_batch=512, n_threads=args.threads,
                          n_threads_batch=args.threads,
                          verbose=False)
    with open(os.path.join(ROOT, "tests", "data", "inputs", "perplexity_gpl3.txt")) as f:
        prompt = llm.tokenize(f.read().encode(), add_bos=False)[: args.prompt_tokens]
    best = {"ladder": [0.0, 0.0], "llama.cpp": [0.0, 0.0]}
    for _ in range(args.rounds):
        for name, speeds in (
            ("llama.cpp", llama_cpp_run(llama_cpp, llm, prompt, args.decode_tokens)),
            ("ladder", ladder_run(args.ladder, args.model, prompt, args.decode_tokens,
                                  args.threads)),
        ):
            best[name] = [max(a, b) for a, b in zip(best[name], speeds)]
    print(f"model {os.path.basename(args.model)}, {args.threads} threads, best of {args.rounds}")
    print(f"{'engine':10} {'prefill tok/s':>14} {'decode tok/s':>13}")
    for name, (prefill, decode) in best.items():
        print(f"{name:10} {prefill:14.1f} {decode:13.1f}")
    ratio = [a / b for a, b in zip(best["ladder"], best["llama.cpp"])]
    print(f"{'ratio':10} {ratio[0]:14.2f} {ratio[1]:13.2f}   (ladder / llama.cpp)")


if __name__ == "__main__":
    main()
