"""Traces (--trace, /start_profile): the file is valid trace-event JSON with
the events a reader of the picture relies on, also when the server is
stopped by SIGTERM mid-trace, and `ladder trace-summary` reads it."""

import collections
import json
import os
import signal
import subprocess
import time

import http_raw
import trace_format
from fleet import Fleet
from ladder_server import DEFAULT_MODEL, ladder_bin, start_server

N_LAYERS = 30  # SmolLM2-135M


def run_generate(tmp_path, n_requests, max_tokens, kv_cache_mem="64MiB"):
    requests = tmp_path / "requests.jsonl"
    requests.write_text("".join(
        json.dumps({"prompt": f"Request {i} asks about rivers number {i}.",
                    "max_tokens": max_tokens, "ignore_eos": True}) + "\n"
        for i in range(n_requests)))
    trace = tmp_path / "generate.json"
    result = subprocess.run(
        [ladder_bin(), "generate", "-m", DEFAULT_MODEL, "-t", "2", "-i", str(requests),
         "-o", str(tmp_path / "out.jsonl"), "--no-progress", "--kv-cache-mem", kv_cache_mem,
         "--trace", str(trace)],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    n_steps = int(result.stderr.split(" steps, per step")[0].rsplit("generate: ", 1)[1])
    n_preemptions = int(result.stderr.split(" preemptions")[0].rsplit(" ", 1)[1])
    return trace, n_steps, n_preemptions


def test_generate_trace_has_every_step_and_one_span_per_request(tmp_path):
    trace, n_steps, _ = run_generate(tmp_path, n_requests=8, max_tokens=6)
    events = trace_format.load(trace)
    by_phase = trace_format.validate(events)

    slices = collections.Counter(e["name"] for e in by_phase["X"] if e["cat"] == "step")
    # One of each of the step's phases per engine step, as the engine counted them.
    assert slices["step"] == n_steps
    for phase in ("schedule", "forward", "sample", "detokenize_stop"):
        assert slices[phase] == n_steps, phase
    layers = [e for e in by_phase["X"] if e["cat"] == "layer"]
    assert len(layers) == N_LAYERS * n_steps
    ops = collections.Counter(e["name"] for e in by_phase["X"] if e["cat"] == "op")
    for op in ("qkv", "attention", "out_proj", "mlp"):
        assert ops[op] == N_LAYERS * n_steps, op
    assert ops["norm"] == 2 * N_LAYERS * n_steps
    assert ops["logits"] == n_steps

    begun, ended = trace_format.request_spans(events)
    assert len(begun) == 8 and sorted(begun) == sorted(ended) and len(set(begun)) == 8
    finish = [e["args"]["finish_reason"] for e in by_phase["e"] if e["name"] == "request"]
    assert finish == ["length"] * 8
    # Each request is tied to its steps by one flow: a start, its steps, an end.
    assert len(by_phase["s"]) == 8 and len(by_phase["f"]) == 8
    assert sorted(e["id"] for e in by_phase["s"]) == sorted(begun)
    # Every request's first 'prefill' chunk and its one decode span.
    prefill_ids = {e["id"] for e in by_phase["b"] if e["name"] == "prefill"}
    decode_ids = [e["id"] for e in by_phase["b"] if e["name"] == "decode"]
    assert prefill_ids == set(begun) and sorted(decode_ids) == sorted(begun)

    # The step's shape, what `ladder simulate` prices: each generated token
    # is one logit row, and each computed position attends to itself and
    # every position before it.
    prompt_lengths = [e["args"]["prompt_tokens"] for e in by_phase["b"] if e["name"] == "request"]
    computed = [n + 6 - 1 for n in prompt_lengths]  # the last token is never fed back
    step_args = [e["args"] for e in by_phase["X"] if e["name"] == "step"]
    assert sum(a["logit_rows"] for a in step_args) == 8 * 6
    assert sum(a["tokens"] for a in step_args) == sum(computed)
    assert sum(a["context"] for a in step_args) == sum(n * (n + 1) // 2 for n in computed)
    # Of those, the decode rows' (a sequence's one row in a step): each request's
    # 5 fed-back tokens, at positions n .. n + 4 after its n prompt tokens.
    assert sum(a["decode_context"] for a in step_args) == sum(
        sum(range(n + 1, n + 6)) for n in prompt_lengths)
    # The prompts share no full block, so a step reads each sequence's whole
    # context once: its prompt, then n + 1 .. n + 5 positions.
    assert sum(a["kv_read"] for a in step_args) == sum(prompt_lengths) + sum(
        a["decode_context"] for a in step_args)

    counters = [e for e in by_phase["C"] if e["name"] == "engine"]
    assert len(counters) == n_steps
    assert set(counters[0]["args"]) == {"running", "waiting", "kv_blocks_used", "step_tokens",
                                        "prefix_hit_tokens"}
    assert max(c["args"]["running"] for c in counters) == 8

    names = trace_format.thread_names(events)
    assert "engine" in names.values() and "pool worker 1" in names.values()
    worker = next(tid for tid, name in names.items() if name == "pool worker 1")
    assert any(e["tid"] == worker and e["name"] == "tasks" for e in by_phase["X"]), (
        "the pool worker's track shows the tasks it ran")

    summary = subprocess.run([ladder_bin(), "trace-summary", str(trace)], capture_output=True,
                             text=True, timeout=60)
    assert summary.returncode == 0, summary.stderr
    text = summary.stdout
    assert f"{n_steps} steps" in text and "8 requests" in text
    assert "## Operations by share of step time" in text and "## Threads" in text
    layer_rows = [line for line in text.split("## Per layer")[1].split("##")[0].splitlines()
                  if line.startswith("|") and line.split("|")[1].strip().isdigit()]
    assert len(layer_rows) == N_LAYERS
    forward_row = next(line for line in text.splitlines() if line.startswith("| forward "))
    share = float(forward_row.rstrip(" |").rsplit("|", 1)[1].strip().rstrip("%"))
    assert 10.0 < share <= 100.0, forward_row
    assert "| pool worker 1" in text and "| engine" in text


def test_preemptions_show_as_a_requeue_then_the_request_computed_again(tmp_path):
    # 5 blocks of 16 tokens for 8 requests of about 34: they take turns.
    trace, _, n_preemptions = run_generate(tmp_path, n_requests=8, max_tokens=24,
                                           kv_cache_mem="2MiB")
    assert n_preemptions > 0
    events = trace_format.load(trace)
    by_phase = trace_format.validate(events)
    preempted = [e for e in by_phase["n"] if e["name"] == "preempted"]
    assert len(preempted) == n_preemptions
    queued = [e for e in by_phase["b"] if e["name"] == "queued"]
    assert len(queued) == 8 + n_preemptions
    # Each preemption loses the KV: the request waits again, then is computed
    # again (a prefill, or straight a decode where the prefix cache kept its blocks).
    for event in preempted:
        after = [(e["ph"], e["name"]) for e in events_of_request(events, event["id"])
                 if e["ts"] >= event["ts"]]
        start = after.index(("n", "preempted"))
        assert after[start + 1:start + 3] == [("b", "queued"), ("e", "queued")], after
        assert after[start + 3] in (("b", "prefill"), ("b", "decode")), after


def events_of_request(events, request_id):
    return [e for e in events if e["ph"] in "bne" and e.get("id") == request_id]


def test_trace_summary_refuses_a_file_that_is_not_a_trace(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": [')
    result = subprocess.run([ladder_bin(), "trace-summary", str(bad)], capture_output=True,
                            text=True, timeout=30)
    assert result.returncode != 0 and "not valid JSON" in result.stderr


def test_sigterm_mid_trace_leaves_valid_json(tmp_path):
    trace = tmp_path / "serve.json"
    server = start_server("--trace", str(trace), "--drain-timeout", "0")
    try:
        stream = http_raw.open_stream(server, "/v1/completions", {
            "prompt": "Tell me about rivers.", "max_tokens": 2000, "ignore_eos": True,
            "stream": True})
        stream.settimeout(60)
        data = b""
        while data.count(b"data: ") < 5:
            chunk = stream.recv(4096)
            assert chunk, "the stream closed before its fifth event"
            data += chunk
        # The trace file is written as it goes, before the process ends (its
        # writer wakes every 100 ms; five events can come sooner).
        deadline = time.monotonic() + 10
        while os.path.getsize(trace) == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert os.path.getsize(trace) > 0
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(60) == 0
        stream.close()
    finally:
        server.stop(signal.SIGKILL)
    events = trace_format.load(trace)
    by_phase = trace_format.validate(events)
    assert sum(1 for e in by_phase["X"] if e["name"] == "step") >= 5
    begun, ended = trace_format.request_spans(events)
    assert len(begun) == 1 and ended == begun
    finish = next(e["args"] for e in by_phase["e"] if e["name"] == "request")
    assert finish["finish_reason"] == "abort"


def test_repeated_sigterms_still_finish_the_trace(tmp_path):
    """A stop script may signal twice (fleet.sh's did). Every SIGTERM belongs to one shutdown:
    the server drains, writes its trace's end and its last log lines, and exits 0. Signals that
    land while no thread waits for them used to go to the trace's writer thread, started before
    serve blocks them, and end the process with the trace cut short."""
    trace = tmp_path / "serve.json"
    server = start_server("--trace", str(trace), stderr=subprocess.PIPE)
    try:
        status, _, body = http_raw.request_json(server, "POST", "/v1/completions", {
            "prompt": "Tell me about rivers.", "max_tokens": 8})
        assert status == 200, body
        for _ in range(40):
            server.process.send_signal(signal.SIGTERM)
            time.sleep(0.002)
        assert server.process.wait(60) == 0
        log = server.process.stderr.read()
    finally:
        server.stop(signal.SIGKILL)
    assert "ladder serve: stopped" in log, log
    events = trace_format.load(trace)
    trace_format.validate(events)
    assert any(e.get("name") == "step" for e in events)


def test_profile_routes_need_the_key_and_write_into_the_trace_dir(tmp_path):
    server = start_server("--trace-dir", str(tmp_path))
    try:
        status, _, _ = http_raw.request_json(server, "POST", "/start_profile", {}, auth=False)
        assert status == 401
        status, _, _ = http_raw.request_json(server, "POST", "/stop_profile", {}, auth=False)
        assert status == 401
        status, _, body = http_raw.request_json(server, "POST", "/stop_profile", {})
        assert status == 409, body

        status, _, started = http_raw.request_json(server, "POST", "/start_profile", {})
        assert status == 200, started
        path = started["trace_file"]
        assert os.path.dirname(path) == str(tmp_path)
        status, _, again = http_raw.request_json(server, "POST", "/start_profile", {})
        assert status == 409, again
        status, _, completion = http_raw.request_json(
            server, "POST", "/v1/completions", {"prompt": "Hello", "max_tokens": 4, "ignore_eos": True})
        assert status == 200, completion
        status, _, stopped = http_raw.request_json(server, "POST", "/stop_profile", {})
        assert status == 200 and stopped["trace_file"] == path
    finally:
        assert server.stop() == 0
    events = trace_format.load(path)
    by_phase = trace_format.validate(events)
    # Four tokens take four steps; the last may end after /stop_profile has
    # already answered (the reply leaves before its step's slices are recorded).
    assert sum(1 for e in by_phase["X"] if e["name"] == "step") >= 3
    begun, ended = trace_format.request_spans(events)
    assert len(begun) == 1 and ended == begun


def test_profile_routes_are_off_without_a_trace_dir():
    server = start_server()
    try:
        status, _, body = http_raw.request_json(server, "POST", "/start_profile", {})
        assert status == 404 and "--trace-dir" in body["error"]["message"]
    finally:
        server.stop()


def test_run_traces_gemma3_layers_too(tmp_path):
    from ladder_server import GEMMA3_MODEL
    assert os.path.exists(GEMMA3_MODEL), "run `make model-gemma3`"
    trace = tmp_path / "run.json"
    result = subprocess.run(
        [ladder_bin(), "run", "-m", GEMMA3_MODEL, "-t", "2", "-p", "Hello", "-n", "3",
         "--temp", "0", "--json", "--trace", str(trace)],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    n_tokens = len(json.loads(result.stdout)["tokens"])
    events = trace_format.load(trace)
    by_phase = trace_format.validate(events)
    steps = [e for e in by_phase["X"] if e["name"] == "step"]
    assert len(steps) == n_tokens  # one step computes the prompt, each later one a token
    layers = {e["args"]["layer"] for e in by_phase["X"] if e["name"] == "layer"}
    assert layers == set(range(18))  # Gemma 3 270M


def test_simulate_calibrates_from_a_trace_of_served_steps(tmp_path):
    """`ladder simulate calibrate --from-trace`: every traced step is fitted,
    and the profile prices steps as the engine took them."""
    requests = tmp_path / "requests.jsonl"
    # Prompts and outputs of many lengths, so that steps of many shapes run.
    requests.write_text("".join(
        json.dumps({"prompt": "Rivers and lakes. " * (2 + 9 * i),
                    "max_tokens": 3 + 5 * i, "ignore_eos": True}) + "\n"
        for i in range(8)))
    trace = tmp_path / "generate.json"
    result = subprocess.run(
        [ladder_bin(), "generate", "-m", DEFAULT_MODEL, "-t", "2", "-i", str(requests),
         "-o", str(tmp_path / "out.jsonl"), "--no-progress", "--max-num-batched-tokens", "64",
         "--max-num-seqs", "8", "--trace", str(trace)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    n_steps = int(result.stderr.split(" steps, per step")[0].rsplit("generate: ", 1)[1])
    profile = tmp_path / "profile.json"
    result = subprocess.run(
        [ladder_bin(), "simulate", "calibrate", "-m", DEFAULT_MODEL, "-t", "2",
         "--kv-cache-mem", "64MiB", "--from-trace", str(trace), "-o", str(profile)],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert f"{n_steps} steps fitted" in result.stdout, result.stdout
    fitted = json.loads(profile.read_text())
    assert "served steps of trace" in fitted["source"]
    assert fitted["kv_bytes_per_token"] == 23040
    # A rows curve, rising from one row, with a point about every octave.
    points = fitted["row_costs_ms"]
    rows = [n for n, _ in points]
    assert rows[0] == 1 and rows == sorted(set(rows)) and all(ms > 0 for _, ms in points), points

    def rows_us(n):
        """The curve as StepProfile::rows_seconds reads it."""
        if n <= rows[0]:
            return points[0][1] * 1e3
        upper = next((i for i, r in enumerate(rows) if r >= n), len(rows) - 1)
        (n0, ms0), (n1, ms1) = points[upper - 1], points[upper]
        return (ms0 + (ms1 - ms0) * (n - n0) / (n1 - n0)) * 1e3

    # The fit prices the traced steps: their sum within 10% of their time.
    steps = [e for e in trace_format.load(trace) if e.get("name") == "step" and e["ph"] == "X"]
    # Two prices of a position attended: a prompt row's and a decode row's.
    priced = sum(rows_us(e["args"]["tokens"])
                 + fitted["per_context_ns"] * 1e-3
                 * (e["args"]["context"] - e["args"]["decode_context"])
                 + fitted["per_decode_context_ns"] * 1e-3 * e["args"]["decode_context"]
                 + fitted["per_logit_row_us"] * e["args"]["logit_rows"] for e in steps)
    took = sum(e["dur"] for e in steps)
    assert abs(priced / took - 1) < 0.1, (priced, took, fitted)

    # Prices held from another profile (as a grid calibration's) are taken as they are, and
    # the curve is fitted to the rest.
    other = dict(fitted, per_logit_row_us=123.0, per_context_ns=4.5, per_decode_context_ns=6.5,
                 per_kv_read_ns=0.25)
    other_path = tmp_path / "grid.json"
    other_path.write_text(json.dumps(other))
    held = tmp_path / "held.json"
    result = subprocess.run(
        [ladder_bin(), "simulate", "calibrate", "-m", DEFAULT_MODEL, "-t", "2",
         "--kv-cache-mem", "64MiB", "--from-trace", str(trace), "--logit-row-price-of",
         str(other_path), "--attention-prices-of", str(other_path), "-o", str(held)],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    refitted = json.loads(held.read_text())
    for key in ("per_logit_row_us", "per_context_ns", "per_decode_context_ns", "per_kv_read_ns"):
        assert abs(refitted[key] / other[key] - 1) < 1e-9, (key, refitted)
    assert f"logit-row price of {other_path}" in refitted["source"], refitted["source"]
    assert f"attention prices of {other_path}" in refitted["source"], refitted["source"]
    assert refitted["row_costs_ms"] != fitted["row_costs_ms"]
    # Held prices need served steps to fit the rest to.
    result = subprocess.run(
        [ladder_bin(), "simulate", "calibrate", "-m", DEFAULT_MODEL, "--logit-row-price-of",
         str(other_path), "-o", str(tmp_path / "p3.json")],
        capture_output=True, text=True, timeout=120)
    assert result.returncode != 0 and "--from-trace" in result.stderr, result.stderr

    not_a_trace = tmp_path / "requests.jsonl"
    result = subprocess.run(
        [ladder_bin(), "simulate", "calibrate", "-m", DEFAULT_MODEL, "--from-trace",
         str(not_a_trace), "-o", str(tmp_path / "p2.json")],
        capture_output=True, text=True, timeout=120)
    assert result.returncode != 0 and "not valid JSON" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_a_fleets_replicas_each_trace_and_calibrate_pools_them(tmp_path):
    """FLEET_TRACE_DIR: each replica behind HAProxy writes its own trace when the fleet stops,
    and `ladder simulate calibrate --from-trace` given both fits every step of both."""
    traces = tmp_path / "traces"
    traces.mkdir()
    # Prompts in chunks of 32 tokens: steps of one row count at many contexts, which tell the
    # context's price from the rows'.
    engine_flags = ["--kv-cache-mem", "256MiB", "--max-num-batched-tokens", "32",
                    "--max-num-seqs", "8"]
    fleet = Fleet(tmp_path / "fleet", routing="roundrobin", kv_remote=False, trace_dir=traces,
                  serve_args=" ".join(engine_flags))
    answered = collections.Counter()
    try:
        # Prompts of many lengths, so that each replica's steps have several row counts.
        for i in range(6):
            status, headers, body = http_raw.request(fleet, "POST", "/v1/completions", {
                "prompt": f"Question {i}: " + "Rivers and lakes. " * (2 + 12 * i),
                "max_tokens": 4, "ignore_eos": True})
            assert status == 200, body
            answered[headers["x-ladder-replica"]] += 1
        assert fleet.stop() == 0, fleet.log
    finally:
        fleet.kill()
    assert answered == {"replica1": 3, "replica2": 3}, answered
    files = [traces / "replica1.trace.json", traces / "replica2.trace.json"]
    n_steps = 0
    for path in files:
        steps = [e for e in trace_format.load(path) if e.get("name") == "step" and e["ph"] == "X"]
        # Each of a replica's three requests: its prompt's chunks, then three decodes.
        assert sum(e["args"]["logit_rows"] for e in steps) == 3 * 4, path
        n_steps += len(steps)
    result = subprocess.run(
        [ladder_bin(), "simulate", "calibrate", "-m", DEFAULT_MODEL, "-t", "1", *engine_flags,
         "--from-trace", *map(str, files),
         "-o", str(tmp_path / "profile.json")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert f"{n_steps} steps fitted" in result.stdout, result.stdout
    source = json.loads((tmp_path / "profile.json").read_text())["source"]
    assert "replica1.trace.json" in source and "replica2.trace.json" in source, source
