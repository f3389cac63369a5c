"""Starting and stopping a real `ladder serve` on a free loopback port for the
end-to-end tests. (Not in conftest.py, which test modules could not import
by name next to tests/model's own conftest.)"""

import os
import re
import select
import signal
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_MODEL = os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
MODEL_NAME = "SmolLM2-135M-Instruct.Q4_1"
GEMMA3_MODEL = os.path.join(ROOT, "models", "gemma-3-270m-q4_k_m.gguf")
API_KEY = "e2e-test-key"
READY = re.compile(r"listening on http://([0-9.]+):(\d+)")


class Server:
    """One `ladder serve` process and where to reach it."""

    def __init__(self, process, host, port, api_key):
        self.process = process
        self.host = host
        self.port = port
        self.api_key = api_key
        self.base_url = f"http://{host}:{port}"

    def stop(self, sig=signal.SIGTERM, timeout=30):
        """Signals the server and returns its exit status."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def ladder_bin():
    path = os.environ.get("LADDER_BIN", os.path.join(ROOT, "build", "bin", "ladder"))
    assert os.path.exists(path), f"ladder binary not found at {path}: run `make build`"
    return path


def start_server(*flags, api_key=API_KEY, timeout=60, model=DEFAULT_MODEL, threads=2,
                 wrapper=(), stderr=None, preexec_fn=None):
    """Starts `ladder serve --port 0` with flags and waits for its ready line.
    wrapper: a command that runs it (as `setpriv ...`); stderr and preexec_fn
    go to Popen."""
    assert os.path.exists(model), f"{model} missing: run `make model` (or `make model-gemma3`)"
    command = [*wrapper, ladder_bin(), "serve", "-m", model, "--host", "127.0.0.1",
               "--port", "0", "-t", str(threads), *flags]
    if "--kv-cache-mem" not in flags:
        command += ["--kv-cache-mem", "256MiB"]
    if api_key:
        command += ["--api-key", api_key]
    env = dict(os.environ)
    env.pop("LADDER_API_KEY", None)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True, env=env,
                               preexec_fn=preexec_fn)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.5)
        if ready:
            line = process.stdout.readline()
            match = READY.search(line)
            if match:
                return Server(process, match.group(1), int(match.group(2)), api_key)
        if process.poll() is not None:
            raise AssertionError(f"ladder serve exited {process.returncode} before it was ready")
    process.kill()
    raise AssertionError("ladder serve printed no ready line within the timeout")
