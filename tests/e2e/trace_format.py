"""A checker of Chrome's trace-event format (the JSON that Perfetto UI and
chrome://tracing read), strict where ladder's traces promise more than the
format needs: every slice nests or is disjoint on its thread, every async
begin has its end, every flow id one start and one end."""

import collections
import json

PHASES = set("XBEbenstfCMi")
# Timestamps are written in microseconds with three decimals: a child may
# end a rounding step after its parent.
ROUNDING_US = 0.002


def load(path):
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)  # fails the test if the file is not valid JSON
    assert isinstance(trace, dict) and isinstance(trace.get("traceEvents"), list), (
        "a trace is an object with a traceEvents array")
    return trace["traceEvents"]


def _check_event_fields(event):
    assert isinstance(event, dict), f"an event is an object: {event!r}"
    phase = event.get("ph")
    assert phase in PHASES, f"unknown phase {phase!r} in {event}"
    assert isinstance(event.get("name"), str) and event["name"], f"no name: {event}"
    assert isinstance(event.get("pid"), int) and isinstance(event.get("tid"), int), event
    if phase == "M":
        assert event["name"] in ("thread_name", "process_name"), event
        assert isinstance(event["args"]["name"], str), event
        return
    assert isinstance(event.get("ts"), (int, float)) and event["ts"] >= 0, event
    if phase == "X":
        assert isinstance(event.get("dur"), (int, float)) and event["dur"] >= 0, (
            f"a complete event needs a duration: {event}")
    if phase in "bensft":
        assert isinstance(event.get("id"), (str, int)), f"async and flow events need ids: {event}"
    if phase == "C":
        assert event.get("args") and all(
            isinstance(v, (int, float)) for v in event["args"].values()), event


def _check_nesting(slices):
    """Slices of one thread, as (start, end, name): each nests in the one open or follows it."""
    stack = []
    for start, end, name in sorted(slices, key=lambda s: (s[0], -s[1])):
        while stack and stack[-1][1] <= start + ROUNDING_US:
            stack.pop()
        if stack:
            parent = stack[-1]
            assert end <= parent[1] + ROUNDING_US, (
                f"slice {name} [{start}, {end}] overlaps {parent[2]} [{parent[0]}, {parent[1]}] "
                "without nesting in it")
        stack.append((start, end, name))


def validate(events):
    """Asserts the format's rules; returns the events grouped by phase."""
    by_phase = collections.defaultdict(list)
    duration_stacks = collections.defaultdict(list)   # (pid, tid) -> open B names
    async_stacks = collections.defaultdict(list)      # (cat, id) -> open b names
    flows = {}                                        # id -> "open" | "closed"
    slices = collections.defaultdict(list)
    for event in events:
        _check_event_fields(event)
        phase = event["ph"]
        by_phase[phase].append(event)
        if phase == "X":
            slices[(event["pid"], event["tid"])].append(
                (event["ts"], event["ts"] + event["dur"], event["name"]))
        elif phase == "B":
            duration_stacks[(event["pid"], event["tid"])].append(event["name"])
        elif phase == "E":
            stack = duration_stacks[(event["pid"], event["tid"])]
            assert stack, f"E without its B: {event}"
            stack.pop()
        elif phase == "b":
            async_stacks[(event.get("cat"), event["id"])].append(event["name"])
        elif phase == "e":
            stack = async_stacks[(event.get("cat"), event["id"])]
            assert stack and stack[-1] == event["name"], (
                f"async end {event['name']} does not match the open span {stack[-1:]}: {event}")
            stack.pop()
        elif phase == "n":
            assert async_stacks[(event.get("cat"), event["id"])], (
                f"async instant outside its span: {event}")
        elif phase == "s":
            assert event["id"] not in flows, f"flow {event['id']} started twice"
            flows[event["id"]] = "open"
        elif phase in "tf":
            assert flows.get(event["id"]) == "open", f"flow {phase} without an open start: {event}"
            if phase == "f":
                flows[event["id"]] = "closed"
    for key, stack in duration_stacks.items():
        assert not stack, f"B without E on thread {key}: {stack}"
    for key, stack in async_stacks.items():
        assert not stack, f"async spans never ended for {key}: {stack}"
    for flow_id, state in flows.items():
        assert state == "closed", f"flow {flow_id} has no end"
    for thread, thread_slices in slices.items():
        _check_nesting(thread_slices)
    return by_phase


def thread_names(events):
    return {e["tid"]: e["args"]["name"] for e in events
            if e["ph"] == "M" and e["name"] == "thread_name"}


def request_spans(events):
    """The ids of the requests' top-level async spans, begun and ended."""
    begun = [e["id"] for e in events if e["ph"] == "b" and e["name"] == "request"]
    ended = [e["id"] for e in events if e["ph"] == "e" and e["name"] == "request"]
    return begun, ended
