#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs the allocation fuzzer for SECONDS (default 120) from the committed
# corpus, building it first (clang, in build-fuzz/) when needed, and prints
# how many inputs it executed. Exit status: 0 when nothing was found; else
# the fuzzer's, with the input that failed saved in build-fuzz/artifacts/.
#
#   tests/fuzz/run.sh 180            # what CI runs
#   FUZZ_JOBS=2 tests/fuzz/run.sh 3600   # longer, one fuzzer per core
#
# New inputs it finds go to build-fuzz/new-inputs/, not to the committed
# corpus (tests/README.md says how to add one there).
set -eu
seconds=${1:-120}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BRISK_FUZZ_BUILD:-$root/build-fuzz}
jobs=${FUZZ_JOBS:-1}

if [ ! -f "$build/CMakeCache.txt" ]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DBRISK_FUZZ=ON >"$build.configure.log" 2>&1 || { cat "$build.configure.log" >&2; exit 1; }
  rm -f "$build.configure.log"
fi
cmake --build "$build" --target fuzz_alloc >/dev/null || cmake --build "$build" --target fuzz_alloc

mkdir -p "$build/new-inputs" "$build/artifacts"
log="$build/fuzz.log"
status=0
if [ "$jobs" -gt 1 ]; then
  # -fork=N: N fuzzing processes sharing one corpus; the first failure stops all
  (cd "$build" && ./tests/fuzz/fuzz_alloc -fork="$jobs" -ignore_crashes=0 \
    -max_total_time="$seconds" -max_len=4096 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/" "$build/new-inputs" "$root/tests/fuzz/corpus") \
    >"$log" 2>&1 || status=$?
else
  "$build/tests/fuzz/fuzz_alloc" -max_total_time="$seconds" -max_len=4096 -rss_limit_mb=4096 \
    -print_final_stats=1 -artifact_prefix="$build/artifacts/" \
    "$build/new-inputs" "$root/tests/fuzz/corpus" >"$log" 2>&1 || status=$?
fi

if [ "$jobs" -gt 1 ]; then # the parent's status lines ("#N: cov: ...") count all jobs
  executions=$(sed -n 's/^#\([0-9]*\): cov:.*/\1/p' "$log" | tail -n 1)
else
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
fi
echo "fuzz_alloc: ${executions:-?} executions (a run of up to $seconds s; log: $log)"
if [ "$status" -ne 0 ]; then
  grep -E 'CHECK FAILED|runtime error|ERROR|Test unit written' "$log" | head -n 20 >&2 || true
  echo "fuzz_alloc: FAILED (exit status $status)" >&2
fi
exit "$status"
