#!/usr/bin/env python3
"""The fleet's figures (docs/performance.md), each on fresh fleets started by
scripts/fleet.sh on loopback:

  routing   the support-bot workload (`ladder bench --dataset prefix`, chat)
            through prefix-affinity and round-robin HAProxy, alternated for
            --rounds: the prefix-cache hit share and the median TTFT of each
            (with the shared Redis tier, or with --no-kv-remote without it);
  rolling   a rolling update of every replica (scripts/rolling_update.sh)
            under constant `ladder bench` load: failed and truncated requests;
  failover  a replica killed with SIGKILL under streaming load: when HAProxy
            takes it out, the streams that failed, and the failures after.

Usage: .venv/bin/python scripts/bench_fleet.py routing|rolling|failover [options]
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from fleet import ROLLING_UPDATE_SCRIPT, Fleet, StreamingLoad  # noqa: E402
from ladder_server import ladder_bin  # noqa: E402


def run_bench(fleet, args, json_path, extra=()):
    command = [ladder_bin(), "bench", "--base-url", fleet.base_url, "--endpoint", "chat",
               "--dataset", "prefix", "--num-prefixes", str(args.num_prefixes),
               "--prefix-len", str(args.prefix_len), "--input-len", str(args.input_len),
               "--output-len", str(args.output_len), "--num-prompts", str(args.num_prompts),
               "--max-concurrency", str(args.max_concurrency), "--seed", str(args.seed),
               "--no-progress", "--json", json_path, *extra]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def bench_result(process, json_path):
    _, stderr = process.communicate(timeout=3600)
    assert process.returncode == 0, stderr
    with open(json_path) as f:
        return json.load(f)


def truncated(result):
    return sum(1 for error in result["errors"] if "ended before" in error)


def routing(args):
    rows = {"prefix": [], "roundrobin": []}
    for round_index in range(args.rounds):
        for mode in ("prefix", "roundrobin"):
            with tempfile.TemporaryDirectory() as directory:
                fleet = Fleet(directory, serve_args=f"--kv-cache-mem {args.kv_cache_mem}",
                              routing=mode, kv_remote=not args.no_kv_remote)
                try:
                    path = os.path.join(directory, "bench.json")
                    result = bench_result(run_bench(fleet, args, path), path)
                finally:
                    fleet.stop()
                    fleet.kill()
            rows[mode].append(result)
            print(f"round {round_index + 1} {mode:10s}: cached share "
                  f"{result['cached_token_share']:.3f}, median TTFT "
                  f"{result['median_ttft_ms']:.0f} ms, failed {result['failed']}", flush=True)
    hit = [p["cached_token_share"] / r["cached_token_share"]
           for p, r in zip(rows["prefix"], rows["roundrobin"])]
    ttft = [r["median_ttft_ms"] / p["median_ttft_ms"]
            for p, r in zip(rows["prefix"], rows["roundrobin"])]
    print(f"prefix-affinity vs round-robin, per round: hit share x{', x'.join(f'{h:.2f}' for h in hit)}; "
          f"median TTFT {', '.join(f'{t:.2f}x' for t in ttft)} lower")


def rolling(args):
    with tempfile.TemporaryDirectory() as directory:
        fleet = Fleet(directory, serve_args=f"--kv-cache-mem {args.kv_cache_mem}")
        try:
            old_pids = [replica.pid for replica in fleet.replicas]
            path = os.path.join(directory, "bench.json")
            bench = run_bench(fleet, args, path)
            time.sleep(args.update_after)
            started = time.monotonic()
            update = subprocess.run([ROLLING_UPDATE_SCRIPT, "--fleet-dir", directory],
                                    capture_output=True, text=True, timeout=900)
            update_s = time.monotonic() - started
            still_running = bench.poll() is None
            result = bench_result(bench, path)
            new_pids = [replica.pid for replica in fleet.replicas]
        finally:
            fleet.stop()
            fleet.kill()
    assert update.returncode == 0, update.stderr
    assert not set(old_pids) & set(new_pids)
    print(update.stderr, end="")
    print(f"rolling update of {len(old_pids)} replicas in {update_s:.1f} s under load "
          f"(bench still running after it: {still_running}): {result['completed']} completed, "
          f"{result['failed']} failed, {truncated(result)} truncated streams")


def failover(args):
    with tempfile.TemporaryDirectory() as directory:
        fleet = Fleet(directory, serve_args=f"--kv-cache-mem {args.kv_cache_mem}")
        try:
            streams = StreamingLoad(fleet, args.clients, args.output_len)
            time.sleep(args.update_after)
            victim = fleet.replicas[0]
            killed = time.monotonic()
            os.kill(victim.pid, signal.SIGKILL)
            while fleet.server_status(victim.name) != "DOWN":
                time.sleep(0.01)
            detected = time.monotonic()
            time.sleep(args.after)
            outcomes = streams.stop()
        finally:
            fleet.stop()
            fleet.kill()
    bad = [r for r in outcomes if r.outcome != "ok"]
    in_flight = [r for r in outcomes if r.start < killed < r.end]
    on_victim = [r for r in in_flight if r.replica == victim.name]
    failed_in_flight = [r for r in bad if r.start < killed]
    between = [r for r in bad if killed <= r.start < detected]
    after = [r for r in bad if r.start >= detected]
    print(f"{len(outcomes)} streams; replica1 killed with {len(in_flight)} streams in flight on "
          f"the fleet ({len(on_victim)} on it), DOWN in haproxy after "
          f"{(detected - killed) * 1000:.0f} ms; failed: "
          f"{len(failed_in_flight)} of those in flight "
          f"({', '.join(sorted({r.outcome for r in failed_in_flight})) or '-'}), "
          f"{len(between)} started before detection, {len(after)} started after; "
          f"{sum(1 for r in outcomes if r.start >= detected and r.outcome == 'ok')} "
          f"ok after detection")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["routing", "rolling", "failover"])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--num-prefixes", type=int, default=2)
    parser.add_argument("--prefix-len", type=int, default=1000)
    parser.add_argument("--input-len", type=int, default=50)
    parser.add_argument("--output-len", type=int, default=32)
    parser.add_argument("--num-prompts", type=int, default=24)
    parser.add_argument("--max-concurrency", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kv-cache-mem", default="40MiB",
                        help="each replica's KV cache (default: about 1.8 blocks of 1000 tokens)")
    parser.add_argument("--no-kv-remote", action="store_true",
                        help="routing: replicas without the shared Redis tier, so that the hit "
                             "shares are what each replica's own cache gets from the routing")
    parser.add_argument("--clients", type=int, default=4, help="failover: streaming clients")
    parser.add_argument("--update-after", type=float, default=5.0,
                        help="rolling, failover: seconds of load before the update or the kill")
    parser.add_argument("--after", type=float, default=10.0,
                        help="failover: seconds of load after HAProxy took the replica out")
    args = parser.parse_args()
    {"routing": routing, "rolling": rolling, "failover": failover}[args.what](args)


if __name__ == "__main__":
    main()
