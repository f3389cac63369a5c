"""Shared fixtures of the model-level tests: the ladder binary, the default
model and the committed llama.cpp goldens."""

import json
import os
import subprocess

import pytest

# Cases marked long (minutes of CPU each, e.g. a 4,096-token context on both
# models) run only with LADDER_LONG_TESTS=1: `make test-long`.
RUN_LONG = os.environ.get("LADDER_LONG_TESTS") == "1"


def pytest_configure(config):
    config.addinivalue_line("markers", "long: minutes of CPU; run by `make test-long`")


def pytest_collection_modifyitems(config, items):
    if RUN_LONG:
        return
    skip = pytest.mark.skip(reason="long: `make test-long` (LADDER_LONG_TESTS=1) runs it")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_MODEL = os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")


@pytest.fixture(scope="session")
def ladder_bin():
    path = os.environ.get("LADDER_BIN", os.path.join(ROOT, "build", "bin", "ladder"))
    assert os.path.exists(path), f"ladder binary not found at {path}: run `make build`"
    return path


@pytest.fixture(scope="session")
def default_model():
    assert os.path.exists(DEFAULT_MODEL), (
        f"default model missing at {DEFAULT_MODEL}: run `make model`")
    return DEFAULT_MODEL


def load_goldens(model_path, name):
    stem = os.path.splitext(os.path.basename(model_path))[0]
    path = os.path.join(ROOT, "tests", "data", stem, name)
    assert os.path.exists(path), f"goldens missing: {path} (scripts/make_goldens.py makes them)"
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def run_ladder(ladder_bin, *args, timeout=600):
    """Runs ladder and returns stdout; fails the test with stderr on a non-zero exit."""
    result = subprocess.run([ladder_bin, *args], capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, (
        f"ladder {' '.join(args[:3])}... exited {result.returncode}: {result.stderr.strip()}")
    return result.stdout


def run_ladder_json(ladder_bin, *args, timeout=600):
    return json.loads(run_ladder(ladder_bin, *args, timeout=timeout))


def run_ladder_failing(ladder_bin, *args, timeout=120):
    """Runs ladder expecting a failure with a one-line error; returns that line."""
    result = subprocess.run([ladder_bin, *map(str, args)], capture_output=True, text=True,
                            timeout=timeout)
    assert result.returncode != 0, f"ladder {' '.join(map(str, args))} should have failed"
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, f"expected a one-line error, got: {result.stderr!r}"
    return lines[0]
