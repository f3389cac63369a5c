"""`--loop-priority`: the event loop's thread runs at the kernel's real-time
FIFO priority when asked and allowed, at normal priority otherwise, and a
refusal is a warning, never a server that does not start."""

import asyncio
import os
import resource
import shutil
import subprocess
import sys

import pytest

from http_raw import stream_async
from ladder_server import start_server

LOOP_THREAD = "ladder-http"
PROMPT = {"prompt": "The capital of France is", "max_tokens": 8, "temperature": 0,
          "stream": True}


def thread_policies(server):
    """{thread id: (name, scheduling policy)} of the server's threads."""
    tasks = f"/proc/{server.process.pid}/task"
    policies = {}
    for tid in os.listdir(tasks):
        with open(f"{tasks}/{tid}/comm") as comm:
            policies[int(tid)] = (comm.read().strip(), os.sched_getscheduler(int(tid)))
    return policies


def loop_thread_policy(server):
    """The scheduling policy of the server's event-loop thread."""
    loop = [policy for name, policy in thread_policies(server).values() if name == LOOP_THREAD]
    assert len(loop) == 1, f"{len(loop)} {LOOP_THREAD} threads"
    return loop[0]


def realtime_allowed():
    """Whether a process started as the server is may take SCHED_FIFO."""
    probe = "import os; os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


def streams_text(server):
    status, _, events = asyncio.run(stream_async(server, "/v1/completions", PROMPT))
    assert status == 200
    assert events[-1] == "[DONE]" and len(events) > 2


def test_the_loop_runs_at_normal_priority_by_default():
    server = start_server(threads=1)
    try:
        assert loop_thread_policy(server) == os.SCHED_OTHER
        streams_text(server)
    finally:
        assert server.stop() == 0


def test_realtime_puts_the_loop_ahead_of_normal_threads():
    if not realtime_allowed():
        pytest.skip("this environment may not use SCHED_FIFO")
    server = start_server("--loop-priority", "realtime", threads=2)
    try:
        assert loop_thread_policy(server) == os.SCHED_FIFO
        # Only the loop: the engine's, the handlers' and the main thread stay normal.
        others = [(name, policy) for name, policy in thread_policies(server).values()
                  if name != LOOP_THREAD]
        assert len(others) >= 3, others
        assert {policy for _, policy in others} == {os.SCHED_OTHER}, others
        streams_text(server)
    finally:
        assert server.stop() == 0


def without_realtime_privilege():
    """How to start the server so that the kernel refuses it SCHED_FIFO: as it
    is where this process may not use it; else with CAP_SYS_NICE dropped from
    the bounding set (so even root lacks it) and no real-time rlimit. None
    where neither is possible."""
    if not realtime_allowed():
        return {}
    setpriv = shutil.which("setpriv")
    drop = (setpriv, "--bounding-set", "-sys_nice", "--inh-caps", "-sys_nice") if setpriv else None
    if drop is None or subprocess.run([*drop, "true"], capture_output=True).returncode != 0:
        return None

    def no_realtime_rlimit():
        resource.setrlimit(resource.RLIMIT_RTPRIO, (0, 0))

    return {"wrapper": drop, "preexec_fn": no_realtime_rlimit}


def test_a_refused_realtime_priority_warns_and_serves_at_normal_priority():
    how = without_realtime_privilege()
    if how is None:
        pytest.skip("cannot take CAP_SYS_NICE away here (setpriv missing or not permitted)")
    server = start_server("--loop-priority", "realtime", threads=1, stderr=subprocess.PIPE, **how)
    try:
        assert loop_thread_policy(server) == os.SCHED_OTHER
        streams_text(server)
    finally:
        assert server.stop() == 0
    warnings = server.process.stderr.read()
    assert "--loop-priority realtime refused" in warnings
    assert "normal priority" in warnings
