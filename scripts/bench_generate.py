#!/usr/bin/env python3
"""Aggregate throughput of `ladder generate` at several concurrencies.

Each run submits C requests of the same shape (a prompt of P token ids and
exactly N generated tokens, ignore_eos) in one `ladder generate` call, so the
engine batches them; the output rate at C=32 over the rate at C=1 is how much
batching pays on this machine. Two rates are reported: output tokens over
the whole run (prefill included), and the decode rate, the sum over requests
of 1 / TPOT (their time per output token after the first): with every
sequence decoding in each step, that is the tokens a step makes per second.
Runs alternate by concurrency and the best of the rounds is kept, which
filters out a noisy neighbour.

    python3 scripts/bench_generate.py --threads 2 --concurrency 1,32 --rounds 3
"""
import argparse
import json
import os
import random
import re
import subprocess
import tempfile

SUMMARY = re.compile(r"generate: (\d+) requests, (\d+) prompt \+ (\d+) generated tokens in ([\d.]+) s")
STEPS = re.compile(r"forward ([\d.]+) ms, sampling ([\d.]+) ms, scheduling and outputs ([\d.]+) us")


def write_requests(path, n_requests, prompt_tokens, output_tokens, seed):
    rng = random.Random(seed)
    with open(path, "w") as f:
        for _ in range(n_requests):
            # Token ids, not text: every prompt has exactly prompt_tokens tokens.
            prompt = [rng.randrange(1000, 30000) for _ in range(prompt_tokens)]
            f.write(json.dumps({"prompt": prompt, "max_tokens": output_tokens,
                                "temperature": 0, "ignore_eos": True}) + "\n")


def run(ladder, model, threads, concurrency, prompt_tokens, output_tokens, extra):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "requests.jsonl")
        results = os.path.join(tmp, "results.jsonl")
        write_requests(path, concurrency, prompt_tokens, output_tokens, seed=concurrency)
        command = [ladder, "generate", "-i", path, "-o", results, "--no-progress",
                   "-t", str(threads), "--max-num-seqs", str(max(concurrency, 1))] + extra
        if model:
            command += ["-m", model]
        result = subprocess.run(command, capture_output=True, text=True, check=True)
        with open(results) as f:
            tpots = [json.loads(line)["timings"]["tpot_s"] for line in f]
    summary = SUMMARY.search(result.stderr)
    steps = STEPS.search(result.stderr)
    _, _, generated, seconds = summary.groups()
    return {"output_tps": int(generated) / float(seconds), "seconds": float(seconds),
            "decode_tps": sum(1.0 / t for t in tpots if t > 0),
            "forward_ms": float(steps.group(1)), "sampling_ms": float(steps.group(2)),
            "overhead_us": float(steps.group(3))}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ladder", default="build/bin/ladder")
    parser.add_argument("-m", "--model", default="")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--concurrency", default="1,32")
    parser.add_argument("--prompt-tokens", type=int, default=128)
    parser.add_argument("--output-tokens", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("extra", nargs="*", help="more flags for ladder generate (after --)")
    args = parser.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    best = {}
    for _ in range(args.rounds):
        for c in levels:
            r = run(args.ladder, args.model, args.threads, c, args.prompt_tokens, args.output_tokens, args.extra)
            if c not in best or r["decode_tps"] > best[c]["decode_tps"]:
                best[c] = r
    base = best[levels[0]]["output_tps"]
    base_decode = best[levels[0]]["decode_tps"]
    print(f"prompt {args.prompt_tokens} tokens, output {args.output_tokens} tokens, {args.threads} threads, "
          f"best of {args.rounds}")
    print("| concurrency | decode tok/s | vs first | output tok/s (prefill included) | vs first | wall s "
          "| forward ms/step | sampling ms/step | scheduling us/step |")
    print("|---|---|---|---|---|---|---|---|---|")
    for c in levels:
        r = best[c]
        print(f"| {c} | {r['decode_tps']:.1f} | {r['decode_tps'] / base_decode:.2f}x | "
              f"{r['output_tps']:.1f} | {r['output_tps'] / base:.2f}x | {r['seconds']:.2f} | "
              f"{r['forward_ms']:.2f} | {r['sampling_ms']:.2f} | {r['overhead_us']:.1f} |")


if __name__ == "__main__":
    main()
