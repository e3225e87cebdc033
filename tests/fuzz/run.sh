#!/bin/sh
# Long run of the whole-model fuzzer (docs/fuzzing.md):
#   tests/fuzz/run.sh [SECONDS] [functional|timed] [libFuzzer flags...]
# Builds fuzz-node and its seeds in BUILD (default: build), keeps a corpus
# per mode in BUILD/tests/fuzz/corpus-MODE between runs, writes failing
# inputs as BUILD/tests/fuzz/fuzz-node-MODE-crash-<sha1>, and ends with
# libFuzzer's statistics (stat::number_of_executed_units is the count).
set -eu
seconds=${1:-600}
mode=${2:-functional}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] && shift
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$src/build}
ninja -C "$build" tests/fuzz/fuzz-node tests/fuzz/fuzz-node-seeds >/dev/null
dir=$build/tests/fuzz
mkdir -p "$dir/corpus-$mode"
cd "$dir"
DMS_FUZZ_MODE=$mode exec nice -n 10 ./fuzz-node -max_total_time="$seconds" \
	-max_len=4096 -timeout=10 -rss_limit_mb=3072 -print_final_stats=1 \
	-artifact_prefix="$dir/fuzz-node-$mode-" "$@" "corpus-$mode" fuzz-node-seeds
