#!/usr/bin/env python3
"""Speculative decoding on vs off: the workloads of docs/performance.md.

Each workload is one `ladder generate` call, run with speculation off and on
(the same binary, alternated, several rounds); the figure is the decode rate
(the sum over requests of 1 / TPOT, their time per output token after the
first) on over off, the median of the rounds' ratios.

  doc        a ~1,000-token document in the prompt, to be repeated (greedy)
  doc8       the same with 8 concurrent streams (8 documents)
  agent      ~20 rounds of one coding task with small changes, one after
             another (max-num-seqs 1), so the suffix index learns from the
             earlier rounds; the figure counts rounds 5.. only
  story      nothing to copy: a free story, temperature 0.8
  mixed      32 concurrent streams: documents and stories, greedy and sampled

    python3 scripts/bench_speculative.py --threads 2 --rounds 3 \\
        --workload doc --config '{"method": "ngram", "num_speculative_tokens": 5}'

The draft-model pair: --model build/fixtures/SmolLM2-135M-Instruct.Q8_0.gguf
(`make model-draft-pair`) with --config '{"method": "draft_model", "model":
"models/SmolLM2-135M-Instruct.Q4_1.gguf", "num_speculative_tokens": 4}'.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import tempfile

# Plain prose of about 1,000 tokens (SmolLM2's tokenizer), built from a fixed
# seed so that every run asks for the same documents.
SUBJECTS = ["The harbour office", "Our cooperative", "The night shift", "The county library",
            "The river survey team", "The bakery on Mill Street", "The school board",
            "The volunteer fire crew", "The repair workshop", "The weather station"]
VERBS = ["reported", "announced", "recorded", "confirmed", "noted", "explained", "described"]
OBJECTS = ["a steady rise in visitors over the spring", "that the east road will close for repairs",
           "a new schedule for the weekend ferries", "the results of the annual inventory",
           "that the old bridge needs a full inspection", "plans to open a second reading room",
           "a shortage of flour after the storm", "the purchase of two electric vans",
           "that water levels stayed below the warning mark", "a change in the opening hours"]
CLOSINGS = ["Residents can send questions to the front desk.", "A full report follows next month.",
            "The committee will meet again on Thursday.", "Details are posted at the town hall.",
            "Nobody was hurt, and work resumes tomorrow.", "The cost is covered by last year's fund."]


def document(seed, n_sentences=44):
    rng = random.Random(seed)
    sentences = []
    for _ in range(n_sentences):
        sentences.append(f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}.")
        if rng.random() < 0.4:
            sentences.append(rng.choice(CLOSINGS))
    paragraphs = [" ".join(sentences[i:i + 6]) for i in range(0, len(sentences), 6)]
    return "\n\n".join(paragraphs)


def chat(content, max_tokens, temperature=0.0, seed=None):
    request = {"messages": [{"role": "user", "content": content}], "max_tokens": max_tokens,
               "temperature": temperature}
    if seed is not None:
        request["seed"] = seed
    return request


def doc_request(seed, max_tokens=256):
    return chat("Repeat the following document word for word.\n\n" + document(seed), max_tokens)


def story_request(seed, max_tokens=192):
    return chat("Write a short story about a lighthouse keeper and a lost dog.", max_tokens, 0.8, seed)


TASKS = ["sums the even numbers", "counts the vowels", "reverses the words", "finds the largest number",
         "removes duplicates", "sorts the names", "joins the lines", "squares each number"]


def agent_requests(rounds=20):
    # One task, refined round by round, as an agent loop resends it.
    out = []
    for i in range(rounds):
        task = TASKS[i % len(TASKS)]
        out.append(chat(f"Round {i + 1}. Write a Python function `step_{i % 4}(items)` that {task} "
                        "in a list called items. Add a docstring, type hints and one example.", 160))
    return out


def workload(name):
    if name == "doc":
        return [doc_request(1)], {}
    if name == "doc8":
        return [doc_request(seed) for seed in range(1, 9)], {}
    if name == "agent":
        return agent_requests(), {"max_num_seqs": 1, "skip": 4}
    if name == "story":
        return [story_request(7)], {}
    if name == "mixed":
        requests = []
        for i in range(32):
            if i % 2 == 0:
                requests.append(doc_request(100 + i, 128))
            else:
                requests.append(story_request(i, 128))
        return requests, {}
    raise SystemExit(f"unknown workload {name}")


def run(args, requests, options, speculative):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "requests.jsonl")
        results = os.path.join(tmp, "results.jsonl")
        with open(path, "w") as f:
            for request in requests:
                f.write(json.dumps(request) + "\n")
        command = [args.ladder, "generate", "-i", path, "-o", results, "--no-progress",
                   "-t", str(args.threads),
                   "--max-num-seqs", str(options.get("max_num_seqs", len(requests)))]
        if args.model:
            command += ["-m", args.model]
        if speculative:
            command += ["--speculative-config", args.config]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
        with open(results) as f:
            lines = [json.loads(line) for line in f]
    summary = [line for line in done.stderr.splitlines() if "speculative decoding: acceptance" in line]
    kept = lines[options.get("skip", 0):]
    tpots = [line["timings"]["tpot_s"] for line in kept if line["timings"]["tpot_s"] > 0]
    if options.get("max_num_seqs") == 1:
        # One request at a time: the rate of the rounds together.
        rate = len(tpots) / sum(tpots)
    else:
        rate = sum(1.0 / t for t in tpots)
    return rate, [line["text"] for line in lines], summary[-1] if summary else ""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ladder", default="build/bin/ladder")
    parser.add_argument("--model", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workload", required=True, choices=["doc", "doc8", "agent", "story", "mixed"])
    parser.add_argument("--config", required=True, help="--speculative-config JSON")
    args = parser.parse_args()
    requests, options = workload(args.workload)
    ratios = []
    for round_ in range(args.rounds):
        off, off_texts, _ = run(args, requests, options, False)
        on, on_texts, summary = run(args, requests, options, True)
        greedy_same = all(r["temperature"] > 0 or a == b
                          for r, a, b in zip(requests, off_texts, on_texts))
        ratios.append(on / off)
        print(f"round {round_ + 1}: off {off:.1f} tok/s, on {on:.1f} tok/s, ratio {on / off:.2f}"
              f"{'' if greedy_same else ', GREEDY OUTPUTS DIFFER'}")
        print(f"  {summary}")
    print(f"{args.workload}: speed-up {statistics.median(ratios):.2f}x (median of {args.rounds} rounds,"
          f" {args.threads} threads)")


if __name__ == "__main__":
    main()
