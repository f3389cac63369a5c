"""--speculative-config on `generate` and `run`: the same greedy tokens as
without it, the acceptance figures in generate's summary, and a bad config
refused with one line that names what is wrong."""

import json
import re
import subprocess

from conftest import run_ladder_json
from test_generate import generate

COPY_PROMPT = ("Repeat this list exactly: apples, pears, plums, cherries, lemons, figs, dates. "
               "Repeat this list exactly: apples, pears, plums, cherries, lemons, figs, dates. "
               "Repeat this list exactly:")
NGRAM = json.dumps({"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 3,
                    "prompt_lookup_min": 2})
SUFFIX = json.dumps({"method": "suffix", "num_speculative_tokens": 4})
SUMMARY = re.compile(r"speculative decoding: acceptance rate ([\d.]+)%, acceptance length ([\d.]+), "
                     r"(\d+) drafts, (\d+) draft tokens, (\d+) accepted")


def test_generate_with_each_drafter_gives_the_same_tokens(ladder_bin, default_model, tmp_path):
    # The same request twice, one after the other: suffix drafts from the first.
    lines = [{"prompt": COPY_PROMPT, "max_tokens": 24, "temperature": 0}] * 2
    flags = ("--max-num-seqs", "1")
    plain = generate(ladder_bin, default_model, tmp_path, lines, *flags)
    for config in (NGRAM, SUFFIX):
        requests = tmp_path / "requests.jsonl"
        results = tmp_path / "results.jsonl"
        requests.write_text("".join(json.dumps(line) + "\n" for line in lines))
        done = subprocess.run([ladder_bin, "generate", "-m", default_model, "-i", str(requests), "-o",
                               str(results), "--no-progress", *flags, "--speculative-config", config],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        speculative = [json.loads(line) for line in results.read_text().splitlines()]
        assert [r["text"] for r in speculative] == [r["text"] for r in plain], config
        summary = SUMMARY.search(done.stderr)
        assert summary, done.stderr
        drafts, drafted, accepted = (int(summary.group(i)) for i in (3, 4, 5))
        assert 0 < accepted <= drafted and drafts > 0, done.stderr


def test_run_with_speculation_gives_the_same_tokens(ladder_bin, default_model):
    args = ("run", "-m", default_model, "-p", COPY_PROMPT, "-n", "20", "--temp", "0", "--json",
            "--no-timings")
    plain = run_ladder_json(ladder_bin, *args)
    speculative = run_ladder_json(ladder_bin, *args, "--speculative-config", NGRAM)
    assert speculative["text"] == plain["text"]


def test_a_fixed_draft_length_is_taken_and_keeps_the_models_tokens(ladder_bin, default_model):
    """"adaptive": false (draft num_speculative_tokens at every step, as vLLM
    does) is a key the flag takes; every draft is then full length where the
    lookup matched, and the output is still the model's own."""
    args = ("run", "-m", default_model, "-p", COPY_PROMPT, "-n", "20", "--temp", "0", "--json",
            "--no-timings")
    plain = run_ladder_json(ladder_bin, *args)
    fixed = json.dumps({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 3,
                        "prompt_lookup_min": 2, "adaptive": False})
    speculative = run_ladder_json(ladder_bin, *args, "--speculative-config", fixed)
    assert speculative["text"] == plain["text"]
    drafts = speculative["spec_decode_num_drafts"]
    assert speculative["spec_decode_draft_tokens"] == 3 * drafts and drafts > 0, speculative


def test_a_bad_speculative_config_is_refused_by_name(ladder_bin, default_model):
    cases = {
        '{"method": "ngram", "num_speculative_tokens": 4, "lookahead": 2}': "lookahead",
        '{"method": "medusa", "num_speculative_tokens": 4}': "medusa",
        '{"method": "ngram"}': "num_speculative_tokens",
        '{"method": "ngram", "num_speculative_tokens": 4, "adaptive": "no"}': "adaptive",
        '{"method": "suffix", "num_speculative_tokens": 4, "prompt_lookup_max": 3}': "prompt_lookup_max",
        "not json": "JSON",
        # Not the flag's error but the file's: the path is named.
        '{"method": "draft_model", "num_speculative_tokens": 4, "model": "/nonexistent.gguf"}':
            "/nonexistent.gguf",
    }
    for config, named in cases.items():
        done = subprocess.run([ladder_bin, "run", "-m", default_model, "-p", "Hi", "-n", "2",
                               "--speculative-config", config], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 1, (config, done.stderr)
        assert named in done.stderr, (config, done.stderr)
        assert "--speculative-config" in done.stderr or "model" in config, (config, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
