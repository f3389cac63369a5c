#!/usr/bin/env python3
"""Constrained decode against unconstrained through `ladder serve`.

A constrained round sends B concurrent streaming chat requests, each with its
own schema of tests/e2e/structured_schemas.py as response_format json_schema
and that schema's prompt, greedily; the matched unconstrained round sends the
same messages without response_format, with ignore_eos and max_tokens set to
the number of tokens the constrained answer had (counted in a warm-up pass),
so both rounds generate exactly the same number of tokens from the same
prompts. The two alternate, round after round, each going first in every
other pair, so a noisy neighbour and the prefix cache weigh on both alike. Reported per
kind: output tok/s (completion tokens / wall time of the round) and decode
tok/s (the round's tokens after each stream's first / the streams' mean time
from first token to [DONE]); and the ratio constrained / unconstrained of each.

    python3 scripts/bench_structured.py --batch 1 --rounds 5
    python3 scripts/bench_structured.py --batch 8 --rounds 5
"""
import argparse
import asyncio
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "e2e"))
sys.path.insert(0, os.path.dirname(__file__))
from bench_serve import sse_chunks, start_server  # noqa: E402
from structured_schemas import PROMPTS, SCHEMAS  # noqa: E402

# Schemas whose greedy answers run longest on the small models: nested
# objects, arrays and recursion, where the grammar does the most work.
DEFAULT_SCHEMAS = ["nested_address", "object_array", "map_of_integers", "recursive_list",
                   "person", "ref_points", "one_of_tagged", "string_array"]


async def one_stream(host, port, body):
    """Returns (completion tokens, finish reason, seconds to first token, seconds to [DONE])."""
    start = time.perf_counter()
    first_token = None
    usage = None
    finish = None
    async for chunk in sse_chunks(host, port, "/v1/chat/completions", body):
        if chunk.get("usage"):
            usage = chunk["usage"]
        for choice in chunk.get("choices", []):
            if first_token is None and choice.get("delta", {}).get("content"):
                first_token = time.perf_counter() - start
            finish = choice.get("finish_reason") or finish
    if usage is None:
        raise SystemExit("a stream ended without its usage chunk")
    return usage["completion_tokens"], finish, first_token or 0.0, time.perf_counter() - start


def request_body(name, max_tokens, constrained, n_tokens=None):
    body = {"messages": [{"role": "user", "content": PROMPTS[name]}], "temperature": 0,
            "stream": True, "stream_options": {"include_usage": True}}
    if constrained:
        body["max_tokens"] = max_tokens
        body["response_format"] = {"type": "json_schema",
                                   "json_schema": {"name": name, "schema": SCHEMAS[name]}}
    else:
        body["max_tokens"] = n_tokens
        body["ignore_eos"] = True
    return body


async def one_round(host, port, bodies):
    start = time.perf_counter()
    results = await asyncio.gather(*(one_stream(host, port, body) for body in bodies))
    wall = time.perf_counter() - start
    tokens = sum(r[0] for r in results)
    decode_tokens = sum(max(r[0] - 1, 0) for r in results)
    mean_decode_seconds = statistics.mean(r[3] - r[2] for r in results)
    return {"tokens": [r[0] for r in results], "finish": [r[1] for r in results],
            "output_tps": tokens / wall, "wall_s": wall,
            "decode_tps": decode_tokens / max(mean_decode_seconds, 1e-9)}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ladder", default="build/bin/ladder")
    parser.add_argument("-m", "--model", default="")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch", type=int, default=1, help="concurrent requests per round")
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--rounds", type=int, default=5, help="pairs of rounds")
    parser.add_argument("--schemas", default=",".join(DEFAULT_SCHEMAS),
                        help="comma-separated names from tests/e2e/structured_schemas.py")
    parser.add_argument("extra", nargs="*", help="more flags for ladder serve (after --)")
    args = parser.parse_args()
    names = args.schemas.split(",")
    for name in names:
        if name not in SCHEMAS:
            raise SystemExit(f"no schema named {name!r} in tests/e2e/structured_schemas.py")

    process, host, port = start_server(args.ladder, args.model, args.threads,
                                       max(args.batch, 1), args.extra)
    ratios = {"output_tps": [], "decode_tps": []}
    try:
        # Round r runs schemas r*B .. r*B+B-1 (cycling), so each round's
        # batch mixes schemas. A first pass compiles every grammar (the
        # server caches them) and counts each greedy answer's tokens, so no
        # timed round pays for a compile and either kind may go first.
        batches = [[names[(r * args.batch + i) % len(names)] for i in range(args.batch)]
                   for r in range(args.rounds)]
        n_tokens = {}
        for name in names:
            warm = asyncio.run(one_round(host, port, [request_body(name, args.max_tokens, True)]))
            n_tokens[name] = warm["tokens"][0]
            print(f"warm-up {name}: {n_tokens[name]} tokens, finish {warm['finish'][0]}",
                  flush=True)
        for r, batch in enumerate(batches):
            kinds = {
                "constrained": [request_body(n, args.max_tokens, True) for n in batch],
                "unconstrained": [request_body(n, args.max_tokens, False, n_tokens[n])
                                  for n in batch],
            }
            # Alternate which kind goes first: the second finds the prompts cached.
            order = ["constrained", "unconstrained"][::1 if r % 2 == 0 else -1]
            results = {kind: asyncio.run(one_round(host, port, kinds[kind])) for kind in order}
            constrained, plain = results["constrained"], results["unconstrained"]
            if plain["tokens"] != constrained["tokens"]:
                raise SystemExit(f"unmatched token counts: {plain['tokens']} vs "
                                 f"{constrained['tokens']}")
            for key in ratios:
                ratios[key].append(constrained[key] / plain[key])
            print(f"round {r + 1} ({','.join(batch)}; {sum(constrained['tokens'])} tokens; "
                  f"{order[0]} first): output tok/s constrained {constrained['output_tps']:.1f}, "
                  f"unconstrained {plain['output_tps']:.1f} "
                  f"({ratios['output_tps'][-1]:.3f}); decode tok/s "
                  f"{constrained['decode_tps']:.1f} vs {plain['decode_tps']:.1f} "
                  f"({ratios['decode_tps'][-1]:.3f})", flush=True)
    finally:
        process.terminate()
        process.wait(60)
    print(f"batch {args.batch}, {args.threads} threads, {args.rounds} pairs: constrained / "
          f"unconstrained output tok/s median {statistics.median(ratios['output_tps']):.3f} "
          f"(min {min(ratios['output_tps']):.3f}), decode tok/s median "
          f"{statistics.median(ratios['decode_tps']):.3f} (min {min(ratios['decode_tps']):.3f})")


if __name__ == "__main__":
    os.environ.pop("LADDER_API_KEY", None)
    main()
