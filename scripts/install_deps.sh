#!/usr/bin/env bash
# Installs what building and testing ladder needs, and only what is missing:
# Debian packages (apt-get, with sudo when not root) and a project-local Python
# venv (.venv) for the test tools. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
    build-essential cmake ninja-build pkg-config git unzip
    libcli11-dev nlohmann-json3-dev libpcre2-dev libfmt-dev libxxhash-dev
    libgtest-dev libgmock-dev python3-venv python3-pip
    libboost1.81-dev libssl-dev gnuplot-nox
    clang libclang-rt-14-dev curl ca-certificates
    libjs-marked libjs-highlight.js libjs-chart.js chromium chromium-driver
    haproxy redis-server libhiredis-dev
)

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
        || missing+=("$package")
done

if ((${#missing[@]})); then
    echo "ladder: installing Debian packages: ${missing[*]}"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

# The grammar engine's source (xgrammar's sdist, pinned and checked).
scripts/fetch_xgrammar.sh

# Python test tools live in .venv; requirements are pinned in one file.
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
stamp=.venv/.requirements-installed
if [ ! -f "$stamp" ] || ! cmp -s requirements-test.txt "$stamp"; then
    .venv/bin/pip install -q --disable-pip-version-check -r requirements-test.txt
    cp requirements-test.txt "$stamp"
fi
