#!/usr/bin/env python3
"""A soak test of `ladder serve`: mixed traffic for a long time, watching
that nothing grows.

Workers send, at random: streaming completions and chat completions read to
`data: [DONE]`, whole completions, streams and whole requests whose client
hangs up midway, and bad input (malformed JSON, text/plain, a foreign Host,
a 20 KiB header, a 9 MiB chunked body, a header that never ends, an unknown
route), each checked against the answer it must get. Every --sample seconds
it records the server's RSS (all, and anonymous), the KV blocks in use,
requests running and waiting, open connections, and the count of each
outcome. At the end the load stops and the server must come back to idle:
no request running or waiting, every KV block free, and anonymous RSS within
--max-rss-growth-mib of what it was once warmed up. Any answer other than the
expected one is an error, and any error fails the run (exit 1). Standard
library only (gnuplot for --plot).

    python3 scripts/soak.py --duration 1800 --csv soak.csv --plot soak.svg  # 30 minutes
    python3 scripts/soak.py --duration 120                                   # what CI runs

--plot draws the samples over time with gnuplot (Debian: gnuplot-nox).
"""
import argparse
import asyncio
import collections
import csv
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
READY = re.compile(r"listening on http://([0-9.]+):(\d+)")
PROMPTS = ["Tell me about the sea.", "Write a short poem about rivers.", "Count to twenty:",
           "The history of bread is", "Explain why the sky is blue.", "Once upon a time"]


class Unexpected(Exception):
    """An answer other than the one the request must get."""


class Client:
    def __init__(self, host, port, request_timeout):
        self.host = host
        self.port = port
        self.request_timeout = request_timeout

    async def open(self):
        return await asyncio.wait_for(asyncio.open_connection(self.host, self.port), 10)

    def head(self, method, path, extra="", host=None):
        return (f"{method} {path} HTTP/1.1\r\nHost: {host or self.host}:{self.port}\r\n"
                f"{extra}Connection: close\r\n\r\n").encode()

    def post(self, path, body, content_type="application/json", host=None):
        data = json.dumps(body).encode() if not isinstance(body, bytes) else body
        return self.head("POST", path, f"Content-Type: {content_type}\r\n"
                         f"Content-Length: {len(data)}\r\n", host) + data

    async def exchange(self, request, timeout=120):
        """Sends request and reads to the end: (status, head, body)."""
        reader, writer = await self.open()
        try:
            writer.write(request)
            await writer.drain()
            data = await asyncio.wait_for(reader.read(), timeout)
        finally:
            writer.close()
        return parse_response(data)


def parse_response(data):
    head, _, body = data.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 "):
        raise Unexpected(f"not an HTTP response: {data[:80]!r}")
    status = int(head.split(b" ", 2)[1])
    head = head.decode("latin-1").lower()
    if "transfer-encoding: chunked" in head:
        body = dechunk(body)
    return status, head, body


def dechunk(data):
    body = b""
    while data:
        size_line, _, rest = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            return body
        body += rest[:size]
        data = rest[size + 2:]
    raise Unexpected("a chunked body ended without its last chunk")


def expect_error(status, body, expected_status, code=None):
    if status != expected_status:
        raise Unexpected(f"expected {expected_status}, got {status}: {body[:200]!r}")
    error = json.loads(body)["error"]
    if code and error.get("code") != code:
        raise Unexpected(f"expected code {code}, got {error}")
    return f"refused {status}"


def events_of(body):
    return [line[6:] for line in body.decode().split("\n") if line.startswith("data: ")]


def check_stream(status, body, chat):
    if status == 429:
        return "busy 429"
    if status != 200:
        raise Unexpected(f"a stream answered {status}: {body[:200]!r}")
    events = events_of(body)
    if not events or events[-1] != "[DONE]":
        raise Unexpected("a stream did not end with [DONE]")
    usage = json.loads(events[-2])
    if usage["choices"] != [] or usage["usage"]["completion_tokens"] < 1:
        raise Unexpected(f"no usage chunk before [DONE]: {events[-2]}")
    key = "delta" if chat else "text"
    if not all(c.get(key) is not None for e in events[:-2] for c in json.loads(e)["choices"]):
        raise Unexpected("a chunk without its text")
    return "stream ok"


async def stream_completion(client, rng):
    body = {"prompt": rng.choice(PROMPTS), "max_tokens": rng.randint(4, 48), "stream": True,
            "stream_options": {"include_usage": True}, "temperature": rng.choice([0, 0.8])}
    status, _, data = await client.exchange(client.post("/v1/completions", body))
    return check_stream(status, data, chat=False)


async def stream_chat(client, rng):
    body = {"messages": [{"role": "user", "content": rng.choice(PROMPTS)}],
            "max_tokens": rng.randint(4, 48), "stream": True, "n": rng.choice([1, 2]),
            "stream_options": {"include_usage": True}}
    status, _, data = await client.exchange(client.post("/v1/chat/completions", body))
    return check_stream(status, data, chat=True)


async def whole_completion(client, rng):
    max_tokens = rng.randint(4, 48)
    body = {"prompt": rng.choice(PROMPTS), "max_tokens": max_tokens, "logprobs": rng.choice(
        [None, 2])}
    status, _, data = await client.exchange(client.post("/v1/completions", body))
    if status == 429:
        return "busy 429"
    if status != 200:
        raise Unexpected(f"a completion answered {status}: {data[:200]!r}")
    response = json.loads(data)
    if not 1 <= response["usage"]["completion_tokens"] <= max_tokens:
        raise Unexpected(f"usage out of bounds: {response['usage']}")
    return "whole ok"


async def hang_up_on_stream(client, rng):
    body = {"prompt": rng.choice(PROMPTS), "max_tokens": 400, "ignore_eos": True, "stream": True}
    reader, writer = await client.open()
    writer.write(client.post("/v1/completions", body))
    await writer.drain()
    data = b""
    n_events = rng.randint(1, 5)
    while data.count(b"data: ") < n_events:
        chunk = await asyncio.wait_for(reader.read(4096), 120)
        if not chunk:
            raise Unexpected("the stream closed before its client hung up")
        data += chunk
    abort_connection(writer)
    return "hung up on a stream"


async def hang_up_on_whole(client, rng):
    body = {"prompt": rng.choice(PROMPTS), "max_tokens": 400, "ignore_eos": True}
    _, writer = await client.open()
    writer.write(client.post("/v1/completions", body))
    await writer.drain()
    await asyncio.sleep(rng.uniform(0.05, 1.0))
    abort_connection(writer)
    return "hung up on a whole request"


def abort_connection(writer):
    """A reset, as when a client process dies, or a plain close."""
    sock = writer.get_extra_info("socket")
    if sock is not None and random.random() < 0.5:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    writer.close()


async def malformed_json(client, rng):
    status, _, data = await client.exchange(client.post("/v1/completions", b'{"prompt": "x",'))
    return expect_error(status, data, 400, "invalid_json")


async def text_plain(client, rng):
    status, _, data = await client.exchange(
        client.post("/v1/completions", {"prompt": "x"}, content_type="text/plain"))
    return expect_error(status, data, 415, "unsupported_media_type")


async def foreign_host(client, rng):
    status, _, data = await client.exchange(
        client.post("/v1/completions", {"prompt": "x"}, host="evil.example"))
    return expect_error(status, data, 403, "host_not_allowed")


async def huge_header(client, rng):
    status, _, data = await client.exchange(
        client.head("GET", "/health", f"X-Fill: {'a' * (20 << 10)}\r\n"))
    return expect_error(status, data, 431)


async def oversized_chunked_body(client, rng):
    reader, writer = await client.open()
    try:
        writer.write(client.head("POST", "/v1/completions",
                                 "Content-Type: application/json\r\n"
                                 "Transfer-Encoding: chunked\r\n"))
        piece = b"a" * (256 << 10)
        chunk = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
        try:
            for _ in range(36):  # 9 MiB
                writer.write(chunk)
                await writer.drain()
        except (ConnectionResetError, BrokenPipeError):
            pass
        data = await asyncio.wait_for(reader.read(), 60)
    finally:
        writer.close()
    status, _, body = parse_response(data)
    return expect_error(status, body, 413, "request_too_large")


async def header_that_never_ends(client, rng):
    reader, writer = await client.open()
    try:
        writer.write(f"GET /health HTTP/1.1\r\nHost: {client.host}\r\nX-Slow: ".encode())
        await writer.drain()
        data = await asyncio.wait_for(reader.read(), client.request_timeout + 30)
    finally:
        writer.close()
    status, _, body = parse_response(data)
    return expect_error(status, body, 408, "request_timeout")


async def unknown_route(client, rng):
    status, _, data = await client.exchange(client.head("GET", "/v2/nothing"))
    return expect_error(status, data, 404, "not_found")


ACTIONS = [(stream_completion, 30), (stream_chat, 14), (whole_completion, 20),
           (hang_up_on_stream, 10), (hang_up_on_whole, 5), (malformed_json, 4), (text_plain, 3),
           (foreign_host, 3), (huge_header, 3), (oversized_chunked_body, 2),
           (header_that_never_ends, 1), (unknown_route, 5)]


async def worker(client, seed, stop_at, counts, errors):
    rng = random.Random(seed)
    functions = [f for f, _ in ACTIONS]
    weights = [w for _, w in ACTIONS]
    while time.monotonic() < stop_at:
        action = rng.choices(functions, weights)[0]
        try:
            counts[await action(client, rng)] += 1
        except Exception as error:  # noqa: BLE001 (every failure is counted and shown)
            counts["error"] += 1
            errors.append(f"{action.__name__}: {type(error).__name__}: {error}")
            print(f"error, {stop_at - time.monotonic():.0f} s before the end: {errors[-1]}",
                  file=sys.stderr, flush=True)


async def metrics(client):
    status, _, body = await client.exchange(client.head("GET", "/metrics"), timeout=30)
    values = collections.defaultdict(float)
    for line in body.decode().splitlines():
        if line and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            values[key.split("{")[0]] += float(value)
            if 'finished_reason="abort"' in key:
                values["aborted"] = float(value)
    return values


def memory_mib(pid):
    """The server's resident memory: all of it, and its anonymous part (what
    a leak grows; the rest is mostly the model's file mapping, which the
    kernel may page out and in under pressure)."""
    values = {"VmRSS": float("nan"), "RssAnon": float("nan")}
    if pid is not None:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                key = line.split(":")[0]
                if key in values:
                    values[key] = int(line.split()[1]) / 1024
    return values["VmRSS"], values["RssAnon"]


def sample_row(elapsed, pid, values, counts):
    rss, anonymous = memory_mib(pid)
    return {"seconds": round(elapsed, 1), "rss_mib": round(rss, 1),
            "anon_rss_mib": round(anonymous, 1),
            "kv_blocks_used": int(values["ladder:kv_cache_blocks_used"]),
            "running": int(values["ladder:num_requests_running"]),
            "waiting": int(values["ladder:num_requests_waiting"]),
            "connections": int(values["ladder:http_connections"]),
            "requests": sum(counts.values()), "errors": counts["error"],
            "aborted": int(values["aborted"]),
            "slow_readers_dropped": int(values["ladder:http_slow_readers_dropped_total"]),
            "request_timeouts": int(values["ladder:http_request_timeouts_total"])}


async def soak(client, args, pid):
    counts = collections.Counter()
    errors = []
    start = time.monotonic()
    stop_at = start + args.duration
    workers = [asyncio.create_task(worker(client, args.seed + i, stop_at, counts, errors))
               for i in range(args.workers)]
    rows = []
    while time.monotonic() < stop_at:
        await asyncio.sleep(min(args.sample, max(0.0, stop_at - time.monotonic())))
        rows.append(sample_row(time.monotonic() - start, pid, await metrics(client), counts))
        print(" ".join(f"{k}={v}" for k, v in rows[-1].items()), flush=True)
    await asyncio.gather(*workers)
    # The load is gone: the server must come back to idle.
    deadline = time.monotonic() + 60
    while True:
        values = await metrics(client)
        idle = (values["ladder:num_requests_running"], values["ladder:num_requests_waiting"],
                values["ladder:kv_cache_blocks_used"]) == (0, 0, 0)
        if idle or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.5)
    rows.append(sample_row(time.monotonic() - start, pid, values, counts))
    return rows, counts, errors, idle


def start_server(args):
    # A small KV cache: the prefix cache touches every block of it within
    # the warm-up, so that what the pool's pages add to RSS is bounded (by
    # 32 MiB) and not taken for a leak.
    command = [args.ladder, "serve", "--port", "0", "-t", str(args.threads), "--kv-cache-mem",
               "32MiB", "--max-queue", "256", "--timeout", "5", "--request-timeout",
               str(args.request_timeout)]
    if args.model:
        command += ["-m", args.model]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    for line in process.stdout:
        match = READY.search(line)
        if match:
            return process, match.group(1), int(match.group(2))
    raise SystemExit(f"ladder serve exited {process.wait()} before it was ready")


PLOT_SCRIPT = """\
set terminal svg size 960,720 dynamic font 'sans,11' background rgb 'white'
set output '{output}'
set datafile separator ','
set key autotitle columnhead top left
set grid
set multiplot layout 3,1 title 'ladder serve under scripts/soak.py'
set autoscale xfix
set format x ''
set ylabel 'RSS (MiB)'
set yrange [0:*]
plot '{data}' using ($1/60):2 with linespoints pt 7 ps 0.4 title 'server RSS', \\
     '' using ($1/60):3 with linespoints pt 7 ps 0.4 title 'anonymous RSS'
set ylabel 'in use'
plot '{data}' using ($1/60):4 with linespoints pt 7 ps 0.4 title 'KV blocks in use', \\
     '' using ($1/60):5 with steps title 'requests running', \\
     '' using ($1/60):7 with steps title 'open connections'
set format x '%g'
set xlabel 'minutes'
set ylabel 'count'
set logscale y
set yrange [1:*]
plot '{data}' using ($1/60):8 with lines title 'requests answered', \\
     '' using ($1/60):10 with lines title 'aborted (hang-ups)', \\
     '' using ($1/60):($9+1) with lines lw 2 title 'errors + 1'
unset multiplot
"""


def write_csv(path, rows):
    with open(path, "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def plot(rows, output, data=None):
    """Draws the samples with gnuplot into an SVG (from data, the CSV, if given)."""
    if shutil.which("gnuplot") is None:
        print("--plot: gnuplot is not installed (Debian: gnuplot-nox); no chart", file=sys.stderr)
        return
    if data is None:
        data = output + ".csv"
        write_csv(data, rows)
    script = PLOT_SCRIPT.format(output=output, data=data)
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ladder", default=os.environ.get(
        "LADDER_BIN", os.path.join(ROOT, "build", "bin", "ladder")))
    parser.add_argument("--model", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--duration", type=float, default=120, help="seconds of load")
    parser.add_argument("--workers", type=int, default=8, help="requests in flight")
    parser.add_argument("--sample", type=float, default=10, help="seconds between samples")
    parser.add_argument("--request-timeout", type=float, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--csv", help="write the samples here")
    parser.add_argument("--plot", help="draw the samples into this SVG (gnuplot)")
    parser.add_argument("--max-rss-growth-mib", type=float, default=64,
                        help="anonymous RSS at the end over that at the first sample past a "
                        "quarter of the run")
    args = parser.parse_args()

    process, host, port = start_server(args)
    # A SIGTERM (a CI timeout) ends the run through the finally below, which
    # stops the server rather than leave it running.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        client = Client(host, port, args.request_timeout)
        rows, counts, errors, idle = asyncio.run(soak(client, args, process.pid))
    finally:
        process.send_signal(signal.SIGTERM)
        exit_status = process.wait(60)
    if args.csv:
        write_csv(args.csv, rows)
    if args.plot:
        plot(rows, args.plot, args.csv)
    warmed = next(r for r in rows if r["seconds"] >= args.duration / 4)
    growth = rows[-1]["anon_rss_mib"] - warmed["anon_rss_mib"]
    print("outcomes:", dict(sorted(counts.items())))
    print(f"anonymous RSS after warm-up {warmed['anon_rss_mib']} MiB, at the end "
          f"{rows[-1]['anon_rss_mib']} MiB ({growth:+.1f} MiB; all RSS {rows[-1]['rss_mib']} MiB); "
          f"idle at the end: {idle}; server exit status {exit_status}")
    failures = errors[:20]
    if not idle:
        failures.append(f"not idle after the load: {rows[-1]}")
    if growth > args.max_rss_growth_mib:
        failures.append(f"RSS grew {growth:.1f} MiB after warm-up")
    if exit_status != 0:
        failures.append(f"ladder serve exited {exit_status} on SIGTERM")
    for failure in failures:
        print("FAIL:", failure, file=sys.stderr)
    sys.exit(1 if failures or counts["error"] else 0)


if __name__ == "__main__":
    main()
