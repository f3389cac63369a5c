#!/usr/bin/env python3
"""The quantization quality table of docs/performance.md: one model requantized
to F16 (the reference, so every type starts from the same weights), then to
every type llama-quantize makes; for each, the file size, bits per weight,
perplexity, mean KL divergence and top-1 agreement against the F16 model
(`ladder perplexity --kl-divergence`), and `ladder bench-model`'s pp and tg.

Each step writes its result into --workdir and is skipped when that result is
already there, so an interrupted run resumes where it stopped (delete a file to
redo its step). Offline tool, not part of CI:

    python scripts/quality_table.py --workdir /tmp/quality -t 2
    python scripts/quality_table.py --workdir /tmp/quality -t 2 --types Q8_0,Q4_K_M
    python scripts/quality_table.py --workdir /tmp/quality -t 2 --max-chars 7000  # 3 windows
"""

import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODEL = os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
DEFAULT_TEXT = os.path.join(ROOT, "tests", "data", "inputs", "perplexity_gpl3.txt")
TYPES = ["F32", "BF16", "Q8_0", "Q6_K", "Q5_K_M", "Q5_K_S", "Q5_1", "Q5_0", "Q4_K_M", "Q4_K_S",
         "Q4_1", "Q4_0", "Q3_K_L", "Q3_K_M", "Q3_K_S", "Q2_K"]
# Types bench-model measures once, with a short pp and tg (--slow): none now
# that every weight type has SIMD kernels; for a build without them.
SLOW_TYPES = ""
SUMMARY = re.compile(r"weights: .* -> ([\d.]+) MiB \(([\d.]+) bpw\)")


def run(cmd, output=None):
    """Runs a ladder command; its stdout goes to `output` when given."""
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    result = subprocess.run(cmd, check=True, capture_output=True, text=True)
    if output:
        with open(output + ".tmp", "w", encoding="utf-8") as f:
            f.write(result.stdout)
        os.replace(output + ".tmp", output)
    return result


def quantize(args, src, type_name, allow_requantize=False):
    """The model in `type_name`, and its bits per weight from quantize's summary."""
    dst = os.path.join(args.workdir, f"{type_name}.gguf")
    summary = os.path.join(args.workdir, f"quantize_{type_name}.json")
    if not (os.path.exists(dst) and os.path.exists(summary)):
        cmd = [args.ladder, "quantize", src, dst, type_name, "-t", str(args.threads)]
        if allow_requantize:
            cmd.append("--allow-requantize")
        match = SUMMARY.search(run(cmd).stdout)
        with open(summary, "w", encoding="utf-8") as f:
            json.dump({"weights_mib": float(match[1]), "bpw": float(match[2])}, f)
    return dst


def bench(args, type_name, model):
    path = os.path.join(args.workdir, f"bench_{type_name}.json")
    if not os.path.exists(path):
        quick = type_name in args.slow.split(",")
        cmd = [args.ladder, "bench-model", "-m", model, "-t", str(args.threads), "--json",
               "-p", str(args.slow_pp if quick else 512), "-n", str(args.slow_tg if quick else 128),
               "-r", "1" if quick else str(args.repetitions)]
        run(cmd, path)
    with open(path, encoding="utf-8") as f:
        return {("pp" if r["n_prompt"] else "tg"): r for r in json.load(f)}


def shortened_text(path, max_chars, workdir):
    """The text's first lines up to max_chars characters, as a file in workdir."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    cut = text.rfind("\n", 0, max_chars) + 1 or max_chars
    short = os.path.join(workdir, f"text_{max_chars}.txt")
    with open(short, "w", encoding="utf-8") as f:
        f.write(text[:cut])
    return short


def small(value):
    """A KL divergence: five decimals, or two significant digits below 1e-4."""
    return f"{value:.5f}" if abs(value) >= 1e-4 else f"{value:.1e}"


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("-m", "--model", default=DEFAULT_MODEL)
    parser.add_argument("-f", "--text", default=DEFAULT_TEXT)
    parser.add_argument("-c", "--ctx", type=int, default=512)
    parser.add_argument("--max-chars", type=int, default=0,
                        help="score only the text's first N characters (cut at a line end): "
                             "fewer windows, for types that run at the scalar reference's speed")
    parser.add_argument("-t", "--threads", type=int, default=os.cpu_count())
    parser.add_argument("-r", "--repetitions", type=int, default=3)
    parser.add_argument("--types", default=",".join(TYPES))
    parser.add_argument("--slow", default=SLOW_TYPES,
                        help="types bench-model measures once, with --slow-pp and --slow-tg tokens")
    parser.add_argument("--slow-pp", type=int, default=128)
    parser.add_argument("--slow-tg", type=int, default=32)
    parser.add_argument("--no-bench", action="store_true", help="leave out pp and tg")
    parser.add_argument("--table-only", action="store_true",
                        help="run nothing: the table from what --workdir holds, '–' where a step "
                             "has not run")
    parser.add_argument("--ladder", default=os.path.join(ROOT, "build", "bin", "ladder"))
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    threads = ["-t", str(args.threads)]

    if args.max_chars:
        args.text = shortened_text(args.text, args.max_chars, args.workdir)
    base = os.path.join(args.workdir, "F16.kld")
    base_result = os.path.join(args.workdir, "perplexity_F16.json")
    if args.table_only:
        reference = os.path.join(args.workdir, "F16.gguf")
    else:
        reference = quantize(args, args.model, "F16", allow_requantize=True)
    if not args.table_only and not (os.path.exists(base) and os.path.exists(base_result)):
        run([args.ladder, "perplexity", "-m", reference, "-f", args.text, "-c", str(args.ctx),
             "--kl-divergence-base", base, "--json", *threads], base_result)

    rows = []
    for type_name in ["F16"] + args.types.split(","):
        model = os.path.join(args.workdir, f"{type_name}.gguf")
        summary = os.path.join(args.workdir, f"quantize_{type_name}.json")
        if not args.table_only:
            model = reference if type_name == "F16" else quantize(args, reference, type_name)
        size, bpw = "–", "–"
        if os.path.exists(model) and os.path.exists(summary):
            size, bpw = f"{os.path.getsize(model) / 2**20:.1f}", f"{load(summary)['bpw']:.2f}"
        ppl, kld, top = "–", "–", "–"
        path = os.path.join(args.workdir, f"kld_{type_name}.json")
        if type_name == "F16":
            ppl, kld, top = f"{load(base_result)['perplexity']:.3f}", "(reference)", "(reference)"
        elif os.path.exists(path) or not args.table_only:
            if not os.path.exists(path):
                run([args.ladder, "perplexity", "-m", model, "--kl-divergence-base", base,
                     "--kl-divergence", "--json", *threads], path)
            r = load(path)
            ppl = f"{r['perplexity']['mean']:.3f} ± {r['perplexity']['uncertainty']:.3f}"
            kld = f"{small(r['kl_divergence']['mean'])} ± {small(r['kl_divergence']['uncertainty'])}"
            top = f"{100 * r['same_top']['mean']:.2f} ± {100 * r['same_top']['uncertainty']:.2f}%"
        pp_cell, tg_cell = "–", "–"
        measured = os.path.exists(os.path.join(args.workdir, f"bench_{type_name}.json"))
        if not args.no_bench and (measured or not args.table_only):
            speed = bench(args, type_name, model)
            pp, tg = speed["pp"], speed["tg"]
            pp_cell = f"{pp['avg_ts']:.1f} ± {pp['stddev_ts']:.1f}"
            tg_cell = f"{tg['avg_ts']:.1f} ± {tg['stddev_ts']:.1f}"
            if pp["n_prompt"] != 512:
                pp_cell += f" (pp{pp['n_prompt']})"
            if tg["n_gen"] != 128:
                tg_cell += f" (tg{tg['n_gen']})"
        slow = " (slow)" if type_name in args.slow.split(",") else ""
        rows.append(f"| {type_name}{slow} | {size} | {bpw} | {ppl} | {kld} | {top} | {pp_cell} | "
                    f"{tg_cell} |")
    print("| type | file MiB | bpw | perplexity | mean KLD | top-1 | pp512 t/s | tg128 t/s |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
