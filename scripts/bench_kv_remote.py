#!/usr/bin/env python3
"""The remote KV tier (--kv-remote) through `ladder serve` and a redis-server
this script starts on a free loopback port (no persistence) and stops.

Measures:
1. a replica restarted with an empty memory cache, asked a prompt
   (--prefix-len shared tokens + --input-len own ones) that another replica
   computed: cached_tokens it reads from Redis, and its TTFT against the
   cold TTFT of the replica that computed it (--rounds rounds, a new prefix
   each, alternating cold and warm);
2. throughput of --requests unique prompts (--concurrency at once) on a
   replica without the remote tier and on one with it whose Redis is killed
   after the first quarter of the requests finished, alternating, --rounds
   each: failed requests and the throughput ratio.

    python3 scripts/bench_kv_remote.py --threads 2
"""
import argparse
import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_prefix_cache import Server  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
from redis_server import RedisServer  # noqa: E402


def wait_written(server, timeout=60):
    """The writes run off the engine thread: waits until the count stops growing."""
    deadline = time.monotonic() + timeout
    last = -1.0
    while time.monotonic() < deadline:
        written = server.metric("ladder:kv_remote_bytes_written_total")
        if written > 0 and written == last:
            return
        last = written
        time.sleep(0.5)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ladder", default="build/bin/ladder")
    parser.add_argument("-m", "--model", default="")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prefix-len", type=int, default=3000)
    parser.add_argument("--input-len", type=int, default=200)
    parser.add_argument("--output-len", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--request-len", type=int, default=256)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--kv-cache-mem", default="1GiB")
    parser.add_argument("--skip", default="", help="1 or 2: leave that part out")
    args = parser.parse_args()
    rng = random.Random(0)

    def tokens(n):
        return [rng.randrange(1000, 30000) for _ in range(n)]

    common = ["--kv-cache-mem", args.kv_cache_mem]
    if args.skip != "1":
        redis = RedisServer("--maxmemory", "2gb", "--maxmemory-policy", "allkeys-lru")
        try:
            remote = common + ["--kv-remote", redis.url]
            for round_ in range(args.rounds):
                prefix = tokens(args.prefix_len)
                computing = Server(args.ladder, args.model, args.threads, remote)
                cold_ttft, _, cold_usage = computing.stream(prefix + tokens(args.input_len),
                                                            args.output_len)
                wait_written(computing)
                computing.stop()
                restarted = Server(args.ladder, args.model, args.threads, remote)
                warm_ttft, _, warm_usage = restarted.stream(prefix + tokens(args.input_len),
                                                            args.output_len)
                hits = restarted.metric("ladder:kv_remote_hits_total")
                restarted.stop()
                print(f"1.{round_} TTFT cold {cold_ttft:.3f} s, from Redis {warm_ttft:.3f} s: "
                      f"{cold_ttft / warm_ttft:.1f}x; cached_tokens "
                      f"{warm_usage['prompt_tokens_details']['cached_tokens']} of "
                      f"{warm_usage['prompt_tokens']} (remote hits {hits:.0f} tokens; cold "
                      f"cached {cold_usage['prompt_tokens_details']['cached_tokens']})",
                      flush=True)
        finally:
            redis.kill()

    if args.skip != "2":
        def run(flags, redis=None):
            server = Server(args.ladder, args.model, args.threads,
                            common + ["--max-num-seqs", str(args.concurrency)] + flags)
            prompts = [tokens(args.request_len) for _ in range(args.requests)]
            failed = [0]
            finished = [0]
            lock = threading.Lock()

            def worker():
                while True:
                    with lock:
                        if not prompts:
                            return
                        prompt = prompts.pop()
                    try:
                        _, _, usage = server.stream(prompt, args.output_len)
                        ok = usage and usage["completion_tokens"] == args.output_len
                    except Exception:  # noqa: BLE001 - a failed request is what we count
                        ok = False
                    with lock:
                        finished[0] += 1
                        failed[0] += 0 if ok else 1
                        if redis and finished[0] == args.requests // 4:
                            redis.kill()

            start = time.monotonic()
            workers = [threading.Thread(target=worker) for _ in range(args.concurrency)]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            seconds = time.monotonic() - start
            errors = server.metric("ladder:kv_remote_errors_total")
            server.stop()
            return args.requests * (args.request_len + args.output_len) / seconds, failed[0], errors

        for round_ in range(args.rounds):
            plain, plain_failed, _ = run([])
            redis = RedisServer("--maxmemory", "2gb", "--maxmemory-policy", "allkeys-lru")
            try:
                killed, killed_failed, errors = run(["--kv-remote", redis.url], redis)
            finally:
                redis.kill()
            print(f"2.{round_} throughput without the tier {plain:.0f} tok/s ({plain_failed} "
                  f"failed); with it, Redis killed after {args.requests // 4} requests: "
                  f"{killed:.0f} tok/s ({killed_failed} failed, {errors:.0f} remote errors): "
                  f"{killed / plain:.3f}x", flush=True)


if __name__ == "__main__":
    main()
