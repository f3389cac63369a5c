#!/usr/bin/env bash
# Fetches the grammar engine's source: xgrammar's PyPI sdist, pinned and
# sha256-checked, unpacked into third_party/ (git-ignored). CMake builds its
# C++ core from there, without the Python bindings (cmake/xgrammar.cmake).
# Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

version="0.2.9"
sha256="87b466bca2475e29bb0323abc62c6c33cbcbcff47e5fb800a3e2099ac9620b90"
url="https://files.pythonhosted.org/packages/3a/2f/5bf8e8fa6619cff534932f79b0abc81a417d354bc5093252c1a6081d0a93/xgrammar-$version.tar.gz"
target="third_party/xgrammar-$version"
stamp="$target/.ladder-sha256"

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sha256" ]; then
    exit 0
fi

download=$(mktemp -d)
trap 'rm -rf "$download"' EXIT
echo "ladder: downloading xgrammar $version (sdist) from PyPI"
curl -sSLf --retry 3 -o "$download/xgrammar.tar.gz" "$url"
echo "$sha256  $download/xgrammar.tar.gz" | sha256sum --check --status || {
    echo "ladder: xgrammar-$version.tar.gz does not match its pinned sha256" >&2
    exit 1
}
rm -rf "$target"
mkdir -p third_party
tar -xzf "$download/xgrammar.tar.gz" -C third_party
echo "$sha256" > "$stamp"
