#!/usr/bin/env python3
"""Aggregate output throughput of `ladder serve` through HTTP.

C concurrent streaming /v1/completions requests, each a prompt of P random
token ids and exactly N generated tokens (temperature 0, ignore_eos): the
load scripts/bench_generate.py puts through `ladder generate`, so the two
figures say what the HTTP layer costs. Output tok/s = completion tokens
(from each stream's usage chunk) / wall time from the first request sent to
the last [DONE]. Each round uses fresh prompts, so the prefix cache does not
help later rounds; the best round is kept, which filters out a noisy
neighbour. Standard library only.

    python3 scripts/bench_serve.py --threads 2 --concurrency 32 --rounds 3
    python3 scripts/bench_serve.py --url http://127.0.0.1:8080   # a running server
"""
import argparse
import asyncio
import json
import os
import random
import re
import signal
import statistics
import subprocess
import time
import urllib.request

READY = re.compile(r"listening on http://([0-9.]+):(\d+)")


def start_server(ladder, model, threads, concurrency, extra):
    command = [ladder, "serve", "--port", "0", "-t", str(threads),
               "--max-num-seqs", str(concurrency)] + extra
    if model:
        command += ["-m", model]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    for line in process.stdout:
        match = READY.search(line)
        if match:
            return process, match.group(1), int(match.group(2))
    raise SystemExit(f"ladder serve exited {process.wait()} before it was ready")


async def sse_chunks(host, port, path, body):
    """POSTs body as a streaming request and yields each SSE chunk, parsed, up
    to [DONE]. An error status, or a stream cut short, ends the benchmark."""
    payload = json.dumps(body).encode()
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write((f"POST {path} HTTP/1.1\r\nHost: {host}\r\n"
                      f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
                      f"Connection: close\r\n\r\n").encode() + payload)
        await writer.drain()
        status = await reader.readline()
        if b" 200 " not in status:
            raise SystemExit(f"the server answered {status!r}: {(await reader.read()).decode()}")
        async for line in reader:
            if not line.startswith(b"data: "):
                continue
            data = line[len(b"data: "):].strip()
            if data == b"[DONE]":
                return
            yield json.loads(data)
        raise SystemExit("a stream ended before its [DONE]")
    finally:
        writer.close()


async def one_stream(host, port, prompt, output_tokens):
    """Returns (completion tokens, seconds to first token, seconds to [DONE])."""
    body = {"prompt": prompt, "max_tokens": output_tokens, "temperature": 0,
            "ignore_eos": True, "stream": True, "stream_options": {"include_usage": True}}
    start = time.perf_counter()
    first_token = None
    usage = None
    async for chunk in sse_chunks(host, port, "/v1/completions", body):
        if chunk.get("usage"):
            usage = chunk["usage"]
        elif first_token is None and any(c.get("text") for c in chunk["choices"]):
            first_token = time.perf_counter() - start
    if usage is None:
        raise SystemExit("a stream ended without its usage chunk")
    return usage["completion_tokens"], first_token or 0.0, time.perf_counter() - start


async def one_round(host, port, concurrency, prompt_tokens, output_tokens, seed):
    rng = random.Random(seed)
    prompts = [[rng.randrange(1000, 30000) for _ in range(prompt_tokens)]
               for _ in range(concurrency)]
    start = time.perf_counter()
    results = await asyncio.gather(*(one_stream(host, port, p, output_tokens) for p in prompts))
    wall = time.perf_counter() - start
    tokens = sum(r[0] for r in results)
    return {"output_tps": tokens / wall, "wall_s": wall, "tokens": tokens,
            "ttft_median_s": statistics.median(r[1] for r in results),
            "ttft_max_s": max(r[1] for r in results),
            "tpot_ms": statistics.mean((r[2] - r[1]) / max(r[0] - 1, 1) for r in results) * 1e3}


def stream_delay_quantiles(host, port, quantiles=(0.5, 0.99, 0.999)):
    """What the server adds between an output leaving the engine and its SSE
    chunk being written, from the ladder:stream_delay_seconds histogram: for
    each quantile, the upper bound of its bucket (the delay is at most this)."""
    text = urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=30).read().decode()
    buckets = []  # (upper bound, cumulative count)
    for line in text.splitlines():
        if line.startswith("ladder:stream_delay_seconds_bucket"):
            bound = re.search(r'le="([^"]+)"', line).group(1)
            buckets.append((float(bound), float(line.rsplit(" ", 1)[1])))
    total = buckets[-1][1] if buckets else 0
    bounds = {}
    for quantile in quantiles:
        bounds[quantile] = next(bound for bound, count in buckets if count >= quantile * total)
    within_1ms = next((count for bound, count in buckets if bound == 0.001), 0) / max(total, 1)
    return int(total), bounds, within_1ms


def thread_schedstat(pid, name="ladder-http"):
    """(seconds on a CPU, seconds runnable but waiting for one, times run) of
    the server's thread of this name, from /proc/.../schedstat: the event
    loop, which renders and writes every SSE chunk. The wait is the
    scheduler's: time the woken loop spent queued behind other threads."""
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/comm") as comm:
            if comm.read().strip() != name:
                continue
        with open(f"/proc/{pid}/task/{task}/schedstat") as stat:
            run_ns, wait_ns, slices = (int(field) for field in stat.read().split())
        return run_ns / 1e9, wait_ns / 1e9, slices
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ladder", default="build/bin/ladder")
    parser.add_argument("-m", "--model", default="")
    parser.add_argument("--url", default="", help="a running server instead of starting one")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--prompt-tokens", type=int, default=128)
    parser.add_argument("--output-tokens", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("extra", nargs="*", help="more flags for ladder serve (after --)")
    args = parser.parse_args()

    process = None
    if args.url:
        host, port = args.url.split("//")[-1].rstrip("/").split(":")
        port = int(port)
    else:
        process, host, port = start_server(args.ladder, args.model, args.threads,
                                           args.concurrency, args.extra)
    try:
        loop_start = thread_schedstat(process.pid) if process else None
        best = None
        for round_index in range(args.rounds):
            result = asyncio.run(one_round(host, port, args.concurrency, args.prompt_tokens,
                                           args.output_tokens, seed=1000 + round_index))
            print(f"round {round_index + 1}: {result['output_tps']:.1f} output tok/s "
                  f"({result['tokens']} tokens in {result['wall_s']:.2f} s)", flush=True)
            if best is None or result["output_tps"] > best["output_tps"]:
                best = result
        n_outputs, delays, within_1ms = stream_delay_quantiles(host, port)
        loop_end = thread_schedstat(process.pid) if process else None
    finally:
        if process is not None:
            process.send_signal(signal.SIGTERM)
            process.wait(60)
    print(f"prompt {args.prompt_tokens} tokens, output {args.output_tokens} tokens, "
          f"{args.concurrency} streams, {args.threads} threads, best of {args.rounds}")
    print("| streams | output tok/s | wall s | TTFT median s | TTFT max s | TPOT ms |")
    print("|---|---|---|---|---|---|")
    print(f"| {args.concurrency} | {best['output_tps']:.1f} | {best['wall_s']:.2f} | "
          f"{best['ttft_median_s']:.2f} | {best['ttft_max_s']:.2f} | {best['tpot_ms']:.1f} |")
    print(f"server delay from engine output to SSE write, over {n_outputs} outputs: " +
          ", ".join(f"p{q * 100:g} <= {bound * 1e3:g} ms" for q, bound in delays.items()) +
          f"; {within_1ms:.1%} within 1 ms")
    if loop_start is not None and loop_end is not None and n_outputs:
        run, wait, slices = (end - start for start, end in zip(loop_start, loop_end))
        print(f"event-loop thread CPU: {run:.2f} s, {run / n_outputs * 1e6:.0f} us per output; "
              f"waited for a CPU {wait:.2f} s over {slices} wake-ups, "
              f"{wait / max(slices, 1) * 1e6:.0f} us each")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    os.environ.pop("LADDER_API_KEY", None)
    main()
