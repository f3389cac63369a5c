#!/usr/bin/env python3
"""`ladder simulate` against the real server (docs/fleet.md, "Validation").

Calibrates a step-cost profile on this machine with the server's own engine
flags for each fleet size: by default on calibrate's grid, with as many engines
at once as the fleet has replicas, since this one machine hosts them all; with
--calibration served, from the traces of the same fleet (one server, or every
replica behind HAProxy) serving other workloads than the ones checked, through
`ladder simulate calibrate --from-trace` with the grid's logit-row price held
(with --repeats, served again before each sweep and fitted on every sweep's
traces). Then for each dataset (random, prefix) and load (light, near
saturation, overloaded) it runs `ladder bench` against a fresh `ladder serve`
(or, with 2 or more replicas, a fresh fleet behind HAProxy: scripts/fleet.sh,
round robin for the random dataset, prefix affinity for the prefix one; with
--trace-runs, every replica traced) and `ladder simulate` of the same fleet on the
same workload, and prints simulated / measured for request throughput, median
TTFT and median TPOT, against the 15% floor. With --repeats N it compares with
the median of N measured runs of each cell, taken as N sweeps of all the cells
(each run printed). The loads are per replica, as shares of the capacity the
profile simulates for a replica on that dataset (every request sent at once):
a fleet of N is offered N times each.

The engine runs on --threads (default 1) in both: on a 2-core machine the server's HTTP thread,
its tokenizer and the `ladder bench` client need the other core, or they steal the engine's
threads mid-step and the server is measured slower than its engine.

Usage: .venv/bin/python scripts/validate_simulate.py [--profile P.json]
           [--calibration grid|served] [--threads N] [--replicas N ...]
           [--load-shares S ...| --loads R ...] [--repeats N]
           [--trace-runs] [--json OUT]
"""

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from fleet import Fleet  # noqa: E402
from ladder_server import DEFAULT_MODEL, ladder_bin, start_server  # noqa: E402

ENGINE_FLAGS = ["--kv-cache-mem", "256MiB"]  # what start_server gives every server
WORKLOADS = {
    "random": ["--dataset", "random", "--input-len", "128", "--output-len", "32",
               "--range-ratio", "0.25"],
    "prefix": ["--dataset", "prefix", "--prefix-len", "1000", "--input-len", "100",
               "--output-len", "32", "--range-ratio", "0.25"],
}
# The loads, as shares of a replica's capacity on each dataset: light, near saturation,
# overloaded (docs/fleet.md). Shares rather than fixed rates keep the three regimes what they
# are named as the engine gets faster: a fixed 1.5 req/s was past saturation on the random
# dataset when a replica served 1.2 req/s, and is 60% of it at 2.4 req/s.
LOAD_SHARES = ["0.25", "1", "2.5"]
# A fleet's routing for each dataset, as HAProxy (scripts/fleet.sh) and as the simulator
# (deploy/haproxy.cfg's hash-balance-factor 150 is a balance factor of 1.5).
ROUTING = {
    "random": ("roundrobin", ["--router", "round-robin"]),
    "prefix": ("prefix", ["--router", "prefix-affinity", "--balance-factor", "1.5"]),
}
KEYS = [("request_throughput", "req/s"), ("median_ttft_ms", "median TTFT (ms)"),
        ("median_tpot_ms", "median TPOT (ms)")]
FLOOR = 0.15
# What the served calibration runs through the traced server or fleet: other shapes than
# WORKLOADS' (longer prompts and outputs, a 2,000-token shared block), at an
# overloading, a light and a moderate rate, so that its steps range from one
# decode to full batches and long contexts.
CALIBRATION_WORKLOADS = [
    ["--dataset", "random", "--input-len", "256", "--output-len", "64", "--range-ratio", "0.5",
     "--num-prompts", "30", "--request-rate", "3"],
    ["--dataset", "random", "--input-len", "64", "--output-len", "16", "--range-ratio", "0.5",
     "--num-prompts", "20", "--request-rate", "0.5"],
    ["--dataset", "prefix", "--prefix-len", "2000", "--input-len", "50", "--output-len", "48",
     "--range-ratio", "0.5", "--num-prompts", "20", "--request-rate", "0.5"],
]


def run_json(command, json_path):
    done = subprocess.run(command + ["--json", json_path, "--no-progress"],
                          capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:2])} failed: {done.stderr.strip()}")
    with open(json_path) as f:
        return json.load(f)


@contextlib.contextmanager
def serving(work, threads, replicas, routing, trace_dir=None):
    """A fresh `ladder serve` (one replica) or fleet behind HAProxy routing by `routing` (more),
    stopped on leaving: no cache or queue carried over. Yields its base URL and the flags
    `ladder bench` needs for it. With trace_dir, every replica writes its trace there as
    replicaN.trace.json, the name fleet.sh gives it."""
    if replicas == 1:
        trace = ["--trace", os.path.join(trace_dir, "replica1.trace.json")] if trace_dir else []
        server = start_server(*trace, threads=threads)
        try:
            yield server.base_url, ["--api-key", server.api_key]
        finally:
            server.stop()
        return
    with tempfile.TemporaryDirectory(dir=work) as directory:
        fleet = Fleet(directory, replicas=replicas, routing=routing, kv_remote=False,
                      serve_args=" ".join(ENGINE_FLAGS), threads=threads, trace_dir=trace_dir)
        try:
            yield fleet.base_url, []
        finally:
            fleet.stop()
            fleet.kill()


def serve_traced(ladder, work, threads, replicas, run):
    """Serves CALIBRATION_WORKLOADS with --trace through one server, or through a fleet of
    `replicas` (each workload's prompts and rate times `replicas`, round robin, every replica
    tracing); returns the traces."""
    trace_dir = os.path.join(work, f"calibration-traces-{replicas}x-{run}")
    os.makedirs(trace_dir)
    with serving(work, threads, replicas, "roundrobin", trace_dir) as (base_url, auth):
        for i, workload in enumerate(CALIBRATION_WORKLOADS):
            scaled = list(workload)
            for flag, kind in (("--num-prompts", int), ("--request-rate", float)):
                at = scaled.index(flag) + 1
                scaled[at] = str(kind(float(scaled[at]) * replicas))
            run_json([ladder, "bench", "--base-url", base_url, *auth, *scaled, "--seed", "11"],
                     os.path.join(work, f"calibration-{replicas}x-{run}-{i}.json"))
    return [os.path.join(trace_dir, f"replica{i + 1}.trace.json") for i in range(replicas)]


def calibrate_grid(ladder, profile, threads, replicas):
    """calibrate's grid on as many engines at once as the fleet has replicas: this machine
    hosts the whole fleet, so its replicas' steps share the memory bandwidth and caches."""
    subprocess.run([ladder, "simulate", "calibrate", "-m", DEFAULT_MODEL, "-t", str(threads),
                    "--engines", str(replicas), *ENGINE_FLAGS, "-o", profile], check=True)


def fit_traces(ladder, profile, threads, traces, grid_profile):
    """The served steps' fit, with the logit-row price of the grid: a served decode batch has
    a logit row per row, so the traces tell that price from the rows curve poorly (docs/fleet.md),
    where the grid's prompt steps of one sequence and of sixteen set it apart."""
    subprocess.run([ladder, "simulate", "calibrate", "-m", DEFAULT_MODEL, "-t", str(threads),
                    *ENGINE_FLAGS, "--from-trace", *traces, "--logit-row-price-of", grid_profile,
                    "-o", profile], check=True)


def measure(ladder, work, threads, replicas, dataset, common, run, traced):
    """bench against a fresh server or fleet; with `traced`, its replicas' traces are kept in
    a folder named as the run's JSON."""
    name = f"bench-{replicas}x-{dataset}-{common[-1]}-{run}.json"
    trace_dir = None
    if traced:
        trace_dir = os.path.join(work, name.removesuffix(".json") + "-traces")
        os.makedirs(trace_dir)
    with serving(work, threads, replicas, ROUTING[dataset][0], trace_dir) as (base_url, auth):
        return run_json([ladder, "bench", "--base-url", base_url, *auth, *common],
                        os.path.join(work, name))


def simulate(ladder, profile, work, replicas, dataset, common, name):
    """`ladder simulate` of the fleet the measurements run: one replica, or N behind the
    dataset's router."""
    router = ["--replicas", str(replicas), *ROUTING[dataset][1]] if replicas > 1 else []
    return run_json([ladder, "simulate", "--profile", profile, *router, *common],
                    os.path.join(work, f"{name}-{replicas}x-{dataset}-{common[-1]}.json"))


def capacity(ladder, profile, work, replicas, dataset, common):
    """Requests/s a replica completes on the dataset with every request sent at once, as the
    profile simulates it: the unit of the loads. It sets the offered rates only, which the
    measured and the simulated runs then share."""
    result = simulate(ladder, profile, work, replicas, dataset,
                      [*common, "--request-rate", "inf"], "capacity")
    return result["request_throughput"] / replicas


def plan_cells(ladder, profiles, work, args):
    """The cells to measure: each fleet size, dataset and load, with the offered rate."""
    cells = []
    for replicas, profile in profiles.items():
        for dataset, workload in WORKLOADS.items():
            fixed = [*workload, "--num-prompts", str(args.num_prompts * replicas), "--seed",
                     str(args.seed)]
            if args.loads:
                loads = [float(load) for load in args.loads]
            else:
                unit = capacity(ladder, profile, work, replicas, dataset, fixed)
                print(f"{replicas} x {dataset}: a replica's simulated capacity {unit:.2f} req/s",
                      flush=True)
                loads = [float(share) * unit for share in args.load_shares]
            for load in loads:
                rate = f"{load * replicas:.2g}"
                cells.append({"replicas": replicas, "dataset": dataset, "request_rate": rate,
                              "common": [*fixed, "--request-rate", rate], "runs": []})
    return cells


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", help="a profile to reuse for every fleet size instead of "
                                          "calibrating")
    parser.add_argument("--calibration", choices=["grid", "served"], default="grid",
                        help="fit the engine alone on a grid (default) or the traces of the "
                             "fleet serving other workloads")
    parser.add_argument("--num-prompts", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1, help="the engine's threads")
    parser.add_argument("--load-shares", nargs="+", default=LOAD_SHARES,
                        help="offered loads as shares of a replica's simulated capacity "
                             "(default: 0.25 1 2.5)")
    parser.add_argument("--loads", nargs="+",
                        help="offered requests/s a replica instead of --load-shares")
    parser.add_argument("--repeats", type=int, default=1,
                        help="measure every cell this many times (sweeps of all the cells in "
                             "turn), each on a fresh server, and compare the simulation with the "
                             "median of a cell's runs")
    parser.add_argument("--replicas", nargs="+", type=int, default=[1, 2],
                        help="fleet sizes (2 or more run behind HAProxy)")
    parser.add_argument("--trace-runs", action="store_true",
                        help="trace every measured server (ladder serve --trace), to check the "
                             "profile's price of each step the runs took")
    parser.add_argument("--json", help="write every measured and simulated figure here")
    args = parser.parse_args()
    ladder = ladder_bin()
    work = tempfile.mkdtemp(prefix="ladder-validate-")
    print(f"profiles, runs and traces in {work}", flush=True)
    # Every fleet size's profile and every cell's offered rate first, then the measurements:
    # with --repeats, sweeps of every cell in turn rather than one cell's runs back to back, so
    # that a cell's runs fall minutes apart and the machine's slower and faster spells
    # (docs/fleet.md) reach every cell alike. A served calibration is repeated at the start of
    # each sweep and the profile fitted on every sweep's traces, so that the profile samples
    # the same spells as the measurements.
    served = args.calibration == "served" and not args.profile
    profiles = {replicas: args.profile or os.path.join(work, f"profile-{replicas}.json")
                for replicas in args.replicas}
    traces = {replicas: [] for replicas in args.replicas}
    cells = []
    for run in range(args.repeats):
        for replicas in args.replicas:
            grid = os.path.join(work, f"grid-{replicas}.json") if served else profiles[replicas]
            if not args.profile and run == 0:
                calibrate_grid(ladder, grid, args.threads, replicas)
            if served:
                traces[replicas] += serve_traced(ladder, work, args.threads, replicas, run)
                fit_traces(ladder, profiles[replicas], args.threads, traces[replicas], grid)
        if run == 0:
            cells = plan_cells(ladder, profiles, work, args)
        for cell in cells:
            measured = measure(ladder, work, args.threads, cell["replicas"], cell["dataset"],
                               cell["common"], run, args.trace_runs)
            cell["runs"].append(measured)
            print(f"run {run + 1}: {cell['replicas']} x {cell['dataset']} @ "
                  f"{cell['request_rate']} req/s: " + ", ".join(
                      f"{label} {measured[k]:.2f}" for k, label in KEYS), flush=True)
    rows, worst = [], 0.0
    for cell in cells:
        runs = cell["runs"]
        simulated = simulate(ladder, profiles[cell["replicas"]], work, cell["replicas"],
                             cell["dataset"], cell["common"], "sim")
        # Each figure's median over the runs (the upper middle of an even count).
        measured = {k: sorted(m[k] for m in runs)[len(runs) // 2] for k, _ in KEYS}
        ratios = {key: simulated[key] / measured[key] for key, _ in KEYS}
        worst = max(worst, *(abs(r - 1) for r in ratios.values()))
        rows.append({key: cell[key] for key in ("replicas", "dataset", "request_rate")} | {
            "profile": profiles[cell["replicas"]],
            "measured": measured,
            "measured_runs": [{k: m[k] for k, _ in KEYS} for m in runs],
            "simulated": {k: simulated[k] for k, _ in KEYS}, "ratio": ratios})
        print(f"{cell['replicas']} x {cell['dataset']} @ {cell['request_rate']} req/s: " +
              ", ".join(f"{label} {measured[k]:.2f} vs {simulated[k]:.2f} ({ratios[k]:.2f}x)"
                        for k, label in KEYS), flush=True)
    print("\n| replicas | dataset | req/s | " + " | ".join(
        f"{label}: measured / simulated (ratio)" for _, label in KEYS) + " |")
    print("|---|---|---|" + "---|" * len(KEYS))
    for row in rows:
        print(f"| {row['replicas']} | {row['dataset']} | {row['request_rate']} | " + " | ".join(
            f"{row['measured'][k]:.2f} / {row['simulated'][k]:.2f} ({row['ratio'][k]:.2f})"
            for k, _ in KEYS) + " |")
    verdict = "within" if worst <= FLOOR else "outside"
    print(f"\nlargest deviation {worst:.1%}: {verdict} the {FLOOR:.0%} floor")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "largest_deviation": worst}, f, indent=1)
    return 0 if worst <= FLOOR else 1


if __name__ == "__main__":
    sys.exit(main())
