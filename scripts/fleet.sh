#!/usr/bin/env bash
# `make fleet`: a fleet on one machine, in the foreground. redis-server (the
# shared KV tier), FLEET_REPLICAS `ladder serve` replicas and HAProxy in front
# (deploy/haproxy.cfg: prompt-prefix affinity, health checks, retries).
# Ctrl-C (or SIGTERM) stops them all: the replicas drain first.
#
# Settings (environment):
#   FLEET_REPLICAS          replicas (default 2)
#   FLEET_PORT              HAProxy's port (default 8080)
#   FLEET_REPLICA_PORTS     the replicas' ports, space-separated (default 8081, 8082, ...)
#   FLEET_REDIS_PORT        redis-server's port (default 6380)
#   FLEET_REDIS_MAXMEMORY   Redis's memory limit, least recently used keys out (default 1gb)
#   FLEET_HOST              the address everything binds (default 127.0.0.1)
#   FLEET_THREADS           -t of each replica (default 1)
#   FLEET_DIR               state, logs, config and admin socket (default .fleet)
#   FLEET_SERVE_ARGS        more `ladder serve` flags for every replica
#   FLEET_ROUTING           prefix (default: by prompt prefix) or roundrobin (for comparison)
#   FLEET_KV_REMOTE         1 (default): replicas share KV blocks through redis-server; 0: each
#                           replica keeps its own cache only (to measure what routing alone does)
#   FLEET_TRACE_DIR         when set, each replica writes `ladder serve --trace` there as
#                           replicaN.trace.json (on stopping), e.g. for `ladder simulate
#                           calibrate --from-trace`
#   LADDER                  the binary (default build/bin/ladder)
#   LADDER_MODEL            the model (default models/SmolLM2-135M-Instruct.Q4_1.gguf)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/fleet_lib.sh
source scripts/fleet_lib.sh

FLEET_REPLICAS="${FLEET_REPLICAS:-2}"
FLEET_PORT="${FLEET_PORT:-8080}"
FLEET_REDIS_PORT="${FLEET_REDIS_PORT:-6380}"
FLEET_REDIS_MAXMEMORY="${FLEET_REDIS_MAXMEMORY:-1gb}"
FLEET_HOST="${FLEET_HOST:-127.0.0.1}"
FLEET_THREADS="${FLEET_THREADS:-1}"
FLEET_ROUTING="${FLEET_ROUTING:-prefix}"
FLEET_KV_REMOTE="${FLEET_KV_REMOTE:-1}"
FLEET_DIR="$(realpath -m "${FLEET_DIR:-.fleet}")"
LADDER="$(realpath -m "${LADDER:-build/bin/ladder}")"
LADDER_MODEL="$(realpath -m "${LADDER_MODEL:-models/SmolLM2-135M-Instruct.Q4_1.gguf}")"
read -r -a FLEET_SERVE_ARGS <<<"${FLEET_SERVE_ARGS:-}"
FLEET_TRACE_DIR="${FLEET_TRACE_DIR:+$(realpath -m "$FLEET_TRACE_DIR")}"
read -r -a replica_ports <<<"${FLEET_REPLICA_PORTS:-}"
if ((${#replica_ports[@]} == 0)); then
    for ((index = 1; index <= FLEET_REPLICAS; index++)); do
        replica_ports+=($((FLEET_PORT + index)))
    done
fi
if ((${#replica_ports[@]} != FLEET_REPLICAS)); then
    fleet_log "FLEET_REPLICA_PORTS names ${#replica_ports[@]} ports for $FLEET_REPLICAS replicas"
    exit 2
fi
case "$FLEET_ROUTING" in
prefix) balance="" ;;
roundrobin) balance="roundrobin" ;;
*) fleet_log "FLEET_ROUTING is prefix or roundrobin, not $FLEET_ROUTING"; exit 2 ;;
esac
[ -x "$LADDER" ] || { fleet_log "$LADDER missing: run \`make build\`"; exit 1; }
[ -f "$LADDER_MODEL" ] || { fleet_log "$LADDER_MODEL missing: run \`make model\`"; exit 1; }

# The shared KV tier: each replica reads the prefix blocks the others
# computed from Redis. This is the one place the fleet turns it on.
case "$FLEET_KV_REMOTE" in
1) KV_REMOTE_ARGS=(--kv-remote "redis://127.0.0.1:$FLEET_REDIS_PORT") ;;
0) KV_REMOTE_ARGS=() ;;
*) fleet_log "FLEET_KV_REMOTE is 1 or 0, not $FLEET_KV_REMOTE"; exit 2 ;;
esac

mkdir -p "$FLEET_DIR"
chmod 700 "$FLEET_DIR"
rm -f "$FLEET_DIR"/replica*.pid "$FLEET_DIR"/replica*.port "$FLEET_DIR/admin.sock"
declare -p FLEET_HOST FLEET_THREADS KV_REMOTE_ARGS FLEET_SERVE_ARGS FLEET_TRACE_DIR LADDER \
    LADDER_MODEL FLEET_REPLICAS >"$FLEET_DIR/replica.env"

redis_pid=""
haproxy_pid=""
stopping=0
# shellcheck disable=SC2317  # run from the traps below
stop_all() {
    ((stopping)) && return
    stopping=1
    trap '' INT TERM
    fleet_log "stopping"
    # Replicas first (each drains its in-flight requests), HAProxy and Redis last.
    local pids=()
    for pid_file in "$FLEET_DIR"/replica*.pid; do
        [ -f "$pid_file" ] && pids+=("$(cat "$pid_file")")
    done
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait_gone "$pid" 60; done
    [ -n "$haproxy_pid" ] && stop_pid "$haproxy_pid" 10
    [ -n "$redis_pid" ] && stop_pid "$redis_pid" 10
    rm -f "$FLEET_DIR"/replica*.pid
    fleet_log "stopped"
}
trap 'stop_all; exit 0' INT TERM
trap 'stop_all' EXIT

redis-server --bind 127.0.0.1 --port "$FLEET_REDIS_PORT" --save "" --appendonly no \
    --maxmemory "$FLEET_REDIS_MAXMEMORY" --maxmemory-policy allkeys-lru \
    --dir "$FLEET_DIR" >"$FLEET_DIR/redis.log" 2>&1 &
redis_pid=$!
fleet_log "redis-server on 127.0.0.1:$FLEET_REDIS_PORT (pid $redis_pid, log $FLEET_DIR/redis.log)"

addresses=()
for ((index = 1; index <= FLEET_REPLICAS; index++)); do
    port="${replica_ports[index - 1]}"
    echo "$port" >"$FLEET_DIR/replica$index.port"
    : >"$FLEET_DIR/replica$index.log"
    start_replica "$FLEET_DIR" "$index" "$LADDER" "$LADDER_MODEL"
    addresses+=("$FLEET_HOST:$port")
done
for ((index = 1; index <= FLEET_REPLICAS; index++)); do
    url="http://$FLEET_HOST:${replica_ports[index - 1]}"
    wait_healthy "$url" "$(cat "$FLEET_DIR/replica$index.pid")" 120
    fleet_log "replica$index on $url (pid $(cat "$FLEET_DIR/replica$index.pid"), log $FLEET_DIR/replica$index.log)"
done

{
    if [ -n "$balance" ]; then
        sed "s/^\( *balance \).*/\1$balance/" deploy/haproxy.cfg
    else
        cat deploy/haproxy.cfg
    fi
    deploy/haproxy_servers.sh "${addresses[@]}"
} >"$FLEET_DIR/haproxy.cfg"
export FLEET_BIND="$FLEET_HOST:$FLEET_PORT" FLEET_ADMIN_SOCKET="$FLEET_DIR/admin.sock"
haproxy -c -q -f "$FLEET_DIR/haproxy.cfg"
haproxy -db -f "$FLEET_DIR/haproxy.cfg" >"$FLEET_DIR/haproxy.log" 2>&1 &
haproxy_pid=$!
deadline=$((SECONDS + 10))
until [ -S "$FLEET_ADMIN_SOCKET" ]; do
    if ! alive "$haproxy_pid" || ((SECONDS >= deadline)); then
        fleet_log "haproxy did not start: $FLEET_DIR/haproxy.log"
        exit 1
    fi
    sleep 0.1
done
fleet_log "haproxy on http://$FLEET_HOST:$FLEET_PORT (pid $haproxy_pid, admin socket $FLEET_ADMIN_SOCKET, log $FLEET_DIR/haproxy.log)"
fleet_log "ready: $FLEET_REPLICAS replicas behind http://$FLEET_HOST:$FLEET_PORT, routing by $FLEET_ROUTING; Ctrl-C stops them all"

# In the foreground until a signal, or until HAProxy or Redis goes away.
while alive "$haproxy_pid" && alive "$redis_pid"; do
    sleep 0.5 &
    wait $! || true
done
fleet_log "haproxy or redis-server exited; see $FLEET_DIR"
exit 1
