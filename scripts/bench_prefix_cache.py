#!/usr/bin/env python3
"""The support-bot workload through `ladder serve`: a shared instruction block
(--prefix-len tokens), a unique question (--input-len), a short answer.

Measures, on one server:
1. time to first token (TTFT) of a request whose block is cold, then of one
   whose block is cached (and the cached_tokens it reports);
2. --concurrency such requests at once: the peak KV blocks in use (from
   /metrics) against what one private copy of the block per request needs;
3. with --kv-disk-cache: a server restarted on the same directory serves the
   block from disk; TTFT against cold.

    python3 scripts/bench_prefix_cache.py --threads 2
"""
import argparse
import http.client
import json
import os
import random
import re
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time

READY = re.compile(r"listening on http://([0-9.]+):(\d+)")


class Server:
    def __init__(self, ladder, model, threads, extra):
        command = [ladder, "serve", "--host", "127.0.0.1", "--port", "0", "-t", str(threads), *extra]
        if model:
            command += ["-m", model]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if select.select([self.process.stdout], [], [], 0.5)[0]:
                match = READY.search(self.process.stdout.readline())
                if match:
                    self.host, self.port = match.group(1), int(match.group(2))
                    return
            if self.process.poll() is not None:
                raise SystemExit("ladder serve exited before it was ready")
        raise SystemExit("ladder serve printed no ready line")

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(120)

    def metric(self, name):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
        for line in text.splitlines():
            if line.startswith(name + "{") or line.startswith(name + " "):
                return float(line.rsplit(" ", 1)[1])
        raise KeyError(name)

    def stream(self, prompt, max_tokens):
        """Returns (ttft seconds, e2e seconds, usage) of one streamed completion."""
        body = json.dumps({"prompt": prompt, "max_tokens": max_tokens, "temperature": 0,
                           "ignore_eos": True, "stream": True,
                           "stream_options": {"include_usage": True}})
        conn = http.client.HTTPConnection(self.host, self.port, timeout=600)
        start = time.monotonic()
        conn.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
        response = conn.getresponse()
        assert response.status == 200, response.read()
        ttft, usage = None, None
        for raw in response:
            line = raw.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if chunk.get("choices") and ttft is None:
                ttft = time.monotonic() - start
            if chunk.get("usage"):
                usage = chunk["usage"]
        return ttft, time.monotonic() - start, usage


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ladder", default="build/bin/ladder")
    parser.add_argument("-m", "--model", default="")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prefix-len", type=int, default=3000)
    parser.add_argument("--input-len", type=int, default=200)
    parser.add_argument("--output-len", type=int, default=16)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--kv-cache-mem", default="1GiB")
    args = parser.parse_args()

    rng = random.Random(0)
    prefix = [rng.randrange(1000, 30000) for _ in range(args.prefix_len)]
    def question():
        return prefix + [rng.randrange(1000, 30000) for _ in range(args.input_len)]
    common = ["--kv-cache-mem", args.kv_cache_mem, "--max-num-seqs", str(max(args.concurrency, 8))]

    server = Server(args.ladder, args.model, args.threads, common)
    cold_ttft, _, cold_usage = server.stream(question(), args.output_len)
    warm_ttft, _, warm_usage = server.stream(question(), args.output_len)
    print(f"1. TTFT cold {cold_ttft:.3f} s, cached {warm_ttft:.3f} s: {cold_ttft / warm_ttft:.1f}x "
          f"(cached_tokens {warm_usage['prompt_tokens_details']['cached_tokens']} of "
          f"{warm_usage['prompt_tokens']})")

    peak = [0.0]
    done = threading.Event()
    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], server.metric("ladder:kv_cache_blocks_used"))
            time.sleep(0.05)
    watcher = threading.Thread(target=watch)
    watcher.start()
    prompts = [question() for _ in range(args.concurrency)]
    threads = [threading.Thread(target=server.stream, args=(p, args.output_len)) for p in prompts]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    watcher.join()
    block = 16
    private = args.concurrency * -(-(args.prefix_len + args.input_len + args.output_len) // block)
    print(f"2. {args.concurrency} concurrent requests in {time.monotonic() - start:.1f} s: peak "
          f"{peak[0]:.0f} KV blocks in use; {private} if each held its own copy of the block "
          f"({private / max(peak[0], 1):.1f}x)")
    server.stop()

    disk = tempfile.mkdtemp(prefix="ladder-kv-disk-")
    try:
        server = Server(args.ladder, args.model, args.threads, common + ["--kv-disk-cache", disk])
        first_ttft, _, _ = server.stream(question(), args.output_len)
        server.stop()  # the block files are written by now (the engine flushes on exit)
        files = len(os.listdir(disk))
        server = Server(args.ladder, args.model, args.threads, common + ["--kv-disk-cache", disk])
        disk_ttft, _, disk_usage = server.stream(question(), args.output_len)
        server.stop()
        print(f"3. after a restart, from disk ({files} block files): TTFT {disk_ttft:.3f} s vs cold "
              f"{first_ttft:.3f} s: {first_ttft / disk_ttft:.1f}x (cached_tokens "
              f"{disk_usage['prompt_tokens_details']['cached_tokens']})")
    finally:
        shutil.rmtree(disk, ignore_errors=True)


if __name__ == "__main__":
    main()
