#!/usr/bin/env python3
"""Decode speed with a quantized KV cache against f16 at a long context:
`ladder bench-model`'s tg test at depth D (D tokens already in the cache, so
every generated token reads all of them) for each --kv-cache-dtype, in
alternating rounds so that a noisy machine slows every variant alike.
Reports each variant's median tokens/s, and the median over rounds of each
variant's speed over f16's in the same round. --ladder takes several
binaries, comma-separated (a build before a change and one after): each runs
every type in every round, and each gets its own ratios.

    scripts/bench_kv_cache_dtype.py [-m MODEL] [--types f16,q8_0] [-d 4096] [-n 32] [--rounds 5]
        [--attention exact] [-t 2] [--ladder BIN[,BIN...]]
"""

import argparse
import json
import os
import statistics
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tg_speed(args, ladder, kv_type):
    command = [ladder, "bench-model", "-m", args.model, "-p", "0", "-n", str(args.n_gen),
               "-d", str(args.depth), "-r", str(args.repetitions), "-t", str(args.threads),
               "--attention", args.attention, "--kv-cache-dtype", kv_type, "--json"]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    records = json.loads(out)
    assert len(records) == 1 and records[0]["kv_cache_dtype"] == kv_type, records
    return records[0]["avg_ts"]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ladder", default=os.path.join(ROOT, "build", "bin", "ladder"))
    parser.add_argument("-m", "--model",
                        default=os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf"))
    parser.add_argument("--types", default="f16,q8_0")
    parser.add_argument("-d", "--depth", type=int, default=4096)
    parser.add_argument("-n", "--n-gen", type=int, default=32)
    parser.add_argument("-r", "--repetitions", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--attention", default="exact")
    parser.add_argument("-t", "--threads", type=int, default=2)
    args = parser.parse_args()
    types = args.types.split(",")
    ladders = args.ladder.split(",")
    variants = [(ladder, t) for ladder in ladders for t in types]
    speeds = {v: [] for v in variants}

    def name(variant):
        ladder, kv_type = variant
        return kv_type if len(ladders) == 1 else f"{ladder} {kv_type}"

    for round_index in range(args.rounds):
        # Alternate which variant goes first, so neither always follows the other.
        order = variants if round_index % 2 == 0 else list(reversed(variants))
        for variant in order:
            speeds[variant].append(tg_speed(args, *variant))
        print(f"round {round_index + 1}: " +
              ", ".join(f"{name(v)} {speeds[v][-1]:.2f} t/s" for v in variants), flush=True)
    print(f"\n{os.path.basename(args.model)}, tg{args.n_gen} @ d{args.depth}, "
          f"--attention {args.attention}, {args.threads} threads, {args.rounds} rounds")
    for ladder in ladders:
        if len(ladders) > 1:
            print(ladder)
        base = speeds[(ladder, types[0])]
        for kv_type in types:
            own = speeds[(ladder, kv_type)]
            ratios = [s / b for s, b in zip(own, base)]
            print(f"  {kv_type:5s} median {statistics.median(own):7.2f} t/s, "
                  f"{statistics.median(ratios):.3f}x {types[0]} "
                  f"(rounds {min(ratios):.3f}..{max(ratios):.3f})")


if __name__ == "__main__":
    main()
