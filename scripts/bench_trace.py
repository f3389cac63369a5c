#!/usr/bin/env python3
"""What tracing costs in decode: tg128 (128 tokens, one sequence, `ladder
run --chat`) with tracing compiled in but off, and with --trace on, against a
baseline binary without tracing, in alternating rounds so that a noisy
machine slows all three alike. Reports, per variant, the median decode speed
(wall clock) and the median CPU seconds of the whole process (user + system,
from wait4), which other processes on a shared machine disturb far less than
the wall clock; and the ratios to the baseline.

    scripts/bench_trace.py --baseline OLD/bin/ladder [--ladder build/bin/ladder] [-t 1] [--rounds 9]
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile

PROMPT = "Write a long story about a dragon who learns to read, with many chapters."


def one_run(binary, model, threads, trace=None):
    command = [binary, "run", "-m", model, "-t", str(threads), "--chat", "-p", PROMPT,
               "-n", "128", "--temp", "0", "--json"]
    if trace:
        command += ["--trace", trace]
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, f"{command} failed"
        out.seek(0)
        result = json.loads(out.read())
    assert len(result["tokens"]) == 128, "the reply ended before 128 tokens"
    tokens_per_second = (len(result["tokens"]) - 1) / result["generation_seconds"]
    return tokens_per_second, usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ladder", default="build/bin/ladder")
    parser.add_argument("--baseline", required=True, help="a ladder binary without tracing")
    parser.add_argument("-m", "--model", default="models/SmolLM2-135M-Instruct.Q4_1.gguf")
    parser.add_argument("-t", "--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    variants = {"baseline": (args.baseline, False), "off": (args.ladder, False),
                "on": (args.ladder, True)}
    speed = {name: [] for name in variants}
    cpu = {name: [] for name in variants}
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        for _ in range(args.rounds):
            for name, (binary, traced) in variants.items():
                tps, seconds = one_run(binary, args.model, args.threads, trace if traced else None)
                speed[name].append(tps)
                cpu[name].append(seconds)
    base_speed = statistics.median(speed["baseline"])
    base_cpu = statistics.median(cpu["baseline"])
    print(f"tg128, -t {args.threads}, {args.rounds} alternating rounds (medians)")
    for name in variants:
        s = statistics.median(speed[name])
        c = statistics.median(cpu[name])
        print(f"{name:8} {s:6.1f} tok/s ({s / base_speed:.3f} of baseline)   "
              f"{c:6.3f} CPU s ({c / base_cpu:.3f} of baseline)")


if __name__ == "__main__":
    main()
