"""Starting and stopping a fleet (scripts/fleet.sh: redis-server, ladder
replicas, HAProxy) on free loopback ports for the tests, and talking to its
HAProxy admin socket."""

import collections
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time

import http_raw
from ladder_server import DEFAULT_MODEL, ROOT, ladder_bin

FLEET_SCRIPT = os.path.join(ROOT, "scripts", "fleet.sh")
ROLLING_UPDATE_SCRIPT = os.path.join(ROOT, "scripts", "rolling_update.sh")
READY = "fleet: ready:"


def free_ports(count):
    """Ports the kernel had free a moment ago (bound together, so distinct)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


class Replica:
    """What a test needs of one replica: its HAProxy name and its own address."""

    def __init__(self, fleet, index):
        self.name = f"replica{index}"
        self.host = "127.0.0.1"
        self.api_key = None
        with open(os.path.join(fleet.directory, f"{self.name}.port")) as f:
            self.port = int(f.read())
        self.fleet = fleet

    @property
    def pid(self):
        with open(os.path.join(self.fleet.directory, f"{self.name}.pid")) as f:
            return int(f.read())


class Fleet:
    """A running scripts/fleet.sh; `host`, `port` and `api_key` are HAProxy's,
    so http_raw's helpers take a Fleet as they take a Server."""

    def __init__(self, directory, replicas=2, timeout=180, serve_args="--kv-cache-mem 256MiB",
                 routing="prefix", kv_remote=True, threads=1, trace_dir=None):
        self.directory = str(directory)
        self.host = "127.0.0.1"
        self.api_key = None
        ports = free_ports(replicas + 2)
        self.port, redis_port, replica_ports = ports[0], ports[1], ports[2:]
        self.base_url = f"http://{self.host}:{self.port}"
        env = dict(os.environ, FLEET_REPLICAS=str(replicas), FLEET_THREADS=str(threads),
                   FLEET_PORT=str(self.port),
                   FLEET_REDIS_PORT=str(redis_port),
                   FLEET_REPLICA_PORTS=" ".join(map(str, replica_ports)),
                   FLEET_DIR=self.directory, LADDER=ladder_bin(), LADDER_MODEL=DEFAULT_MODEL,
                   FLEET_SERVE_ARGS=serve_args, FLEET_ROUTING=routing,
                   FLEET_KV_REMOTE="1" if kv_remote else "0",
                   FLEET_TRACE_DIR=str(trace_dir or ""))
        env.pop("LADDER_API_KEY", None)
        # A session of its own, so a failed test can still stop every process.
        self.process = subprocess.Popen([FLEET_SCRIPT], env=env, stderr=subprocess.PIPE,
                                        text=True, start_new_session=True)
        self.log = []
        ready = threading.Event()
        threading.Thread(target=self._read_log, args=(ready,), daemon=True).start()
        deadline = time.monotonic() + timeout
        while not ready.wait(0.2):
            if self.process.poll() is not None:
                raise AssertionError(f"fleet.sh exited {self.process.returncode}: {self.log}")
            if time.monotonic() > deadline:
                self.kill()
                raise AssertionError(f"the fleet was not ready within {timeout}s: {self.log}")
        self.replicas = [Replica(self, i + 1) for i in range(replicas)]

    def _read_log(self, ready):
        for line in self.process.stderr:
            self.log.append(line)
            if line.startswith(READY):
                ready.set()

    def admin(self, command):
        """One command to HAProxy's runtime API; returns its answer."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            s.connect(os.path.join(self.directory, "admin.sock"))
            s.sendall(command.encode() + b"\n")
            answer = b""
            while chunk := s.recv(65536):
                answer += chunk
        return answer.decode()

    def replica_stats(self):
        """HAProxy's stats of each replica of the ladder backend, by name:
        a dict of its columns (status, scur, ...)."""
        lines = self.admin("show stat").splitlines()
        columns = lines[0].lstrip("# ").split(",")
        rows = (dict(zip(columns, line.split(","))) for line in lines[1:] if line)
        return {row["svname"]: row for row in rows
                if row["pxname"] == "ladder" and row["svname"] not in ("FRONTEND", "BACKEND")}

    def server_status(self, name):
        """HAProxy's status of a replica: UP, DOWN, DRAIN, MAINT, ..."""
        stats = self.replica_stats()
        assert name in stats, f"{name} not in haproxy's stats"
        return stats[name]["status"]

    def wait_idle(self, timeout=10):
        """Waits until HAProxy counts no session on any replica. Its bounded
        load (hash-balance-factor) sends a request past its hashed replica
        while that one still holds a session, as the previous request's can
        for a moment after its response."""
        deadline = time.monotonic() + timeout
        while busy := [name for name, row in self.replica_stats().items()
                       if row["scur"] not in ("", "0")]:
            assert time.monotonic() < deadline, f"{busy} still hold sessions"
            time.sleep(0.02)

    def wait_status(self, name, status, timeout=30):
        deadline = time.monotonic() + timeout
        while (current := self.server_status(name)) != status:
            assert time.monotonic() < deadline, f"{name} is {current}, not {status}"
            time.sleep(0.1)

    def stop(self, timeout=90):
        """SIGTERM, as a service manager would (fleet.sh traps it as it does
        Ctrl-C; SIGINT is ignored by a shell that a non-interactive shell
        started in the background): fleet.sh stops every process; returns
        its status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.process.returncode

    def kill(self):
        """Every process of the fleet: its session, and the replicas a rolling
        update started (in the session of whoever ran it)."""
        for name in os.listdir(self.directory):
            if re.fullmatch(r"replica\d+\.pid", name):
                with open(os.path.join(self.directory, name)) as f:
                    try:
                        os.kill(int(f.read()), signal.SIGKILL)
                    except (ProcessLookupError, ValueError):
                        pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()


# One request of a StreamingLoad: when it started and ended (monotonic
# seconds), "ok" or what went wrong, and the replica that answered.
StreamResult = collections.namedtuple("StreamResult", "start end outcome replica")


class StreamingLoad:
    """Clients that each send streaming completions (every prompt its own)
    one after another until stopped, and keep what each request got."""

    def __init__(self, fleet, clients, max_tokens):
        self.fleet = fleet
        self.max_tokens = max_tokens
        self.stopping = threading.Event()
        self.results = []
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._client, args=(c,)) for c in range(clients)]
        for thread in self.threads:
            thread.start()

    def _client(self, client):
        n = 0
        while not self.stopping.is_set():
            start = time.monotonic()
            outcome, replica = self._one(
                f"Customer {client} asks question {n}: where are the nails?")
            with self.lock:
                self.results.append(StreamResult(start, time.monotonic(), outcome, replica))
            n += 1

    def _one(self, prompt):
        """'ok', or what went wrong: a status, a cut stream, a short answer."""
        connection = http.client.HTTPConnection(self.fleet.host, self.fleet.port, timeout=120)
        replica = None
        try:
            connection.request("POST", "/v1/completions", json.dumps({
                "prompt": prompt, "max_tokens": self.max_tokens, "ignore_eos": True,
                "stream": True, "stream_options": {"include_usage": True}}),
                {"Content-Type": "application/json"})
            response = connection.getresponse()
            replica = response.getheader("X-Ladder-Replica")
            if response.status != 200:
                return f"status {response.status}", replica
            body = response.read()  # IncompleteRead if the stream is cut
        except (OSError, http.client.HTTPException) as error:
            return f"failed: {type(error).__name__}", replica
        finally:
            connection.close()
        events = http_raw.sse_events(body)
        if not events or events[-1] != "[DONE]":
            return "truncated", replica
        usage = json.loads(events[-2])["usage"]
        if usage["completion_tokens"] != self.max_tokens:
            return f"short: {usage}", replica
        return "ok", replica

    def stop(self):
        self.stopping.set()
        for thread in self.threads:
            thread.join(300)
        return self.results
