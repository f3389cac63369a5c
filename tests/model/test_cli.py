"""The ladder command line as a user meets it: clear one-line errors on bad
input, and machine-readable output that agrees with the model file."""

import json
import os
import subprocess

from conftest import load_goldens, run_ladder_json


def run_failing(ladder_bin, *args):
    result = subprocess.run([ladder_bin, *args], capture_output=True, text=True, timeout=120)
    assert result.returncode != 0, f"ladder {' '.join(args)} should have failed"
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, f"expected a one-line error, got: {result.stderr!r}"
    return lines[0]


def test_missing_model_file_is_a_clear_error(ladder_bin):
    message = run_failing(ladder_bin, "run", "-m", "/nonexistent/model.gguf", "-p", "hi")
    assert "/nonexistent/model.gguf" in message and "does not exist" in message


def test_truncated_model_file_names_what_is_wrong(ladder_bin, default_model, tmp_path):
    truncated = tmp_path / "truncated.gguf"
    with open(default_model, "rb") as f:
        truncated.write_bytes(f.read(4096))
    message = run_failing(ladder_bin, "info", "-m", str(truncated))
    assert str(truncated) in message, message


def test_corrupted_magic_is_rejected(ladder_bin, tmp_path):
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"NOPE" + bytes(64))
    message = run_failing(ladder_bin, "run", "-m", str(bogus), "-p", "hi")
    assert "bogus.gguf" in message


def test_prompt_longer_than_context_is_refused(ladder_bin, default_model):
    message = run_failing(ladder_bin, "run", "-m", default_model, "-c", "64", "-n", "4",
                          "-p", "word " * 200)
    assert "context" in message


def test_out_of_range_sampling_parameter_is_named(ladder_bin, default_model):
    message = run_failing(ladder_bin, "run", "-m", default_model, "-p", "hi", "--top-p", "1.5")
    assert "top_p" in message or "top-p" in message, message


def test_info_json_describes_the_default_model(ladder_bin, default_model):
    info = run_ladder_json(ladder_bin, "info", "-m", default_model, "--json")
    assert info["architecture"] == "llama"
    assert info["hyperparameters"]["llama.block_count"] == 30
    assert info["hyperparameters"]["llama.embedding_length"] == 576
    assert info["tokenizer"]["model"] == "gpt2" and info["tokenizer"]["pre"] == "smollm"
    assert info["tokenizer"]["has_chat_template"] is True
    assert info["totals"]["n_tensors"] == 272 == len(info["tensors"])


def test_tokenize_prints_llama_cpp_ids(ladder_bin, default_model):
    goldens = load_goldens(default_model, "model_goldens.json")
    case = goldens["prompts"][1]
    ids = run_ladder_json(ladder_bin, "tokenize", "-m", default_model, "--no-parse-special",
                          "-p", case["text"])
    assert ids == case["prompt_tokens"]


def test_seeded_sampling_is_reproducible(ladder_bin, default_model):
    args = ("run", "-m", default_model, "-p", "Once upon a time", "-n", "24", "--temp", "1.0",
            "--seed", "1234", "--json", "-t", "2")
    first = run_ladder_json(ladder_bin, *args)
    second = run_ladder_json(ladder_bin, *args)
    assert first["tokens"] == second["tokens"]
    assert len(first["tokens"]) > 0


def test_default_model_is_used_without_dash_m(ladder_bin, default_model):
    env = dict(os.environ, LADDER_MODEL=default_model)
    result = subprocess.run([ladder_bin, "tokenize", "-p", "hi"], capture_output=True, text=True,
                            env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)


def test_simulate_bad_input_is_one_line_naming_it(ladder_bin, tmp_path):
    roofline = ["simulate", "--device", "h100-80g", "--preset", "llama3-8b", "--num-prompts", "4"]
    assert "--router" in run_failing(ladder_bin, *roofline, "--router", "random")
    assert "--request-rate" in run_failing(ladder_bin, *roofline, "--request-rate", "-2")
    assert "no-such-model" in run_failing(ladder_bin, "simulate", "--device", "h100-80g",
                                          "--preset", "no-such-model")
    assert "'tpu'" in run_failing(ladder_bin, "simulate", "--device", "tpu", "--preset", "llama3-8b")
    trace = tmp_path / "trace.jsonl"
    trace.write_text('{"prompt": "hello", "max_tokens": 4}\n{"prompt": \n')
    message = run_failing(ladder_bin, *roofline, "--dataset", "jsonl", str(trace))
    assert "trace.jsonl" in message and "2" in message, message
    profile = tmp_path / "profile.json"
    profile.write_text('{"source": "hand", "fixed_ms": 1}')
    assert "per_token_us" in run_failing(ladder_bin, "simulate", "--profile", str(profile))
    profile.write_text('{"source": "hand", "fixed_ms": 1, "per_token_us": 1, "per_context_ns": 1, '
                       '"per_logit_row_us": -2, "block_size": 16, "kv_blocks": 1000}')
    assert "per_logit_row_us" in run_failing(ladder_bin, "simulate", "--profile", str(profile))


def test_simulate_json_has_bench_keys(ladder_bin, tmp_path):
    out = tmp_path / "sim.json"
    subprocess.run([ladder_bin, "simulate", "--device", "h100-80g", "--preset", "llama3-8b",
                    "--replicas", "2", "--router", "prefix-affinity", "--dataset", "prefix",
                    "--prefix-len", "512", "--input-len", "64", "--output-len", "16",
                    "--num-prompts", "50", "--request-rate", "10", "--json", str(out)],
                   check=True, capture_output=True, timeout=60)
    result = json.loads(out.read_text())
    for key in ("completed", "request_throughput", "median_ttft_ms", "p99_tpot_ms",
                "mean_itl_ms", "median_e2el_ms", "cached_token_share"):
        assert key in result, key
    assert result["completed"] == 50
    simulated = result["simulated"]
    assert simulated["replicas"] == 2 and simulated["num_preemptions"] == 0
    # Every prompt after the first on each replica finds the 512-token prefix cached.
    assert simulated["prefix_cache_hit_share"] > 0.7


def test_simulate_workload_flags_refuse_bad_input_by_name(ladder_bin, tmp_path):
    roofline = ["simulate", "--device", "h100-80g", "--preset", "llama3-8b", "--num-prompts", "4"]
    assert "--burstiness" in run_failing(ladder_bin, *roofline, "--burstiness", "-1")
    assert "--diurnal-amplitude" in run_failing(ladder_bin, *roofline, "--diurnal-amplitude", "1.5")
    assert "--find-min-replicas" in run_failing(ladder_bin, *roofline, "--find-min-replicas")
    trace = tmp_path / "day.jsonl"
    trace.write_text('{"arrival_s": 0, "input_len": 8, "output_len": 2}\n'
                     '{"arrival_s": 1, "input_len": 8}\n')
    message = run_failing(ladder_bin, *roofline, "--replay", str(trace))
    assert "day.jsonl line 2" in message and "output_len" in message, message
    assert "--request-rate" in run_failing(ladder_bin, *roofline, "--replay", str(trace),
                                           "--request-rate", "5")


def test_simulate_replays_a_converted_bench_result(ladder_bin, tmp_path):
    # A bench result's arrays (as ladder bench --json writes them) become a trace, replayed.
    bench = {"input_lens": [300, 200, 100], "output_lens": [20, 0, 10],
             "start_times": [0.5, 0.2, 0.0], "errors": ["", "timed out", ""]}
    (tmp_path / "bench.json").write_text(json.dumps(bench))
    trace = tmp_path / "trace.jsonl"
    subprocess.run([ladder_bin, "simulate", "convert", "--from", "bench-json",
                    str(tmp_path / "bench.json"), "-o", str(trace)],
                   check=True, capture_output=True, timeout=60)
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert lines == [{"arrival_s": 0.0, "input_len": 100, "output_len": 10},
                     {"arrival_s": 0.5, "input_len": 300, "output_len": 20}]
    out = tmp_path / "sim.json"
    subprocess.run([ladder_bin, "simulate", "--device", "h100-80g", "--preset", "llama3-8b",
                    "--replay", str(trace), "--json", str(out)],
                   check=True, capture_output=True, timeout=60)
    result = json.loads(out.read_text())
    assert result["completed"] == 2 and result["total_input_tokens"] == 400
    assert result["start_times"] == [0.0, 0.5]
    assert result["simulated"]["trace"] == str(trace)


def test_simulate_tier_flags_refuse_bad_input_by_name(ladder_bin, tmp_path):
    roofline = ["simulate", "--device", "h100-80g", "--preset", "llama3-8b", "--num-prompts", "4"]
    assert "--kv-disk-cache-size" in run_failing(ladder_bin, *roofline,
                                                 "--kv-disk-cache-size", "lots")
    assert "--kv-disk-gbps" in run_failing(ladder_bin, *roofline, "--kv-disk-gbps", "0")
    assert "--kv-remote-gbps" in run_failing(ladder_bin, *roofline, "--kv-remote-gbps", "-1")
    assert "--kv-remote-latency-ms" in run_failing(ladder_bin, *roofline,
                                                   "--kv-remote-latency-ms", "-1")
    message = run_failing(ladder_bin, *roofline, "--kv-remote-size", "1GiB", "--no-prefix-cache")
    assert "--kv-remote-size" in message and "--no-prefix-cache" in message, message
    profile = tmp_path / "old.json"  # written before profiles kept the KV's size
    profile.write_text('{"source": "hand", "fixed_ms": 1, "per_token_us": 10, '
                       '"per_context_ns": 1, "block_size": 16, "kv_blocks": 1000}')
    message = run_failing(ladder_bin, "simulate", "--profile", str(profile),
                          "--kv-disk-cache-size", "1GiB")
    assert "--kv-disk-cache-size" in message and "kv_bytes_per_token" in message, message


def test_simulate_reports_hits_by_tier(ladder_bin, tmp_path):
    # Two replicas, round-robin: each prefix is computed on one replica and
    # read from the shared remote tier by the other.
    out = tmp_path / "sim.json"
    subprocess.run([ladder_bin, "simulate", "--device", "h100-80g", "--preset", "llama3-8b",
                    "--replicas", "2", "--dataset", "prefix", "--prefix-len", "512",
                    "--num-prefixes", "4", "--input-len", "64", "--output-len", "4",
                    "--num-prompts", "40", "--request-rate", "5", "--seed", "2",
                    "--kv-disk-cache-size", "1GiB", "--kv-remote-size", "2GiB",
                    "--json", str(out)], check=True, capture_output=True, timeout=60)
    simulated = json.loads(out.read_text())["simulated"]
    by_tier = simulated["prefix_cache_hit_share_by_tier"]
    assert by_tier["remote"] > 0 and simulated["kv_remote_hits"] > 0
    assert abs(sum(by_tier.values()) - simulated["prefix_cache_hit_share"]) < 1e-9
    assert simulated["kv_remote_size"] == 2 << 30


def test_simulate_disaggregated_reports_its_transfers(ladder_bin, tmp_path):
    # 1 prefill + 2 decode replicas: every prompt's KV crosses a link once;
    # a 64-token prompt of Llama 3 8B's 16-bit KV is 64 x 131,072 bytes.
    out = tmp_path / "sim.json"
    subprocess.run([ladder_bin, "simulate", "--device", "h100-80g", "--preset", "llama3-8b",
                    "--prefill-replicas", "1", "--decode-replicas", "2", "--kv-link-gbps", "100",
                    "--dataset", "random", "--input-len", "64",
                    "--output-len", "8", "--num-prompts", "20", "--request-rate", "5",
                    "--json", str(out)], check=True, capture_output=True, timeout=60)
    result = json.loads(out.read_text())
    simulated = result["simulated"]
    assert result["completed"] == 20
    assert simulated["mode"] == "disaggregated" and simulated["gpus"] == 3
    assert simulated["prefill_replicas"] == 1 and simulated["decode_replicas"] == 2
    assert simulated["kv_transfers"] == 20 and simulated["kv_link_gbps"] == 100
    per_prompt = 64 * 32 * 2 * 8 * 128 * 2
    assert simulated["kv_transfer_bytes"] == 20 * per_prompt
    assert abs(simulated["kv_transfer_s"] - 20 * per_prompt / 12.5e9) < 1e-9


def test_simulate_disaggregated_flags_refuse_bad_input(ladder_bin):
    roofline = ["simulate", "--device", "h100-80g", "--preset", "llama3-8b", "--num-prompts", "4"]
    assert "together" in run_failing(ladder_bin, *roofline, "--decode-replicas", "2")
    assert "not both" in run_failing(ladder_bin, *roofline, "--replicas", "2",
                                     "--prefill-replicas", "1", "--decode-replicas", "1")
    assert "--kv-link-gbps" in run_failing(ladder_bin, *roofline, "--prefill-replicas", "1",
                                           "--decode-replicas", "1", "--kv-link-gbps", "0")
    assert "--max-replicas" in run_failing(ladder_bin, *roofline, "--prefill-replicas", "1",
                                           "--decode-replicas", "1", "--find-min-replicas",
                                           "--slo-ttft-ms", "100", "--max-replicas", "1")


def test_simulate_finds_the_fewest_prefill_and_decode_replicas(ladder_bin, tmp_path):
    # 2,048-token prompts at 10/s need about 4 prefill replicas for a 1 s TTFT
    # (one takes about 270 ms a prompt); 256-token outputs, one decode replica.
    out = tmp_path / "split.json"
    run = subprocess.run([ladder_bin, "simulate", "--device", "h100-80g", "--preset", "llama3-8b",
                          "--prefill-replicas", "1", "--decode-replicas", "1", "--dataset",
                          "random", "--input-len", "2048", "--output-len", "256",
                          "--num-prompts", "300", "--request-rate", "10", "--slo-ttft-ms", "1000",
                          "--slo-tpot-ms", "30", "--find-min-replicas", "--no-progress",
                          "--json", str(out)], check=True, capture_output=True, text=True,
                         timeout=120)
    simulated = json.loads(out.read_text())["simulated"]
    tried = simulated["replicas_tried"]
    pairs = [(row["prefill_replicas"], row["decode_replicas"]) for row in tried]
    assert len(pairs) == len(set(pairs)), pairs
    found = (simulated["prefill_replicas"], simulated["decode_replicas"])
    assert found in pairs and simulated["mode"] == "disaggregated"
    row = tried[pairs.index(found)]
    assert row["slo_attainment"] >= 0.99 and row["replicas"] == sum(found)
    # One fewer prefill replica falls short of the TTFT SLO (the prefill floor is exact).
    fewer = (found[0] - 1, found[1])
    assert fewer[0] == 0 or (fewer in pairs and tried[pairs.index(fewer)]["ttft_attainment"] < 0.99)
    assert f"{found[0]} prefill + {found[1]} decode" in run.stdout


def test_simulate_plot_draws_a_rate_sweep_and_the_replica_search(ladder_bin, tmp_path):
    import shutil
    import pytest
    if shutil.which("gnuplot") is None:
        pytest.skip("gnuplot is not installed (Debian: gnuplot-nox): ladder simulate draws no charts")
    roofline = ["simulate", "--device", "h100-80g", "--preset", "llama3-8b", "--dataset",
                "random", "--input-len", "512", "--output-len", "32", "--num-prompts", "100",
                "--no-progress"]
    sweep = tmp_path / "sweep"
    subprocess.run([ladder_bin, *roofline, "--replicas", "2", "--sweep-request-rate", "5,20,40",
                    "--plot", str(sweep)], check=True, capture_output=True, timeout=120)
    levels = [line for line in (sweep / "bench_levels.dat").read_text().splitlines()
              if not line.startswith("#")]
    assert len(levels) == 3
    search = tmp_path / "search"
    subprocess.run([ladder_bin, *roofline, "--request-rate", "30", "--slo-ttft-ms", "500",
                    "--slo-tpot-ms", "50", "--find-min-replicas", "--plot", str(search)],
                   check=True, capture_output=True, timeout=120)
    tried = [line.split() for line in (search / "sim_replicas.dat").read_text().splitlines()
             if not line.startswith("#")]
    assert [int(row[0]) for row in tried] == sorted(int(row[0]) for row in tried)
    assert float(tried[-1][1]) >= 99.0
    for folder, script in ((sweep, "bench_charts.gp"), (search, "sim_replicas.gp")):
        # The scripts left beside the charts draw them again without error.
        redrawn = subprocess.run(["gnuplot", script], cwd=folder, capture_output=True,
                                 timeout=60)
        assert redrawn.returncode == 0, redrawn.stderr
    for chart in ("ttft_vs_throughput", "latency_vs_throughput"):
        assert (sweep / f"{chart}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (sweep / f"{chart}.svg").read_text().lstrip().startswith("<?xml")
    assert (search / "slo_attainment_vs_replicas.png").stat().st_size > 1000
    split = tmp_path / "split"
    subprocess.run([ladder_bin, *roofline, "--prefill-replicas", "1", "--decode-replicas", "1",
                    "--request-rate", "20", "--slo-ttft-ms", "500", "--slo-tpot-ms", "50",
                    "--find-min-replicas", "--plot", str(split)],
                   check=True, capture_output=True, timeout=120)
    rows = [line.split() for line in (split / "sim_replicas.dat").read_text().splitlines()
            if not line.startswith("#")]
    assert all(int(row[0]) == int(row[2]) + int(row[3]) for row in rows), rows
    redrawn = subprocess.run(["gnuplot", "sim_replicas.gp"], cwd=split, capture_output=True,
                             timeout=60)
    assert redrawn.returncode == 0, redrawn.stderr


def test_simulate_sweep_refuses_what_it_cannot_combine(ladder_bin, tmp_path):
    roofline = ["simulate", "--device", "h100-80g", "--preset", "llama3-8b", "--num-prompts", "4"]
    assert "--sweep-request-rate" in run_failing(ladder_bin, *roofline, "--sweep-request-rate",
                                                 "5,0")
    assert "--json" in run_failing(ladder_bin, *roofline, "--sweep-request-rate", "5,10",
                                   "--json", str(tmp_path / "x.json"))
