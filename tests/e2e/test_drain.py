"""SIGTERM and SIGINT: the server stops taking work (503, /health 503),
finishes what is in flight within --drain-timeout, aborts the rest, and
exits 0."""

import json
import signal
import time

import http_raw
from ladder_server import start_server

COMPLETIONS = "/v1/completions"


class StreamUnderway:
    """A streaming request that has sent its first event."""

    def __init__(self, server, max_tokens, timeout=60.0):
        self.sock = http_raw.open_stream(server, COMPLETIONS, {
            "prompt": "Tell me about rivers.", "max_tokens": max_tokens, "ignore_eos": True,
            "stream": True})
        self.sock.settimeout(timeout)
        self.data = b""
        while b"data: " not in self.data:
            chunk = self.sock.recv(4096)
            assert chunk, "the stream closed before its first event"
            self.data += chunk

    def still_running(self):
        """Takes what has arrived, without waiting: true while [DONE] has not."""
        timeout = self.sock.gettimeout()
        self.sock.setblocking(False)
        try:
            while chunk := self.sock.recv(65536):
                self.data += chunk
            return False  # closed
        except BlockingIOError:
            return b"[DONE]" not in self.data
        finally:
            self.sock.settimeout(timeout)

    def finish(self):
        """Reads to the end; returns the SSE payloads and the last choice."""
        while chunk := self.sock.recv(65536):
            self.data += chunk
        self.sock.close()
        _, _, body = self.data.partition(b"\r\n\r\n")
        events = http_raw.sse_events(http_raw.dechunk(body))
        assert events[-1] == "[DONE]"
        return json.loads(events[-2])["choices"][0]


def wait_until_draining(server, timeout=10.0):
    """Asks /health at once, and again only while the signal is not yet seen."""
    deadline = time.monotonic() + timeout
    while True:
        status, _, body = http_raw.request_json(server, "GET", "/health", auth=False)
        if status == 503:
            assert body["status"] == "draining"
            return
        assert status == 200 and time.monotonic() < deadline, f"/health: {status} {body}"
        time.sleep(0.01)


def test_sigterm_finishes_in_flight_streams_then_exits_0():
    server = start_server("--drain-timeout", "600")
    try:
        # The checks below take milliseconds, the stream hundreds of decode
        # steps: it is still running on any CPU (asserted, so that the test
        # is of a drain), and ends well inside the drain timeout on a slow one.
        stream = StreamUnderway(server, max_tokens=400)
        server.process.send_signal(signal.SIGTERM)
        wait_until_draining(server)
        status, _, error = http_raw.request_json(server, "POST", COMPLETIONS,
                                                 {"prompt": "Hi", "max_tokens": 2})
        assert status == 503, error
        assert stream.still_running(), "the stream ended before the drain began"
        assert stream.finish()["finish_reason"] == "length"
        assert server.process.wait(30) == 0
    finally:
        server.stop(signal.SIGKILL)


def test_drain_timeout_aborts_what_is_left():
    server = start_server("--drain-timeout", "1")
    try:
        stream = StreamUnderway(server, max_tokens=5000)
        start = time.monotonic()
        server.process.send_signal(signal.SIGINT)
        # The one case a client sees "abort": the server is going away.
        assert stream.finish()["finish_reason"] == "abort"
        assert server.process.wait(30) == 0
        assert time.monotonic() - start < 15
    finally:
        server.stop(signal.SIGKILL)
