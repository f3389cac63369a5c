"""`ladder bench` against a live `ladder serve`: its token counts, TTFT and
cached-token share agree with the server's own usage and metrics, its charts
are real PNG and SVG files, and a wrong endpoint fails with one clear line."""

import http.server
import json
import os
import shutil
import subprocess
import threading
import time
import xml.etree.ElementTree as ElementTree

import pytest

import http_raw
from ladder_server import ladder_bin, start_server

CHARTS = ["throughput_vs_concurrency", "ttft_vs_throughput", "tpot_vs_throughput",
          "latency_vs_throughput", "user_speed_vs_throughput"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def bench_server():
    """A server of its own, so that its counters move only with this module's load."""
    instance = start_server("--max-num-seqs", "8")
    yield instance
    assert instance.stop() == 0, "ladder serve did not exit 0 on SIGTERM"


def run_bench_at(base_url, *flags, api_key="", env=None):
    command = [ladder_bin(), "bench", "--base-url", base_url, "--no-progress", *flags]
    if api_key:
        command += ["--api-key", api_key]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)


def run_bench(server, *flags, env=None):
    return run_bench_at(server.base_url, *flags, api_key=server.api_key, env=env)


def wait_for_counter(server, before, name, grown_by):
    """The engine publishes its counters a moment after the last response left."""
    deadline = time.monotonic() + 5
    while True:
        after = http_raw.metrics(server)
        grown = http_raw.metric(after, name) - http_raw.metric(before, name)
        if grown >= grown_by or time.monotonic() > deadline:
            return grown
        time.sleep(0.05)


@pytest.fixture(scope="module")
def random_run(bench_server, tmp_path_factory):
    """One `--dataset random` run with --json and --plot, and the server's counters around it."""
    folder = tmp_path_factory.mktemp("bench")
    before = http_raw.metrics(bench_server)
    result = run_bench(bench_server, "--dataset", "random", "--num-prompts", "8",
                       "--input-len", "32", "--output-len", "8", "--max-concurrency", "4",
                       "--json", str(folder / "out.json"), "--plot", str(folder / "charts"))
    assert result.returncode == 0, result.stderr
    with open(folder / "out.json") as file:
        out = json.load(file)
    generated = wait_for_counter(bench_server, before, "ladder:generation_tokens_total",
                                 out["total_output_tokens"])
    after = http_raw.metrics(bench_server)
    prompt = http_raw.metric(after, "ladder:prompt_tokens_total") - \
        http_raw.metric(before, "ladder:prompt_tokens_total")
    return {"out": out, "stdout": result.stdout, "folder": folder, "generated": generated,
            "prompt": prompt}


def test_counts_agree_with_the_servers_usage_and_metrics(random_run):
    out = random_run["out"]
    assert out["completed"] == 8 and out["failed"] == 0, out["errors"]
    assert out["output_lens"] == [8] * 8, "ignore_eos and max_tokens fix the output length"
    assert out["stream_output_lens"] == out["output_lens"], \
        "one stream chunk per token, as usage reports"
    assert out["usage_mismatches"] == 0
    assert out["total_output_tokens"] == random_run["generated"] == 64, \
        "the bench's output tokens are the server's generation_tokens_total delta"
    assert out["input_lens"] == [32] * 8, "token-id prompts are exact"
    assert out["total_input_tokens"] == random_run["prompt"]
    assert "Successful requests:                     8" in random_run["stdout"]


def test_latencies_are_consistent(random_run):
    out = random_run["out"]
    for ttft, e2e, itls in zip(out["ttfts"], out["e2els"], out["itls"]):
        assert 0 < ttft <= e2e
        assert len(itls) == 7, "seven gaps between eight tokens"
        assert ttft + sum(itls) <= e2e + 1e-6
    assert out["max_concurrency"] == 4
    assert out["median_ttft_ms"] <= out["p99_ttft_ms"] <= out["p99_e2el_ms"]
    assert out["mean_tpot_ms"] > 0 and out["output_throughput"] > 0
    tokens = out["total_input_tokens"] + out["total_output_tokens"]
    assert out["total_token_throughput"] == pytest.approx(tokens / out["duration"])


def test_cost_reads_the_json(random_run):
    result = subprocess.run([ladder_bin(), "cost", "--gpu-hour-cost", "2", "--from-bench",
                             str(random_run["folder"] / "out.json"), "--json"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    cost = json.loads(result.stdout)
    expected = 2 / (random_run["out"]["output_throughput"] * 3600) * 1e6
    assert cost["cost_per_million_tokens"] == pytest.approx(expected)


def test_charts_are_valid_png_and_svg(random_run):
    if shutil.which("gnuplot") is None:
        pytest.skip("gnuplot is not installed (Debian: gnuplot-nox): ladder bench draws no charts")
    charts = random_run["folder"] / "charts"
    for name in CHARTS:
        with open(charts / f"{name}.png", "rb") as file:
            assert file.read(8) == PNG_MAGIC, f"{name}.png is not a PNG"
        root = ElementTree.parse(charts / f"{name}.svg").getroot()
        assert root.tag.endswith("svg"), f"{name}.svg is not SVG"
    page = (charts / "report.html").read_text()
    assert page.count("data:image/svg+xml;base64,") == len(CHARTS)
    assert "output tok/s" in page


def test_missing_gnuplot_still_writes_the_json(bench_server, tmp_path):
    env = dict(os.environ, PATH=str(tmp_path))  # nothing to run there
    result = run_bench(bench_server, "--num-prompts", "2", "--input-len", "8", "--output-len",
                       "2", "--json", str(tmp_path / "out.json"), "--plot",
                       str(tmp_path / "charts"), env=env)
    assert result.returncode == 0, result.stderr
    assert "gnuplot is not installed" in result.stderr
    assert json.loads((tmp_path / "out.json").read_text())["completed"] == 2
    assert (tmp_path / "charts" / "report.html").exists()


def test_prefix_dataset_reports_cached_tokens_on_a_second_run(bench_server, tmp_path):
    flags = ["--dataset", "prefix", "--prefix-len", "64", "--input-len", "16", "--output-len",
             "2", "--num-prompts", "4", "--max-concurrency", "2", "--seed", "11"]
    first = run_bench(bench_server, *flags, "--json", str(tmp_path / "first.json"))
    assert first.returncode == 0, first.stderr
    before = http_raw.metrics(bench_server)
    second = run_bench(bench_server, *flags, "--json", str(tmp_path / "second.json"))
    assert second.returncode == 0, second.stderr
    out = json.loads((tmp_path / "second.json").read_text())
    assert out["cached_token_share"] > 0, "the second run finds the prompts in the prefix cache"
    assert out["total_cached_tokens"] == sum(out["cached_tokens"])
    hits = wait_for_counter(bench_server, before, "ladder:prefix_cache_hits_total",
                            out["total_cached_tokens"])
    assert hits == out["total_cached_tokens"], "the share agrees with the server's cache hits"
    assert "Cached prompt tokens:" in second.stdout


def test_chat_endpoint(bench_server, tmp_path):
    result = run_bench(bench_server, "--endpoint", "chat", "--num-prompts", "2", "--input-len",
                       "16", "--output-len", "3", "--json", str(tmp_path / "chat.json"))
    assert result.returncode == 0, result.stderr
    out = json.loads((tmp_path / "chat.json").read_text())
    assert out["completed"] == 2 and out["output_lens"] == [3, 3]
    assert out["backend"] == "openai-chat"


def test_unreachable_endpoint_fails_in_one_line():
    result = run_bench_at("http://127.0.0.1:9", "--num-prompts", "1")
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "cannot reach" in result.stderr, result.stderr


def test_wrong_key_fails_in_one_line(bench_server):
    result = run_bench_at(bench_server.base_url, "--num-prompts", "1", api_key="wrong")
    assert result.returncode == 1
    assert "refused the API key (HTTP 401" in result.stderr, result.stderr


class HtmlPage(http.server.BaseHTTPRequestHandler):
    """A web server that is not an OpenAI endpoint: a page for every request."""

    def answer(self):
        body = b"<!DOCTYPE html><html><body>Welcome</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = answer

    def log_message(self, *args):
        pass


def test_a_web_page_is_not_an_openai_endpoint():
    page = http.server.HTTPServer(("127.0.0.1", 0), HtmlPage)
    threading.Thread(target=page.serve_forever, daemon=True).start()
    try:
        result = run_bench_at(f"http://127.0.0.1:{page.server_port}", "--num-prompts", "1")
    finally:
        page.shutdown()
    assert result.returncode == 1
    assert "not an OpenAI-compatible endpoint" in result.stderr, result.stderr
    assert "text/html" in result.stderr


class RecordingOpenAi(http.server.BaseHTTPRequestHandler):
    """A minimal OpenAI completions endpoint that keeps every request body:
    one model, and a stream of two tokens with usage."""

    bodies = []

    def send(self, content_type, body):
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.send("application/json", json.dumps(
            {"object": "list", "data": [{"id": "recorder", "object": "model"}]}).encode())

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        RecordingOpenAi.bodies.append(body)
        chunks = [{"choices": [{"index": 0, "text": "a"}]},
                  {"choices": [{"index": 0, "text": "b", "finish_reason": "length"}]},
                  {"choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": 2,
                                            "total_tokens": 6}}]
        stream = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        self.send("text/event-stream", stream.encode())

    def log_message(self, *args):
        pass


def bench_against_recorder(tmp_path, *flags):
    RecordingOpenAi.bodies = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), RecordingOpenAi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = run_bench_at(f"http://127.0.0.1:{server.server_port}", "--num-prompts", "3",
                              "--input-len", "4", "--output-len", "2", "--json",
                              str(tmp_path / "out.json"), *flags)
    finally:
        server.shutdown()
    assert result.returncode == 0, result.stderr
    return result, json.loads((tmp_path / "out.json").read_text()), RecordingOpenAi.bodies


def test_requests_are_greedy_unless_sampling_flags_are_given(tmp_path):
    result, out, bodies = bench_against_recorder(tmp_path)
    assert len(bodies) == 3
    for body in bodies:
        assert body["temperature"] == 0
        assert not {"top_p", "top_k", "min_p"} & body.keys(), body
    assert "Sampling:" in result.stdout and "greedy" in result.stdout
    assert out["temperature"] == 0 and out["top_p"] is None and out["top_k"] is None

    result, out, bodies = bench_against_recorder(
        tmp_path, "--temperature", "0.7", "--top-p", "0.9", "--top-k", "40", "--min-p", "0.05")
    assert len(bodies) == 3
    for body in bodies:
        assert (body["temperature"], body["top_p"], body["top_k"], body["min_p"]) == \
            (0.7, 0.9, 40, 0.05), body
    assert "temperature 0.7, top_p 0.9, top_k 40, min_p 0.05" in result.stdout
    assert (out["temperature"], out["top_p"], out["top_k"], out["min_p"]) == (0.7, 0.9, 40, 0.05)

    result, out, bodies = bench_against_recorder(tmp_path, "--top-k", "5")
    assert all(body["temperature"] == 0 and body["top_k"] == 5 for body in bodies), bodies
    assert "greedy, top_k 5" in result.stdout
