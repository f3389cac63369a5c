"""A throwaway redis-server on a free loopback port (no persistence), for the
remote KV tier's tests and benchmarks: started ready to answer, stopped or
killed on demand."""

import shutil
import signal
import socket
import subprocess
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    def __init__(self, *extra_args, timeout=10):
        assert shutil.which("redis-server"), "redis-server is not installed: run `make deps`"
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--protected-mode", "no", *extra_args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while self.cli("PING") != "PONG":
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop(signal.SIGKILL)
                raise RuntimeError(f"redis-server on port {self.port} did not answer PING")
            time.sleep(0.05)

    def cli(self, *args):
        done = subprocess.run(["redis-cli", "-p", str(self.port), *args],
                              capture_output=True, text=True, timeout=10)
        return done.stdout.strip()

    def stop(self, sig=signal.SIGTERM):
        if self.process.poll() is None:
            self.process.send_signal(sig)
            self.process.wait(10)

    def kill(self):
        self.stop(signal.SIGKILL)
