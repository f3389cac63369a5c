# shellcheck shell=bash
# Shared by scripts/fleet.sh and scripts/rolling_update.sh: where a fleet's
# state lives, how a replica starts, and how to talk to HAProxy's admin socket.
# A fleet directory holds, per replica N: replicaN.port, replicaN.pid,
# replicaN.log; and replica.env (the serve command's settings), haproxy.cfg,
# admin.sock, haproxy.log, redis.log.

fleet_log() { echo "fleet: $*" >&2; }

# Whether PID is running (an exited child not yet reaped counts as gone).
alive() {
    local pid="$1"
    [ -r "/proc/$pid/stat" ] || return 1
    local state
    state="$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -c1)"
    [ -n "$state" ] && [ "$state" != Z ]
}

# Sends one runtime API command to HAProxy and prints its answer.
haproxy_admin() {
    local socket="$1" command="$2"
    python3 - "$socket" "$command" <<'PY'
import socket, sys
connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
connection.settimeout(5)
connection.connect(sys.argv[1])
connection.sendall(sys.argv[2].encode() + b"\n")
answer = b""
while chunk := connection.recv(65536):
    answer += chunk
sys.stdout.write(answer.decode())
PY
}

# Waits until GET URL/health answers 200; fails after TIMEOUT seconds or as
# soon as PID has exited.
wait_healthy() {
    local url="$1" pid="$2" timeout="$3"
    local deadline=$((SECONDS + timeout))
    until [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url/health")" = 200 ]; do
        if ! alive "$pid"; then
            fleet_log "the replica at $url (pid $pid) exited before it was healthy"
            return 1
        fi
        if ((SECONDS >= deadline)); then
            fleet_log "the replica at $url was not healthy within ${timeout}s"
            return 1
        fi
        sleep 0.2
    done
}

# Starts replica INDEX of the fleet in DIR with BINARY and MODEL, in the
# background, its output in DIR/replicaINDEX.log; records its pid.
# replica.env gives the rest: FLEET_HOST, FLEET_THREADS, KV_REMOTE_ARGS,
# FLEET_SERVE_ARGS (arrays, as `declare -p` wrote them) and FLEET_TRACE_DIR
# (empty: no trace; a restarted replica's trace replaces its predecessor's).
start_replica() {
    local dir="$1" index="$2" binary="$3" model="$4"
    # shellcheck disable=SC1091
    source "$dir/replica.env"
    local port trace_args=()
    port="$(cat "$dir/replica$index.port")"
    if [ -n "${FLEET_TRACE_DIR:-}" ]; then
        trace_args=(--trace "$FLEET_TRACE_DIR/replica$index.trace.json")
    fi
    "$binary" serve -m "$model" --host "$FLEET_HOST" --port "$port" -t "$FLEET_THREADS" \
        "${KV_REMOTE_ARGS[@]}" "${trace_args[@]}" "${FLEET_SERVE_ARGS[@]}" \
        >>"$dir/replica$index.log" 2>&1 &
    echo $! >"$dir/replica$index.pid"
}

# Sends SIGTERM (the replica drains) and waits up to TIMEOUT seconds for the
# process to go; then SIGKILL.
stop_pid() {
    local pid="$1" timeout="$2"
    kill -TERM "$pid" 2>/dev/null || return 0
    wait_gone "$pid" "$timeout"
}

# Waits up to TIMEOUT seconds for a process already sent SIGTERM to go; then
# SIGKILL.
wait_gone() {
    local pid="$1" timeout="$2"
    local deadline=$((SECONDS + timeout))
    while alive "$pid"; do
        if ((SECONDS >= deadline)); then
            kill -KILL "$pid" 2>/dev/null || true
            break
        fi
        sleep 0.1
    done
    # Reap it when it is our child; a replica started by another script is not.
    wait "$pid" 2>/dev/null || true
}
