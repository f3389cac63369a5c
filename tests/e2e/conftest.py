"""Fixtures of the end-to-end tests: the shared server, started once per
session and stopped (it must exit 0) at the end, and an openai client for it."""

import pytest

from ladder_server import start_server


@pytest.fixture(scope="session")
def server():
    """The shared server: a queue limit at the load test's size, short
    request and I/O timeouts so the slow-client tests finish quickly."""
    instance = start_server("--max-queue", "256", "--timeout", "3", "--request-timeout", "3")
    yield instance
    assert instance.stop() == 0, "ladder serve did not exit 0 on SIGTERM"


@pytest.fixture
def client(server):
    from openai import OpenAI
    return OpenAI(base_url=server.base_url + "/v1", api_key=server.api_key, max_retries=0,
                  timeout=120)
