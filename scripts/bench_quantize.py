#!/usr/bin/env python3
"""`ladder quantize` and llama.cpp's llama-quantize side by side: wall time of
the same quantization (same input, type and threads), the two alternating for
several rounds so a noisy machine slows both alike, and whether their outputs
are byte-identical.

Needs llama-cpp-python (its llama_model_quantize is llama-quantize's code), or
--libllama with the libllama.so of such a build.

    python scripts/bench_quantize.py --input models/gemma-3-f16.gguf --type Q4_K_M -t 2
    # an F16 input from a quantized file (as both tools make it):
    python scripts/bench_quantize.py --make-f16 models/gemma-3-270m-q4_k_m.gguf \\
        --input /tmp/gemma-3-f16.gguf --type Q4_K_M -t 2
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from goldens import quantize_goldens  # noqa: E402  (llama-quantize through the oracle)


def llama_quantize(src, dst, type_name, threads, allow_requantize=False):
    start = time.perf_counter()
    quantize_goldens.llama_quantize(Path(src), Path(dst), type_name,
                                    {"allow_requantize": allow_requantize}, n_threads=threads)
    return time.perf_counter() - start


def ladder_quantize(ladder, src, dst, type_name, threads):
    start = time.perf_counter()
    subprocess.run([ladder, "quantize", src, dst, type_name, "-t", str(threads)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--input", required=True)
    parser.add_argument("--make-f16", metavar="QUANTIZED",
                        help="first write --input as F16 from this file (llama-quantize, "
                             "--allow-requantize)")
    parser.add_argument("--type", default="Q4_K_M", choices=sorted(quantize_goldens.FILE_TYPES))
    parser.add_argument("-t", "--threads", type=int, default=os.cpu_count())
    parser.add_argument("-r", "--rounds", type=int, default=3)
    parser.add_argument("--ladder", default=os.path.join(ROOT, "build", "bin", "ladder"))
    parser.add_argument("--libllama", type=Path, default=None,
                        help="llama-quantize from this libllama.so instead of llama_cpp")
    args = parser.parse_args()
    quantize_goldens.use_oracle(args.libllama)

    if args.make_f16:
        llama_quantize(args.make_f16, args.input, "F16", args.threads, allow_requantize=True)
    with tempfile.TemporaryDirectory() as tmp:
        ours = os.path.join(tmp, "ladder.gguf")
        theirs = os.path.join(tmp, "llama.gguf")
        times = {"ladder": [], "llama.cpp": []}
        for _ in range(args.rounds):
            times["llama.cpp"].append(llama_quantize(args.input, theirs, args.type, args.threads))
            times["ladder"].append(ladder_quantize(args.ladder, args.input, ours, args.type,
                                                   args.threads))
        identical = (quantize_goldens.sha256_of(Path(ours)) ==
                     quantize_goldens.sha256_of(Path(theirs)))
    for name, values in times.items():
        print(f"{name:10s} {args.type} -t {args.threads}: median {statistics.median(values):.2f} s"
              f" ({', '.join(f'{v:.2f}' for v in values)})")
    ratio = statistics.median(times["ladder"]) / statistics.median(times["llama.cpp"])
    print(f"ladder / llama.cpp wall time: {ratio:.2f}x; outputs byte-identical: {identical}")


if __name__ == "__main__":
    main()
