"""Raw HTTP for what the SDK will not send: malformed bodies, wrong types,
bodies too large, missing or wrong keys, unknown routes and methods, and
clients that stall. Every error is OpenAI-shaped with the right status, and
none of them is a 500."""

import socket
import time

import pytest

import http_raw
from ladder_server import MODEL_NAME

CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"


def assert_error(status, body, expected_status, param=None, code=None):
    assert status == expected_status, f"status {status}, body {body}"
    error = body["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["message"]
    if param is not None:
        assert error["param"] == param, error
    if code is not None:
        assert error["code"] == code, error


def test_malformed_json_is_400(server):
    for body in (b"{", b"not json", b'{"prompt": "x",}', b""):
        status, _, error = http_raw.request_json(server, "POST", COMPLETIONS, body)
        assert_error(status, error, 400)


def test_body_that_is_not_utf8_is_400(server):
    # A UTF-16 byte-order mark: not UTF-8 at all.
    status, _, error = http_raw.request_json(server, "POST", COMPLETIONS, b"\xff\xfe")
    assert_error(status, error, 400)


@pytest.mark.parametrize("text", [
    b"caf\xe9",          # a Latin-1 byte
    b"\xed\xa0\x80",     # a surrogate encoded as UTF-8 bytes
    b"\\ud800",          # a lone high surrogate as a JSON escape
    b"x\\udc00y",        # a lone low surrogate as a JSON escape
], ids=["latin1-byte", "utf8-encoded-surrogate", "lone-high-surrogate", "lone-low-surrogate"])
def test_string_that_is_not_unicode_is_400(server, text):
    for path, body in (
            (COMPLETIONS, b'{"prompt": "' + text + b'", "max_tokens": 1}'),
            (CHAT, b'{"messages": [{"role": "user", "content": "' + text + b'"}], "max_tokens": 1}')):
        status, _, error = http_raw.request_json(server, "POST", path, body)
        assert_error(status, error, 400)


def test_body_that_is_not_an_object_is_400(server):
    for body in (b"[]", b'"string"', b"3", b"null"):
        status, _, error = http_raw.request_json(server, "POST", CHAT, body)
        assert_error(status, error, 400)


@pytest.mark.parametrize("field, value", [
    ("max_tokens", -1),
    ("max_tokens", "ten"),
    ("max_tokens", 1.5),
    ("temperature", 2.5),
    ("temperature", "hot"),
    ("top_p", 0),
    ("top_k", -2),
    ("n", 17),
    ("n", 0),
    ("stop", 5),
    ("stop", ["a"] * 17),
    ("seed", "x"),
    ("logit_bias", {"-3": 1}),
    ("logit_bias", {"1": 500}),
    ("stream", "yes"),
    ("presence_penalty", 9),
])
def test_wrong_parameter_is_400_naming_it(server, field, value):
    body = {"model": MODEL_NAME, "prompt": "Hello", "max_tokens": 2, field: value}
    status, _, error = http_raw.request_json(server, "POST", COMPLETIONS, body)
    assert_error(status, error, 400, param=field)


@pytest.mark.parametrize("messages", [
    [],
    "hello",
    [{"content": "no role"}],
    [{"role": "wizard", "content": "hi"}],
    [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}],
    [{"role": "user", "content": 42}],
])
def test_bad_messages_are_400(server, messages):
    status, _, error = http_raw.request_json(server, "POST", CHAT,
                                             {"messages": messages, "max_tokens": 2})
    assert_error(status, error, 400, param="messages")


@pytest.mark.parametrize("prompt", [None, "", [], [[]], [1, "a"], [-1], [10 ** 9], {"a": 1}])
def test_bad_prompt_is_400(server, prompt):
    status, _, error = http_raw.request_json(server, "POST", COMPLETIONS,
                                             {"prompt": prompt, "max_tokens": 2})
    assert_error(status, error, 400, param="prompt")


def test_prompt_plus_max_tokens_over_the_context_is_400(server):
    status, _, error = http_raw.request_json(server, "POST", COMPLETIONS,
                                             {"prompt": "Hello", "max_tokens": 10 ** 6})
    assert_error(status, error, 400, param="max_tokens")
    long_prompt = " ".join(["word"] * 9000)
    status, _, error = http_raw.request_json(server, "POST", COMPLETIONS,
                                             {"prompt": long_prompt, "max_tokens": 1})
    assert_error(status, error, 400, param="prompt")


def test_content_parts_and_unknown_fields_are_accepted(server):
    body = {"messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
            "max_tokens": 2, "tools_unknown_field": {"x": 1}, "user": "someone"}
    status, _, response = http_raw.request_json(server, "POST", CHAT, body)
    assert status == 200, response
    assert response["choices"][0]["message"]["role"] == "assistant"


def test_huge_body_is_413(server):
    body = b'{"prompt": "' + b"a" * (9 << 20) + b'"}'
    status, _, error = http_raw.request_json(server, "POST", COMPLETIONS, body)
    assert_error(status, error, 413)


def test_missing_or_wrong_api_key_is_401(server):
    body = {"prompt": "Hi", "max_tokens": 2}
    status, headers, error = http_raw.request_json(server, "POST", COMPLETIONS, body, auth=False)
    assert_error(status, error, 401, code="invalid_api_key")
    assert headers.get("www-authenticate") == "Bearer"
    for value in ("Bearer wrong", "Bearer " + server.api_key + "x", "Basic " + server.api_key,
                  "Bearer " + server.api_key[:-1], server.api_key, "Bearer "):
        status, _, error = http_raw.request_json(server, "POST", COMPLETIONS, body, auth=False,
                                                 headers={"Authorization": value})
        assert_error(status, error, 401)
    # Every /v1 route and tokenize need it; health and metrics do not.
    for method, path in (("GET", "/v1/models"), ("POST", "/tokenize"), ("POST", "/detokenize")):
        status, _, _ = http_raw.request(server, method, path, b"{}", auth=False)
        assert status == 401
    for path in ("/health", "/metrics"):
        assert http_raw.request(server, "GET", path, auth=False)[0] == 200


def test_unknown_route_is_404(server):
    for method, path in (("GET", "/v2/models"), ("POST", "/v1/embeddings"), ("GET", "/nope")):
        status, _, error = http_raw.request_json(server, method, path, b"{}")
        assert_error(status, error, 404)


def test_wrong_method_is_405_with_allow(server):
    for method, path, allowed in (("GET", COMPLETIONS, "POST"), ("DELETE", CHAT, "POST"),
                                  ("POST", "/v1/models", "GET"), ("PUT", "/health", "GET")):
        status, headers, error = http_raw.request_json(server, method, path, b"{}")
        assert_error(status, error, 405, code="method_not_allowed")
        assert headers["allow"] == allowed


def test_slow_client_does_not_stall_others(server):
    """One client sends half its headers and stalls, another opens a stream
    and never reads it: a third is served as if they were not there, and
    the stalled request gets 408 after the server's request timeout (3 s)."""
    stalled = socket.create_connection((server.host, server.port), timeout=30)
    stalled.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le")
    unread = http_raw.open_stream(server, COMPLETIONS, {
        "prompt": "Tell me a story", "max_tokens": 300, "stream": True, "ignore_eos": True})
    try:
        start = time.monotonic()
        status, _, body = http_raw.request_json(server, "POST", COMPLETIONS,
                                                {"prompt": "Hi", "max_tokens": 3})
        assert status == 200, body
        assert time.monotonic() - start < 20
        start = time.monotonic()
        answer = b""
        while chunk := stalled.recv(4096):
            answer += chunk
        assert time.monotonic() - start < 10, "the stalled connection was not closed in time"
        assert answer.startswith(b"HTTP/1.1 408"), answer
        assert b'"code":"request_timeout"' in answer
    finally:
        stalled.close()
        unread.close()
