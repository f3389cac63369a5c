#!/usr/bin/env python3
"""ladder bench-model and llama.cpp side by side: pp and tg tokens/s on the same
GGUF file, machine and thread count, at one or more KV depths, and the ratio
ladder / llama.cpp.

llama.cpp runs through llama-cpp-python's low-level API the way llama-bench
measures: pp = one llama_decode of n_prompt random tokens (BOS first), tg =
n_gen single-token decodes of random tokens, each after a warm-up, each on
top of n_depth tokens already in the cache (llama-bench's -d: the depth is
filled by an untimed prompt pass, saved once and restored before every run).
It runs once per flash-attention setting asked for (--fa 0,1 as llama-bench's
-fa). ladder runs `ladder bench-model --json -d ...`, which measures the same
tests, once per kernel path (LADDER_CPU) and attention path (--attention)
asked for. The engines alternate round by round so both see the same load.

Build llama.cpp for this CPU, as ladder's run-time dispatch is (the script
prints which instruction sets llama.cpp was built with). Offline tool, not
part of CI:

    CMAKE_ARGS="-DGGML_NATIVE=ON" pip install llama-cpp-python
    python scripts/bench_vs_llamacpp.py [-m MODEL ...] [-t 2] [-p 512] [-n 128]
        [-d 0,4096] [--fa 0,1] [--attention fast,exact] [-r 5] [--rounds 3]
        [--paths avx512,avx2] [--json results.json]
"""

import argparse
import ctypes
import json
import os
import random
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODEL = os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")


def comma_ints(text):
    return [int(x) for x in text.split(",") if x != ""]


class LlamaCppModel:
    """One model file loaded in llama.cpp."""

    def __init__(self, llama_cpp, model_path):
        self.lib = llama_cpp
        llama_cpp.llama_backend_init()
        self.model = llama_cpp.llama_model_load_from_file(
            model_path.encode(), llama_cpp.llama_model_default_params())
        if not self.model:
            raise SystemExit(f"llama.cpp could not load {model_path}")
        vocab = llama_cpp.llama_model_get_vocab(self.model)
        self.n_vocab = llama_cpp.llama_vocab_n_tokens(vocab)
        self.bos = llama_cpp.llama_vocab_bos(vocab)
        self.add_bos = llama_cpp.llama_vocab_get_add_bos(vocab)

    def close(self):
        self.lib.llama_model_free(self.model)


class LlamaCppContext:
    """A context of one depth and flash-attention setting, measured as llama-bench does."""

    def __init__(self, model, n_depth, n_prompt, n_gen, threads, flash_attn):
        self.lib = model.lib
        self.model = model
        self.n_depth = n_depth
        params = self.lib.llama_context_default_params()
        params.n_ctx = n_depth + max(n_prompt, n_gen) + 16
        params.n_batch = max(n_prompt, 1)
        params.n_ubatch = max(n_prompt, 1)
        params.n_threads = threads
        params.n_threads_batch = threads
        params.flash_attn_type = (self.lib.LLAMA_FLASH_ATTN_TYPE_ENABLED if flash_attn
                                  else self.lib.LLAMA_FLASH_ATTN_TYPE_DISABLED)
        self.ctx = self.lib.llama_init_from_model(model.model, params)
        if not self.ctx:
            raise SystemExit("llama.cpp could not create a context")
        self.n_batch = params.n_batch
        self.rng = random.Random(1)
        self.depth_state = None

    def close(self):
        self.lib.llama_free(self.ctx)

    def _random_tokens(self, n, bos_first):
        tokens = [self.rng.randrange(self.model.n_vocab) for _ in range(n)]
        if bos_first and self.model.add_bos and tokens:
            tokens[0] = self.model.bos
        return tokens

    def _decode(self, tokens):
        array = (self.lib.llama_token * len(tokens))(*tokens)
        if self.lib.llama_decode(self.ctx, self.lib.llama_batch_get_one(array, len(tokens))) != 0:
            raise SystemExit("llama_decode failed")

    def _prompt(self, n, bos_first):
        done = 0
        while done < n:
            count = min(n - done, self.n_batch)
            self._decode(self._random_tokens(count, bos_first and done == 0))
            done += count
        self.lib.llama_synchronize(self.ctx)

    def _start(self):
        """An empty cache, then the depth: computed the first time, restored after."""
        self.lib.llama_memory_clear(self.lib.llama_get_memory(self.ctx), True)
        if self.n_depth == 0:
            return
        if self.depth_state is None:
            self._prompt(self.n_depth, True)
            size = self.lib.llama_state_seq_get_size(self.ctx, 0)
            self.depth_state = (ctypes.c_uint8 * size)()
            self.lib.llama_state_seq_get_data(self.ctx, self.depth_state, size, 0)
            return
        if self.lib.llama_state_seq_set_data(self.ctx, self.depth_state,
                                             len(self.depth_state), 0) == 0:
            raise SystemExit("llama.cpp could not restore the depth's state")

    def pp_seconds(self, n_prompt):
        self._start()
        start = time.perf_counter()
        self._prompt(n_prompt, self.n_depth == 0)
        return time.perf_counter() - start

    def tg_seconds(self, n_gen):
        self._start()
        token = self._random_tokens(1, self.n_depth == 0)[0]
        start = time.perf_counter()
        for _ in range(n_gen):
            self._decode([token])
            self.lib.llama_synchronize(self.ctx)
            token = self.rng.randrange(self.model.n_vocab)
        return time.perf_counter() - start


def llama_cpp_round(contexts, n_prompt, n_gen, repetitions):
    """Tokens/s samples per (test, depth) after one warm-up run each."""
    samples = {}
    for depth, context in contexts.items():
        if n_prompt > 0:
            context.pp_seconds(n_prompt)
            samples[("pp", depth)] = [n_prompt / context.pp_seconds(n_prompt)
                                      for _ in range(repetitions)]
        if n_gen > 0:
            context.tg_seconds(n_gen)
            samples[("tg", depth)] = [n_gen / context.tg_seconds(n_gen)
                                      for _ in range(repetitions)]
    return samples


def ladder_round(args, model_path, path, attention):
    env = dict(os.environ)
    if path:
        env["LADDER_CPU"] = path
    command = [args.ladder, "bench-model", "-m", model_path, "-p", str(args.n_prompt),
               "-n", str(args.n_gen), "-d", ",".join(str(d) for d in args.n_depth),
               "-r", str(args.repetitions), "-t", str(args.threads), "--json"]
    if attention:
        command += ["--attention", attention]
    out = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    samples, records = {}, {}
    for record in json.loads(out.stdout):
        key = ("pp" if record["n_prompt"] > 0 else "tg", record["n_depth"])
        samples[key] = record["samples_ts"]
        records[key] = record
    return samples, records


def summary(values):
    return statistics.mean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def test_name(test, size, depth):
    return f"{test}{size}" + (f" @ d{depth}" if depth > 0 else "")


def bench_model(args, llama_cpp, model_path):
    model = LlamaCppModel(llama_cpp, model_path)
    variants = [(path, attention) for path in (args.paths.split(",") if args.paths else [""])
                for attention in (args.attention.split(",") if args.attention else [""])]
    llama_samples = {fa: {} for fa in args.fa}
    ladder_samples = {variant: {} for variant in variants}
    ladder_records = {}
    # Kept for every round, so each depth is computed once per setting.
    contexts = {fa: {} for fa in args.fa}
    try:
        for fa in args.fa:
            for depth in args.n_depth:
                contexts[fa][depth] = LlamaCppContext(model, depth, args.n_prompt, args.n_gen,
                                                      args.threads, fa)
        for _ in range(args.rounds):
            for fa in args.fa:
                for key, values in llama_cpp_round(contexts[fa], args.n_prompt, args.n_gen,
                                                   args.repetitions).items():
                    llama_samples[fa].setdefault(key, []).extend(values)
            for variant in variants:
                round_samples, records = ladder_round(args, model_path, *variant)
                ladder_records[variant] = records
                for key, values in round_samples.items():
                    ladder_samples[variant].setdefault(key, []).extend(values)
    finally:
        for by_depth in contexts.values():
            for context in by_depth.values():
                context.close()
        model.close()
    rows = []
    for variant in variants:
        for key in sorted(ladder_samples[variant], key=lambda k: (k[1], k[0] != "pp")):
            test, depth = key
            ladder_mean, ladder_sd = summary(ladder_samples[variant][key])
            llama = {fa: summary(llama_samples[fa][key]) for fa in args.fa}
            best_fa = max(args.fa, key=lambda fa: llama[fa][0])
            record = ladder_records[variant][key]
            rows.append({
                "model_filename": os.path.basename(model_path),
                "model_type": record["model_type"],
                "n_threads": args.threads,
                "test": test_name(test, args.n_prompt if test == "pp" else args.n_gen, depth),
                "n_depth": depth,
                "cpu_path": record["cpu_path"],
                "attention": record.get("attention", ""),
                "ladder_ts": ladder_mean, "ladder_stddev_ts": ladder_sd,
                "llama_cpp_ts": {f"fa{fa}": llama[fa][0] for fa in args.fa},
                "llama_cpp_stddev_ts": {f"fa{fa}": llama[fa][1] for fa in args.fa},
                "llama_cpp_best_fa": best_fa,
                "ratio": ladder_mean / llama[best_fa][0],
                "ceiling_ts": record["ceiling_ts"],
                "ladder_ceiling_pct": 100.0 * ladder_mean / record["ceiling_ts"],
                "llama_cpp_ceiling_pct": 100.0 * llama[best_fa][0] / record["ceiling_ts"],
                "ladder_samples_ts": ladder_samples[variant][key],
                "llama_cpp_samples_ts": {f"fa{fa}": llama_samples[fa][key] for fa in args.fa},
                "build_commit": record.get("build_commit", ""),
            })
    return rows


def print_table(rows, args, llama_cpp_build):
    print(f"{args.threads} threads, {args.rounds} rounds x {args.repetitions} repetitions "
          "per engine, alternating")
    print(f"llama.cpp built with: {llama_cpp_build}")
    fa_columns = " | ".join(f"llama.cpp -fa {fa} t/s" for fa in args.fa)
    print(f"| model | test | ladder path | ladder t/s | {fa_columns} | ratio to best "
          "| ceiling t/s | ladder % | llama.cpp % |")
    print("|---|---|---|---:|" + "---:|" * len(args.fa) + "---:|---:|---:|---:|")
    for r in rows:
        path = r["cpu_path"] + (f" {r['attention']}" if r["attention"] else "")
        ladder = f"{r['ladder_ts']:.2f} ± {r['ladder_stddev_ts']:.2f}"
        llama = " | ".join(f"{r['llama_cpp_ts'][f'fa{fa}']:.2f} ± "
                           f"{r['llama_cpp_stddev_ts'][f'fa{fa}']:.2f}" for fa in args.fa)
        print(f"| {r['model_type']} | {r['test']} | {path} | {ladder} | {llama} | "
              f"{r['ratio']:.2f} | {r['ceiling_ts']:.1f} | {r['ladder_ceiling_pct']:.1f}% | "
              f"{r['llama_cpp_ceiling_pct']:.1f}% |")
    print("ratio: ladder / the faster llama.cpp setting. ceiling: tg = memory read bandwidth / "
          "(weight bytes + KV bytes) per token; pp = the integer dot kernels' measured peak "
          "over the matrix products (ladder bench-model)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-m", "--model", action="append",
                        help="GGUF file (repeat for several; default SmolLM2-135M-Instruct Q4_1)")
    parser.add_argument("--ladder", default=os.path.join(ROOT, "build", "bin", "ladder"))
    parser.add_argument("-t", "--threads", type=int, default=2)
    parser.add_argument("-p", "--n-prompt", type=int, default=512)
    parser.add_argument("-n", "--n-gen", type=int, default=128)
    parser.add_argument("-d", "--n-depth", type=comma_ints, default=[0],
                        help="KV depths under each test, comma-separated (llama-bench's -d)")
    parser.add_argument("--fa", type=comma_ints, default=[0, 1],
                        help="llama.cpp flash-attention settings to run, comma-separated "
                             "(llama-bench's -fa; the ratio is to the faster one)")
    parser.add_argument("-r", "--repetitions", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternations of the two engines (samples pool over rounds)")
    parser.add_argument("--paths",
                        help="ladder kernel paths to run, comma-separated (LADDER_CPU values: "
                             "scalar, avx2, avx512; default: the best this CPU runs)")
    parser.add_argument("--attention",
                        help="ladder attention paths to run, comma-separated (exact, fast; "
                             "default: ladder's default)")
    parser.add_argument("--json", help="also write the rows, with every sample, to this file")
    args = parser.parse_args()
    if args.n_prompt <= 0 and args.n_gen <= 0:
        parser.error("nothing to measure: -p and -n are both 0")
    if not args.fa or any(fa not in (0, 1) for fa in args.fa):
        parser.error("--fa takes 0 and/or 1")

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
