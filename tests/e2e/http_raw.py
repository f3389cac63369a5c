"""Raw HTTP for what the SDK will not send or will not show: bodies that are
not JSON, missing headers, the SSE bytes themselves, clients that stall or
vanish. Standard library only."""

import asyncio
import http.client
import json
import socket
import time


def request(server, method, path, body=None, headers=None, auth=True, timeout=60):
    """Returns (status, headers as a dict with lower-case names, body bytes)."""
    connection = http.client.HTTPConnection(server.host, server.port, timeout=timeout)
    all_headers = {"Content-Type": "application/json"}
    if auth and server.api_key:
        all_headers["Authorization"] = f"Bearer {server.api_key}"
    all_headers.update(headers or {})
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
    try:
        connection.request(method, path, body=body, headers=all_headers)
        response = connection.getresponse()
        data = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data
    finally:
        connection.close()


def request_json(server, method, path, body=None, **kwargs):
    status, headers, data = request(server, method, path, body, **kwargs)
    return status, headers, json.loads(data) if data else None


def metrics(server):
    """GET /metrics as {name{labels}: value} and {bare name: value summed}."""
    status, _, data = request(server, "GET", "/metrics", auth=False)
    assert status == 200
    values = {}
    for line in data.decode().splitlines():
        if line and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            values[key] = float(value)
    return values


def metric(values, name):
    """The sum over label sets of one metric."""
    total = 0.0
    found = False
    for key, value in values.items():
        if key == name or key.startswith(name + "{"):
            total += value
            found = True
    assert found, f"metric {name} missing from /metrics"
    return total


def wait_for_idle(server, timeout=10.0):
    """Polls /metrics until nothing runs or waits and every KV block is free;
    returns the last /metrics."""
    deadline = time.monotonic() + timeout
    while True:
        values = metrics(server)
        busy = (metric(values, "ladder:num_requests_running"),
                metric(values, "ladder:num_requests_waiting"),
                metric(values, "ladder:kv_cache_blocks_used"))
        if busy == (0, 0, 0):
            return values
        assert time.monotonic() < deadline, f"running, waiting, blocks used: {busy}"
        time.sleep(0.1)


def sse_events(body):
    """The `data:` payloads of an SSE body, in order (comments skipped)."""
    events = []
    for block in body.decode().split("\n\n"):
        for line in block.splitlines():
            if line.startswith("data: "):
                events.append(line[len("data: "):])
    return events


def dechunk(data):
    """The body of a chunked HTTP/1.1 response."""
    body = b""
    while data:
        size_line, _, rest = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        body += rest[:size]
        data = rest[size + 2:]
    return body


def stream_request_bytes(server, path, payload):
    body = json.dumps(payload).encode()
    head = (f"POST {path} HTTP/1.1\r\nHost: {server.host}\r\n"
            f"Authorization: Bearer {server.api_key}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n")
    return head.encode() + body


def open_stream(server, path, payload, timeout=60):
    """A socket that has sent a streaming request; read it yourself."""
    sock = socket.create_connection((server.host, server.port), timeout=timeout)
    sock.sendall(stream_request_bytes(server, path, payload))
    return sock


async def stream_async(server, path, payload, timeout=120):
    """Sends a request on its own connection and reads the whole response.
    Returns (status, lower-case header text, SSE payloads or the JSON body)."""
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection(server.host, server.port), timeout)
    try:
        writer.write(stream_request_bytes(server, path, payload))
        await writer.drain()
        data = await asyncio.wait_for(reader.read(), timeout)
    finally:
        writer.close()
    head, _, rest = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    if b"transfer-encoding: chunked" in head.lower():
        rest = dechunk(rest)
    head = head.decode().lower()
    if status != 200:
        return status, head, json.loads(rest)
    return status, head, sse_events(rest)
