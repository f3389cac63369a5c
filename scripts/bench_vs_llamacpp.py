#!/usr/bin/env python3
"""ladder bench-model and llama.cpp side by side: pp and tg tokens/s on the same
GGUF file, machine and thread count, and the ratio ladder / llama.cpp.

llama.cpp runs through llama-cpp-python's low-level API the way llama-bench
measures: a fresh context cache per repetition, pp = one llama_decode of
n_prompt random tokens (BOS first), tg = n_gen single-token decodes of random
tokens, each after a warm-up. ladder runs `ladder bench-model --json`, which
measures the same two tests, once per kernel path asked for (LADDER_CPU). The
engines alternate round by round so both see the same machine load.

Build llama.cpp for this CPU, as ladder's run-time dispatch is (the script
prints which instruction sets llama.cpp was built with). Offline tool, not
part of CI:

    CMAKE_ARGS="-DGGML_NATIVE=ON" pip install llama-cpp-python
    python scripts/bench_vs_llamacpp.py [-m MODEL ...] [-t 2] [-p 512] [-n 128]
        [-r 5] [--rounds 3] [--paths avx512,avx2] [--json results.json]
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODEL = os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")


class LlamaCpp:
    """One model and context of llama.cpp, measured as llama-bench does."""

    def __init__(self, llama_cpp, model_path, n_prompt, n_gen, threads):
        self.lib = llama_cpp
        llama_cpp.llama_backend_init()
        self.model = llama_cpp.llama_model_load_from_file(
            model_path.encode(), llama_cpp.llama_model_default_params())
        if not self.model:
            raise SystemExit(f"llama.cpp could not load {model_path}")
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = n_prompt + n_gen + 16
        params.n_batch = max(n_prompt, 1)
        params.n_ubatch = max(n_prompt, 1)
        params.n_threads = threads
        params.n_threads_batch = threads
        self.ctx = llama_cpp.llama_init_from_model(self.model, params)
        vocab = llama_cpp.llama_model_get_vocab(self.model)
        self.n_vocab = llama_cpp.llama_vocab_n_tokens(vocab)
        self.bos = llama_cpp.llama_vocab_bos(vocab)
        self.add_bos = llama_cpp.llama_vocab_get_add_bos(vocab)
        self.rng = random.Random(1)

    def close(self):
        self.lib.llama_free(self.ctx)
        self.lib.llama_model_free(self.model)

    def _decode(self, tokens):
        array = (self.lib.llama_token * len(tokens))(*tokens)
        if self.lib.llama_decode(self.ctx, self.lib.llama_batch_get_one(array, len(tokens))) != 0:
            raise SystemExit("llama_decode failed")

    def _clear(self):
        self.lib.llama_memory_clear(self.lib.llama_get_memory(self.ctx), True)

    def pp_seconds(self, n_prompt):
        self._clear()
        tokens = [self.rng.randrange(self.n_vocab) for _ in range(n_prompt)]
        if self.add_bos:
            tokens[0] = self.bos
        start = time.perf_counter()
        self._decode(tokens)
        self.lib.llama_synchronize(self.ctx)
        return time.perf_counter() - start

    def tg_seconds(self, n_gen):
        self._clear()
        token = self.bos if self.add_bos else self.rng.randrange(self.n_vocab)
        start = time.perf_counter()
        for _ in range(n_gen):
            self._decode([token])
            self.lib.llama_synchronize(self.ctx)
            token = self.rng.randrange(self.n_vocab)
        return time.perf_counter() - start


def llama_cpp_round(engine, n_prompt, n_gen, repetitions):
    """Tokens/s samples of each test after one warm-up run."""
    samples = {}
    if n_prompt > 0:
        engine.pp_seconds(n_prompt)
        samples["pp"] = [n_prompt / engine.pp_seconds(n_prompt) for _ in range(repetitions)]
    if n_gen > 0:
        engine.tg_seconds(n_gen)
        samples["tg"] = [n_gen / engine.tg_seconds(n_gen) for _ in range(repetitions)]
    return samples


def ladder_round(ladder, model_path, n_prompt, n_gen, repetitions, threads, path):
    env = dict(os.environ)
    if path:
        env["LADDER_CPU"] = path
    out = subprocess.run(
        [ladder, "bench-model", "-m", model_path, "-p", str(n_prompt), "-n", str(n_gen),
         "-r", str(repetitions), "-t", str(threads), "--json"],
        check=True, capture_output=True, text=True, env=env)
    samples, records = {}, {}
    for record in json.loads(out.stdout):
        test = "pp" if record["n_prompt"] > 0 else "tg"
        samples[test] = record["samples_ts"]
        records[test] = record
    return samples, records


def summary(values):
    return statistics.mean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def bench_model(args, llama_cpp, model_path):
    engine = LlamaCpp(llama_cpp, model_path, args.n_prompt, args.n_gen, args.threads)
    paths = args.paths.split(",") if args.paths else [""]
    samples = {"llama.cpp": {}}
    ladder_records = {}
    try:
        for _ in range(args.rounds):
            for test, values in llama_cpp_round(engine, args.n_prompt, args.n_gen,
                                                args.repetitions).items():
                samples["llama.cpp"].setdefault(test, []).extend(values)
            for path in paths:
                round_samples, records = ladder_round(
                    args.ladder, model_path, args.n_prompt, args.n_gen, args.repetitions,
                    args.threads, path)
                ladder_records[path] = records
                for test, values in round_samples.items():
                    samples.setdefault(path, {}).setdefault(test, []).extend(values)
    finally:
        engine.close()
    rows = []
    for path in paths:
        for test, size in (("pp", args.n_prompt), ("tg", args.n_gen)):
            if test not in samples[path]:
                continue
            ladder_mean, ladder_sd = summary(samples[path][test])
            llama_mean, llama_sd = summary(samples["llama.cpp"][test])
            record = ladder_records[path][test]
            rows.append({
                "model_filename": os.path.basename(model_path),
                "model_type": record["model_type"],
                "n_threads": args.threads,
                "test": f"{test}{size}",
                "cpu_path": record["cpu_path"],
                "ladder_ts": ladder_mean, "ladder_stddev_ts": ladder_sd,
                "llama_cpp_ts": llama_mean, "llama_cpp_stddev_ts": llama_sd,
                "ratio": ladder_mean / llama_mean,
                "ceiling_ts": record["ceiling_ts"],
                "ladder_ceiling_pct": 100.0 * ladder_mean / record["ceiling_ts"],
                "llama_cpp_ceiling_pct": 100.0 * llama_mean / record["ceiling_ts"],
                "ladder_samples_ts": samples[path][test],
                "llama_cpp_samples_ts": samples["llama.cpp"][test],
                "build_commit": record.get("build_commit", ""),
            })
    return rows


def print_table(rows, args, llama_cpp_build):
    print(f"{args.threads} threads, {args.rounds} rounds x {args.repetitions} repetitions "
          "per engine, alternating")
    print(f"llama.cpp built with: {llama_cpp_build}")
    print("| model                | test  | ladder path | ladder t/s       | llama.cpp t/s    "
          "| ratio | ceiling t/s | ladder % | llama.cpp % |")
    print("| -------------------- | ----- | ----------- | ---------------: | ---------------: "
          "| ----: | ----------: | -------: | ----------: |")
    for r in rows:
        ladder = f"{r['ladder_ts']:.2f} ± {r['ladder_stddev_ts']:.2f}"
        llama = f"{r['llama_cpp_ts']:.2f} ± {r['llama_cpp_stddev_ts']:.2f}"
        print(f"| {r['model_type']:20} | {r['test']:5} | {r['cpu_path']:11} | {ladder:>16} | "
              f"{llama:>16} | {r['ratio']:5.2f} | {r['ceiling_ts']:11.1f} | "
              f"{r['ladder_ceiling_pct']:7.1f}% | {r['llama_cpp_ceiling_pct']:10.1f}% |")
    print("ceiling: tg = memory read bandwidth / weight bytes per token; pp = the integer "
          "dot kernels' measured peak (ladder bench-model)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-m", "--model", action="append",
                        help="GGUF file (repeat for several; default SmolLM2-135M-Instruct Q4_1)")
    parser.add_argument("--ladder", default=os.path.join(ROOT, "build", "bin", "ladder"))
    parser.add_argument("-t", "--threads", type=int, default=2)
    parser.add_argument("-p", "--n-prompt", type=int, default=512)
    parser.add_argument("-n", "--n-gen", type=int, default=128)
    parser.add_argument("-r", "--repetitions", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternations of the two engines (samples pool over rounds)")
    parser.add_argument("--paths",
                        help="ladder kernel paths to run, comma-separated (LADDER_CPU values: "
                             "scalar, avx2, avx512; default: the best this CPU runs)")
    parser.add_argument("--json", help="also write the rows, with every sample, to this file")
    args = parser.parse_args()
    if args.n_prompt <= 0 and args.n_gen <= 0:
        parser.error("nothing to measure: -p and -n are both 0")

    import llama_cpp

    rows = []
    for model_path in args.model or [DEFAULT_MODEL]:
        rows += bench_model(args, llama_cpp, os.path.abspath(model_path))
    llama_cpp_build = llama_cpp.llama_print_system_info().decode().strip()
    print_table(rows, args, llama_cpp_build)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
