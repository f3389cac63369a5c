#!/usr/bin/env bash
# Runs every fuzz target (tests/fuzz/<name>_fuzzer.cpp, built by `make fuzz`
# into BUILD_DIR/bin/fuzz_<name>) for SECONDS each, JOBS at a time, on its
# committed seeds and crash regressions plus a growing corpus of its own in
# BUILD_DIR/corpus/<name>. Any crash, leak, hang or failed check fails the
# run; the input that caused it is saved under BUILD_DIR/artifacts/<name>/
# and belongs, with the fix, in tests/fuzz/regressions/<name>/.
#
#   scripts/run_fuzzers.sh [BUILD_DIR] [SECONDS] [JOBS]
set -uo pipefail
cd "$(dirname "$0")/.."

build_dir=${1:-build-fuzz}
seconds=${2:-60}
jobs=${3:-2}

run_one() {
    local name=$1 build_dir=$2 seconds=$3
    local binary=$build_dir/bin/fuzz_$name
    local work=$build_dir/corpus/$name artifacts=$build_dir/artifacts/$name
    local log=$build_dir/logs/$name.log
    mkdir -p "$work" "$artifacts" "$(dirname "$log")"
    local inputs=("$work" "tests/fuzz/corpus/$name")
    [ -d "tests/fuzz/regressions/$name" ] && inputs+=("tests/fuzz/regressions/$name")
    if [ ! -x "$binary" ]; then
        echo "fuzz $name: $binary is missing (is it registered in tests/fuzz/CMakeLists.txt?)"
        return 1
    fi
    # -timeout: one input running this long is a hang; -rss_limit_mb: a leak.
    "$binary" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
        -artifact_prefix="$artifacts/" -print_final_stats=1 "${inputs[@]}" > "$log" 2>&1
    local status=$?
    local runs
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
    if [ "$status" -ne 0 ]; then
        echo "fuzz $name: FAILED (status $status), log $log:"
        grep -E 'ERROR|SUMMARY|check failed|internal error|Test unit written' "$log" | head -20
        echo "fuzz $name: add the input above to tests/fuzz/regressions/$name/ with the fix"
        return 1
    fi
    echo "fuzz $name: ok, ${runs:-?} inputs in ${seconds} s, $(ls "$work" | wc -l) in its corpus"
}
export -f run_one

names=()
for source in tests/fuzz/*_fuzzer.cpp; do
    name=$(basename "$source" _fuzzer.cpp)
    names+=("$name")
done
printf '%s\n' "${names[@]}" |
    xargs -P "$jobs" -I{} bash -c 'run_one "$@"' _ {} "$build_dir" "$seconds"
