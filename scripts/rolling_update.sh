#!/usr/bin/env bash
# Replaces the replicas of a running fleet (scripts/fleet.sh) one at a time,
# with a new binary or model, dropping no request. For each replica:
#   1. sets it to `drain` through HAProxy's admin socket (no new requests);
#   2. waits for its in-flight requests to end (HAProxy's `show stat`);
#   3. sends SIGTERM (the replica drains anything left) and waits for it to exit;
#   4. starts the new one on the same port and waits for /health 200;
#   5. sets it back to `ready` and waits until HAProxy sees it up,
#      so one replica at most is ever out.
# A new replica that does not come up healthy stops the update there: that
# replica stays drained (and down), the ones not yet replaced keep serving.
#
# Usage: scripts/rolling_update.sh [--ladder BIN] [--model FILE]
#            [--fleet-dir DIR] [--drain-timeout SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/fleet_lib.sh
source scripts/fleet_lib.sh

fleet_dir="${FLEET_DIR:-.fleet}"
new_binary=""
new_model=""
drain_timeout=600
while (($#)); do
    case "$1" in
    --ladder) new_binary="${2:?--ladder needs a binary}"; shift 2 ;;
    --model) new_model="${2:?--model needs a file}"; shift 2 ;;
    --fleet-dir) fleet_dir="${2:?--fleet-dir needs a directory}"; shift 2 ;;
    --drain-timeout) drain_timeout="${2:?--drain-timeout needs seconds}"; shift 2 ;;
    -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) fleet_log "unknown argument $1 (see --help)"; exit 2 ;;
    esac
done
fleet_dir="$(realpath -m "$fleet_dir")"
socket="$fleet_dir/admin.sock"
[ -S "$socket" ] || { fleet_log "no fleet at $fleet_dir (no admin socket): is \`make fleet\` running?"; exit 1; }

# shellcheck disable=SC1091
source "$fleet_dir/replica.env"
FLEET_TRACE_DIR="${FLEET_TRACE_DIR:-}"  # absent from a fleet an older fleet.sh started
LADDER="$(realpath -m "${new_binary:-$LADDER}")"
LADDER_MODEL="$(realpath -m "${new_model:-$LADDER_MODEL}")"
[ -x "$LADDER" ] || { fleet_log "$LADDER is not an executable"; exit 1; }
[ -f "$LADDER_MODEL" ] || { fleet_log "$LADDER_MODEL does not exist"; exit 1; }
# Later restarts (and the fleet's own records) use the new binary and model.
declare -p FLEET_HOST FLEET_THREADS KV_REMOTE_ARGS FLEET_SERVE_ARGS FLEET_TRACE_DIR LADDER \
    LADDER_MODEL FLEET_REPLICAS >"$fleet_dir/replica.env"

# One field of `show stat` (CSV: pxname,svname,qcur,qmax,scur,...) for a server.
server_stat() {
    local server="$1" column="$2"
    haproxy_admin "$socket" "show stat" | awk -F, -v server="$server" -v column="$column" '
        NR == 1 { for (i = 1; i <= NF; i++) if ($i == column || $i == "# " column) field = i }
        $1 == "ladder" && $2 == server { print $field }'
}

# Waits until the server's requests in flight and queued are 0.
wait_idle() {
    local server="$1" deadline=$((SECONDS + drain_timeout))
    while true; do
        local current queued
        current="$(server_stat "$server" scur)"
        queued="$(server_stat "$server" qcur)"
        [ "${current:-0}" = 0 ] && [ "${queued:-0}" = 0 ] && return 0
        if ((SECONDS >= deadline)); then
            fleet_log "$server still has $current requests after ${drain_timeout}s; SIGTERM drains them"
            return 0
        fi
        sleep 0.2
    done
}

# Waits until HAProxy's checks see the server up (status UP, not DRAIN).
wait_up() {
    local server="$1" deadline=$((SECONDS + 60))
    until [ "$(server_stat "$server" status)" = UP ]; do
        ((SECONDS < deadline)) || { fleet_log "haproxy does not see $server up"; return 1; }
        sleep 0.2
    done
}

for ((index = 1; index <= FLEET_REPLICAS; index++)); do
    server="replica$index"
    port="$(cat "$fleet_dir/$server.port")"
    old_pid="$(cat "$fleet_dir/$server.pid")"
    started=$SECONDS
    haproxy_admin "$socket" "set server ladder/$server state drain" >/dev/null
    fleet_log "$server: draining in haproxy"
    wait_idle "$server"
    fleet_log "$server: no request in flight; SIGTERM to pid $old_pid"
    stop_pid "$old_pid" $((drain_timeout + 30))
    start_replica "$fleet_dir" "$index" "$LADDER" "$LADDER_MODEL"
    new_pid="$(cat "$fleet_dir/$server.pid")"
    wait_healthy "http://$FLEET_HOST:$port" "$new_pid" 120
    haproxy_admin "$socket" "set server ladder/$server state ready" >/dev/null
    wait_up "$server"
    fleet_log "$server: replaced by pid $new_pid ($(basename "$LADDER"), $(basename "$LADDER_MODEL")) in $((SECONDS - started))s"
done
fleet_log "rolling update done: $FLEET_REPLICAS replicas"
