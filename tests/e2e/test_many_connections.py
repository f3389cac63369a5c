"""Thousands of connections cost no threads: a thousand clients trickling
their headers a byte a second do not slow /health, SIGTERM still exits
within the drain timeout, and 5,000 idle keep-alive connections are held in
a bounded amount of memory. The test process raises its own open-files
limit to hold its side of them."""

import resource
import signal
import socket
import time

import pytest

import http_raw
from ladder_server import start_server


def rss_bytes(process):
    with open(f"/proc/{process.pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.fixture(scope="module", autouse=True)
def enough_open_files():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 6000:
        pytest.skip(f"the open-files hard limit is {hard}: 6,000 sockets do not fit")
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def connect_many(server, n):
    sockets = []
    for _ in range(n):
        sock = socket.create_connection((server.host, server.port), timeout=10)
        sockets.append(sock)
    return sockets


def health_seconds(server):
    start = time.monotonic()
    status, _, _ = http_raw.request(server, "GET", "/health", auth=False, timeout=5)
    assert status == 200
    return time.monotonic() - start


def test_a_thousand_trickling_clients_do_not_slow_health_and_sigterm_still_exits():
    server = start_server("--drain-timeout", "5")
    sockets = []
    try:
        sockets = connect_many(server, 1000)
        header = (f"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: {'a' * 200}\r\n").encode()
        worst = 0.0
        for second in range(8):
            tick = time.monotonic()
            for sock in sockets:
                sock.send(header[second:second + 1])
            while time.monotonic() - tick < 1.0:
                worst = max(worst, health_seconds(server))
                time.sleep(0.1)
        print(f"/health took at most {worst * 1000:.0f} ms beside 1,000 trickling clients")
        assert worst < 1.0
        start = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(30) == 0
        elapsed = time.monotonic() - start
        print(f"SIGTERM to exit with 1,000 connections open: {elapsed:.2f} s")
        assert elapsed < 5.0
    finally:
        for sock in sockets:
            sock.close()
        server.stop(signal.SIGKILL)


def test_5000_idle_keep_alive_connections_are_held_in_bounded_memory():
    server = start_server("--max-connections", "6000", "--keep-alive-timeout", "120")
    sockets = []
    try:
        before = rss_bytes(server.process)
        sockets = connect_many(server, 5000)
        request = f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode()
        for sock in sockets:
            sock.sendall(request)
        for sock in sockets:
            answer = b""
            while not answer.endswith(b'{"status":"ok"}'):
                chunk = sock.recv(4096)
                assert chunk, "a keep-alive connection was closed"
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 200") and b"connection: close" not in answer.lower()
        time.sleep(0.5)
        growth = rss_bytes(server.process) - before
        gauge = http_raw.metric(http_raw.metrics(server), "ladder:http_connections")
        print(f"5,000 idle keep-alive connections: server RSS grew {growth / 2**20:.1f} MiB "
              f"({growth / 5000 / 1024:.1f} KiB each)")
        assert gauge >= 5000
        assert growth < 64 << 20
        # Still held, and still served.
        assert health_seconds(server) < 1.0
    finally:
        for sock in sockets:
            sock.close()
        assert server.stop() == 0


def test_a_full_server_makes_room_for_another_address():
    """One address holds every place with idle connections; a client from
    another loopback address still gets in, in place of one of them."""
    server = start_server("--max-connections", "20", "--keep-alive-timeout", "120")
    sockets = []
    try:
        sockets = connect_many(server, 20)
        time.sleep(0.3)
        other = socket.socket()
        other.bind(("127.0.0.2", 0))
        other.settimeout(10)
        other.connect((server.host, server.port))
        other.sendall(f"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                      .encode())
        answer = b""
        while chunk := other.recv(4096):
            answer += chunk
        other.close()
        assert answer.startswith(b"HTTP/1.1 200"), answer
        values = http_raw.metrics(server)
        assert http_raw.metric(values, "ladder:http_connections_evicted_total") >= 1
        # Full again, with nobody else asking: the first address may not
        # displace its own connections, and is refused with 503.
        time.sleep(0.3)
        sockets += connect_many(server, 1)
        time.sleep(0.3)
        extra = socket.create_connection((server.host, server.port), timeout=10)
        sockets.append(extra)
        data = extra.recv(4096)
        assert data.startswith(b"HTTP/1.1 503") and b"too_many_connections" in data, data
    finally:
        for sock in sockets:
            sock.close()
        assert server.stop() == 0
