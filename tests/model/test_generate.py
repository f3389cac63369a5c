"""`ladder generate`: many requests through the engine at once. Each answer
must be the one the same request gets alone from `ladder run`, in input
order, with usage that counts what was computed."""

import json
import subprocess

import pytest

from conftest import run_ladder, run_ladder_json

PROMPTS = [
    "The capital of France is",
    "List three colours:",
    "def fibonacci(n):",
    "Once upon a time, in a kingdom by the sea,",
]


def generate(ladder_bin, model, tmp_path, lines, *flags):
    requests = tmp_path / "requests.jsonl"
    requests.write_text("".join(json.dumps(line) + "\n" for line in lines))
    results = tmp_path / "results.jsonl"
    run_ladder(ladder_bin, "generate", "-m", model, "-i", str(requests), "-o", str(results),
               "--no-progress", *flags)
    return [json.loads(line) for line in results.read_text().splitlines()]


def test_batched_greedy_outputs_equal_ladder_run_alone(ladder_bin, default_model, tmp_path):
    lines = [{"prompt": p, "max_tokens": 12, "temperature": 0, "ignore_eos": True} for p in PROMPTS]
    # A small step budget makes the prompts share steps and split into chunks.
    results = generate(ladder_bin, default_model, tmp_path, lines, "--max-num-batched-tokens", "8",
                       "--max-num-seqs", "4")
    assert [r["index"] for r in results] == list(range(len(PROMPTS)))
    for prompt, result in zip(PROMPTS, results):
        alone = run_ladder_json(ladder_bin, "run", "-m", default_model, "-p", prompt, "-n", "12",
                                "--temp", "0", "--json", "--no-timings")
        assert result["text"] == alone["text"], prompt
        assert result["finish_reason"] == "length"
        usage = result["usage"]
        assert usage["completion_tokens"] == 12
        assert usage["prompt_tokens"] == len(alone["prompt_tokens"])
        assert usage["total_tokens"] == usage["prompt_tokens"] + 12
        timings = result["timings"]
        assert 0 <= timings["queue_s"] <= timings["ttft_s"] <= timings["e2e_s"]


def test_stop_string_n_and_seeds(ladder_bin, default_model, tmp_path):
    lines = [
        {"prompt": "1, 2, 3, 4,", "max_tokens": 16, "temperature": 0, "stop": [" 7"]},
        {"prompt": "Tell me a story.", "max_tokens": 8, "temperature": 0.9, "seed": 5, "n": 3},
        {"prompt": "Tell me a story.", "max_tokens": 8, "temperature": 0.9, "seed": 5, "n": 3},
    ]
    results = generate(ladder_bin, default_model, tmp_path, lines)
    counted = results[0]
    assert counted["finish_reason"] == "stop"
    assert " 7" not in counted["text"] and counted["text"].strip().startswith("5")
    first, second = results[1], results[2]
    assert len(first["choices"]) == 3
    # The same seed gives the same choices, whatever else ran beside them.
    assert [c["text"] for c in first["choices"]] == [c["text"] for c in second["choices"]]
    # One prompt, counted once, however many choices share it.
    alone = generate(ladder_bin, default_model, tmp_path, [dict(lines[1], n=1)])[0]
    assert first["usage"]["prompt_tokens"] == alone["usage"]["prompt_tokens"]
    assert first["usage"]["completion_tokens"] == sum(len(c["token_ids"]) for c in first["choices"])


def test_chat_messages_and_prefix_cache(ladder_bin, default_model, tmp_path):
    system = "You are a terse assistant. " * 12
    lines = [{"messages": [{"role": "system", "content": system},
                           {"role": "user", "content": q}], "max_tokens": 6, "temperature": 0}
             for q in ("What is 2+2?", "Name a fruit.")]
    # One at a time, so the second request finds the first one's blocks.
    results = generate(ladder_bin, default_model, tmp_path, lines, "--max-num-seqs", "1",
                       "--max-num-batched-tokens", "512")
    assert results[0]["usage"]["prompt_tokens_details"]["cached_tokens"] == 0
    cached = results[1]["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert cached >= 64 and cached % 16 == 0
    uncached = generate(ladder_bin, default_model, tmp_path, lines, "--max-num-seqs", "1",
                        "--no-prefix-cache")
    assert [r["text"] for r in uncached] == [r["text"] for r in results]
    assert uncached[1]["usage"]["prompt_tokens_details"]["cached_tokens"] == 0


def test_bad_line_is_named_and_nothing_runs(ladder_bin, default_model, tmp_path):
    requests = tmp_path / "requests.jsonl"
    requests.write_text('{"prompt": "fine"}\n{"prompt": "bad", "temperature": -1}\n')
    result = subprocess.run([ladder_bin, "generate", "-m", default_model, "-i", str(requests),
                             "--no-progress"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert result.stdout == ""
    assert "line 2" in result.stderr and "temperature" in result.stderr


def test_prompt_over_the_context_limit_is_refused(ladder_bin, default_model, tmp_path):
    requests = tmp_path / "requests.jsonl"
    requests.write_text(json.dumps({"prompt": "word " * 100, "max_tokens": 64}) + "\n")
    result = subprocess.run([ladder_bin, "generate", "-m", default_model, "-i", str(requests),
                             "--max-model-len", "128", "--no-progress"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert "line 1" in result.stderr and "context limit" in result.stderr


def generate_summary(ladder_bin, model, tmp_path, lines, *flags):
    """Runs generate; returns (results, stderr)."""
    requests = tmp_path / "requests.jsonl"
    requests.write_text("".join(json.dumps(line) + "\n" for line in lines))
    results = tmp_path / "results.jsonl"
    done = subprocess.run([ladder_bin, "generate", "-m", model, "-i", str(requests), "-o",
                           str(results), "--no-progress", *flags],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in results.read_text().splitlines()], done.stderr


def support_bot_lines(n_questions):
    # The support-bot shape: one 3,000-token block, then a short question of
    # its own (token ids, so the lengths are exact).
    block = [1000 + (i * 7919) % 28000 for i in range(3000)]
    return [{"prompt": block + [5000 + q * 10 + k for k in range(8)], "max_tokens": 2,
             "temperature": 0, "ignore_eos": True} for q in range(n_questions)]


@pytest.fixture(scope="module")
def second_question_cold(ladder_bin, default_model, tmp_path_factory):
    """The second support-bot question's answer, computed with no cache at all:
    what every cached path below must give (one 3,000-token prefill, once)."""
    results, _ = generate_summary(ladder_bin, default_model, tmp_path_factory.mktemp("cold"),
                                  support_bot_lines(2)[1:], "--no-prefix-cache")
    return results[0]["text"]


def test_second_request_with_a_3000_token_block_computes_only_the_rest(
        ladder_bin, default_model, tmp_path, second_question_cold):
    lines = support_bot_lines(2)
    results, stderr = generate_summary(ladder_bin, default_model, tmp_path, lines,
                                       "--max-num-seqs", "1")
    assert results[0]["usage"]["prompt_tokens_details"]["cached_tokens"] == 0
    assert results[1]["usage"]["prompt_tokens_details"]["cached_tokens"] >= 2992
    # The engine looked up both prompts and found the block's 187 full blocks once.
    assert "prefix cache: 2992 of 6016 prompt tokens found" in stderr
    assert results[1]["text"] == second_question_cold


def test_disk_tier_serves_the_block_after_a_restart(ladder_bin, default_model, tmp_path,
                                                     second_question_cold):
    disk = tmp_path / "kv"
    lines = support_bot_lines(2)
    first, _ = generate_summary(ladder_bin, default_model, tmp_path, lines[:1],
                                "--kv-disk-cache", str(disk))
    files = sorted(disk.glob("*.kvb"))  # beside them: checksum.key, model-identities
    assert len(files) == 188  # every full block of the 3,008-token prompt
    # A new process (a restart): the block comes from disk, the answer is unchanged.
    second, stderr = generate_summary(ladder_bin, default_model, tmp_path, lines[1:],
                                      "--kv-disk-cache", str(disk))
    assert second[0]["usage"]["prompt_tokens_details"]["cached_tokens"] == 2992
    assert second[0]["text"] == second_question_cold
    # A corrupted block file is refused and deleted, never loaded: the chain
    # stops before it.
    with open(files[0], "r+b") as f:
        f.seek(200)
        f.write(b"\xff\xff\xff\xff")
    third, _ = generate_summary(ladder_bin, default_model, tmp_path, lines[1:],
                                "--kv-disk-cache", str(disk))
    assert third[0]["text"] == second_question_cold
    assert third[0]["usage"]["prompt_tokens_details"]["cached_tokens"] < 2992
