"""The front door against an attacker on loopback: every request is bounded
(header section, body however framed, codings, time), a web page in the
user's browser cannot use the server (Host, Origin, Content-Type), and a
client that stops reading its stream is dropped with its KV blocks freed."""

import gzip
import json
import socket
import threading
import time


import http_raw
from ladder_server import start_server
from test_disconnect_and_load import ABORTED

CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"


def rss_bytes(server):
    with open(f"/proc/{server.process.pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def read_response(sock, timeout=30):
    """Reads until the server closes; returns (status, head, body bytes)."""
    sock.settimeout(timeout)
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), head.decode().lower(), body


def raw_exchange(server, head, body_parts=(), timeout=30):
    """Sends a request head and body pieces on a fresh connection and reads
    the answer, even when the server answered before the body was all sent."""
    sock = socket.create_connection((server.host, server.port), timeout=timeout)
    try:
        sock.sendall(head)
        for part in body_parts:
            try:
                sock.sendall(part)
            except (BrokenPipeError, ConnectionResetError):
                break  # the server answered and stopped reading: fine
        return read_response(sock, timeout)
    finally:
        sock.close()


def post_head(server, path, extra=""):
    return (f"POST {path} HTTP/1.1\r\nHost: {server.host}:{server.port}\r\n"
            f"Authorization: Bearer {server.api_key}\r\nContent-Type: application/json\r\n"
            f"{extra}Connection: close\r\n\r\n").encode()


def error_code_of(body):
    return json.loads(body)["error"]["code"]


class PeakRss:
    """The server's largest RSS while a block runs, sampled every 5 ms."""

    def __init__(self, server):
        self.server = server
        self.peak = rss_bytes(server)
        self.done = threading.Event()

    def __enter__(self):
        self.before = rss_bytes(self.server)
        self.thread = threading.Thread(target=self.sample)
        self.thread.start()
        return self

    def sample(self):
        while not self.done.wait(0.005):
            self.peak = max(self.peak, rss_bytes(self.server))

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()


def test_9_mib_chunked_body_is_413_without_growing_the_server(server):
    piece = b'{"prompt": "' + b"a" * (64 << 10)
    chunk = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    n_chunks = (9 << 20) // len(piece) + 1
    with PeakRss(server) as rss:
        status, _, body = raw_exchange(server, post_head(server, COMPLETIONS,
                                                         "Transfer-Encoding: chunked\r\n"),
                                       [chunk] * n_chunks + [b"0\r\n\r\n"])
    assert status == 413, body
    assert error_code_of(body) == "request_too_large"
    growth = rss.peak - rss.before
    print(f"peak RSS growth while a 9 MiB chunked body is refused: {growth / 2**20:.1f} MiB")
    assert growth < 64 << 20


def test_a_declared_length_over_the_limit_is_413_before_the_body(server):
    status, _, body = raw_exchange(server, post_head(server, COMPLETIONS,
                                                     f"Content-Length: {9 << 20}\r\n"))
    assert status == 413 and error_code_of(body) == "request_too_large"


def test_gzip_body_is_415(server):
    bomb = gzip.compress(b'{"prompt": "' + b" " * (4 << 20) + b'"}')
    status, _, body = raw_exchange(server, post_head(server, COMPLETIONS,
                                                     "Content-Encoding: gzip\r\n"
                                                     f"Content-Length: {len(bomb)}\r\n"),
                                   [bomb])
    assert status == 415, body
    assert error_code_of(body) == "unsupported_content_encoding"


def test_100_kib_header_is_431(server):
    head = (f"GET /health HTTP/1.1\r\nHost: {server.host}\r\nX-Fill: {'a' * (100 << 10)}\r\n"
            "\r\n").encode()
    status, _, body = raw_exchange(server, head)
    assert status == 431, body
    assert error_code_of(body) == "request_header_fields_too_large"


def test_foreign_host_is_refused(server):
    """A DNS-rebinding page talks to 127.0.0.1 under its own name."""
    for host in ("evil.example", "evil.example:8080"):
        status, _, error = http_raw.request_json(server, "GET", "/v1/models",
                                                 headers={"Host": host})
        assert status == 403 and error["error"]["code"] == "host_not_allowed", error
    for host in (f"localhost:{server.port}", f"127.0.0.1:{server.port}"):
        assert http_raw.request(server, "GET", "/v1/models", headers={"Host": host})[0] == 200


def test_foreign_origin_is_refused(server):
    status, _, error = http_raw.request_json(
        server, "POST", COMPLETIONS, {"prompt": "Hi", "max_tokens": 1},
        headers={"Origin": "http://evil.example"})
    assert status == 403 and error["error"]["code"] == "origin_not_allowed", error
    # Nor may it ask first.
    status, headers, _ = http_raw.request(server, "OPTIONS", COMPLETIONS, auth=False, headers={
        "Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})
    assert status == 403 and "access-control-allow-origin" not in headers


def test_text_plain_post_is_415(server):
    """What a page can send cross-origin without a preflight never reaches the engine."""
    for content_type in ("text/plain", "application/x-www-form-urlencoded",
                         "multipart/form-data; boundary=x"):
        status, _, error = http_raw.request_json(
            server, "POST", COMPLETIONS, b'{"prompt": "Hi", "max_tokens": 1}',
            headers={"Content-Type": content_type})
        assert status == 415 and error["error"]["code"] == "unsupported_media_type", error


def test_allowed_origin_gets_cors():
    server = start_server("--allowed-origins", "http://localhost:3000")
    try:
        origin = {"Origin": "http://localhost:3000"}
        status, headers, _ = http_raw.request(server, "OPTIONS", CHAT, auth=False, headers={
            **origin, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, x-stainless-os"})
        assert status == 204
        assert headers["access-control-allow-origin"] == "http://localhost:3000"
        assert "POST" in headers["access-control-allow-methods"]
        assert "x-stainless-os" in headers["access-control-allow-headers"]
        status, headers, body = http_raw.request_json(
            server, "POST", CHAT, {"messages": [{"role": "user", "content": "Hi"}],
                                   "max_tokens": 2}, headers=origin)
        assert status == 200, body
        assert headers["access-control-allow-origin"] == "http://localhost:3000"
        # The server's own page, and a host named with --allowed-hosts' default.
        own = {"Origin": f"http://127.0.0.1:{server.port}"}
        assert http_raw.request(server, "GET", "/v1/models", headers=own)[0] == 200
    finally:
        assert server.stop() == 0


def test_a_client_that_stops_reading_its_stream_is_dropped_and_its_blocks_freed(server):
    """Its writes back up; after --timeout (3 s) the server drops it and
    aborts its requests. The opening burst (echoed prompts) is far more than
    the socket buffers hold."""
    before = http_raw.metrics(server)
    text = " ".join(["The quick brown fox jumps over the lazy dog."] * 250)
    body = json.dumps({"prompt": [text, text + " Again."], "n": 16, "echo": True,
                       "max_tokens": 1000, "ignore_eos": True, "stream": True}).encode()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((server.host, server.port))
    try:
        sock.sendall(post_head(server, COMPLETIONS, f"Content-Length: {len(body)}\r\n") + body)
        assert sock.recv(100).startswith(b"HTTP/1.1 200")
        # ... and read no more.
        deadline = time.monotonic() + 30
        while True:
            values = http_raw.metrics(server)
            dropped = http_raw.metric(values, "ladder:http_slow_readers_dropped_total") - \
                http_raw.metric(before, "ladder:http_slow_readers_dropped_total")
            if dropped >= 1:
                break
            assert time.monotonic() < deadline, "the stalled reader was never dropped"
            time.sleep(0.2)
    finally:
        sock.close()
    # All 32 choices end as aborted (at the engine's next step, which may
    # still be the first prefill on a busy machine), and nothing is left.
    deadline = time.monotonic() + 60
    while http_raw.metric(http_raw.metrics(server), ABORTED) - \
            http_raw.metric(before, ABORTED) < 32:
        assert time.monotonic() < deadline, "the dropped stream's requests were not aborted"
        time.sleep(0.2)
    http_raw.wait_for_idle(server, timeout=30)
