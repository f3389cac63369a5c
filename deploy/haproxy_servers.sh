#!/usr/bin/env bash
# Prints the `server` lines of deploy/haproxy.cfg's backend, one per replica
# address given (HOST:PORT), named replica1, replica2, ... in that order.
set -euo pipefail
if (($# == 0)); then
    echo "usage: $0 HOST:PORT [HOST:PORT...]" >&2
    exit 2
fi
index=1
for address in "$@"; do
    echo "    server replica${index} ${address}"
    index=$((index + 1))
done
