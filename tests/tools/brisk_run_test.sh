#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `brisk run` says what happened: a missing library is named as missing, a
# crash by its signal, and a report only where it was really written.
# usage: brisk_run_test.sh TOOLS_DIR LIBBRISK
set -uo pipefail
tools=$1 lib=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
passed=0 failed=0
run() { out=$(python3 "$tools/brisk_command.py" brisk_run "$@" 2>&1); status=$?; }
expect() { # description, condition...
  local what=$1
  shift
  if "$@"; then passed=$((passed + 1)); echo "ok   $what"; else
    failed=$((failed + 1)); echo "FAIL $what (exit status $status):"; sed 's/^/    /' <<<"$out"; fi
}
says() { grep -qF -- "$1" <<<"$out"; }
says_not() { ! grep -qF -- "$1" <<<"$out"; }
# The programs run: the system's, or TEST_TRUE_PROGRAM, a true of the
# library's own machine (tests/tools/true.c: a 32-bit or ARM64 build's), the
# latter through $CROSSCOMPILING_EMULATOR where set (qemu-user: `brisk run`
# then runs the emulator, and names what it reports after it).
if [ -n "${TEST_TRUE_PROGRAM:-}" ]; then
  read -ra emulator <<<"${CROSSCOMPILING_EMULATOR:-}"
  true_program=("${emulator[@]}" "$TEST_TRUE_PROGRAM")
  segv_program=("${emulator[@]}" "$TEST_TRUE_PROGRAM" SEGV)
  kill_program=("${emulator[@]}" "$TEST_TRUE_PROGRAM" KILL)
  options_program=(--program "${CROSSCOMPILING_EMULATOR:+$CROSSCOMPILING_EMULATOR }$TEST_TRUE_PROGRAM")
else
  true_program=(true) segv_program=(sh -c 'kill -SEGV $$') kill_program=(sh -c 'kill -KILL $$')
  options_program=()
fi

run --lib /nonexistent/libbrisk.so.0 -- "${true_program[@]}"
expect "--lib of a missing file: named as missing" says "/nonexistent/libbrisk.so.0: no such file"
expect "--lib of a missing file: exit status 2" test $status -eq 2

echo 'INPUT(libbrisk.so.0)' >libbrisk.so
run --lib libbrisk.so -- "${true_program[@]}"
expect "--lib of a linker script: not a shared library" says "is not a shared library"

run --lib "$lib" --stats --leaks -- "${segv_program[@]}"
expect "crash: reported by signal name" says "${segv_program[0]##*/} was killed by SIGSEGV (segmentation fault)"
expect "crash: exit status 128 + 11" test $status -eq 139
expect "crash: no claim that statistics were printed" says "statistics: none"
expect "crash: no claim that the leak report was printed" says "leak report: none"

run --lib "$lib" --stats-file "$scratch/stats.txt" --profile -- "${true_program[@]}"
expect "statistics file: named" says "statistics: $scratch/stats.txt"
expect "statistics file: written" test -s "$scratch/stats.txt"
profile=$scratch/${true_program[0]##*/}.brisk-profile.txt # named after the program run
expect "profile: named" says "profile: $profile"
expect "profile: written" test -s "$profile"

run --lib "$lib" --stats-file "$scratch/stats.txt" -- "${kill_program[@]}"
expect "statistics file left from an earlier run: not claimed" says "statistics: NOT written"

run --lib "$lib" --stats-file /nonexistent/dir/stats.txt -- "${true_program[@]}"
expect "unwritable statistics file: reported as not written" \
  says "statistics: NOT written to /nonexistent/dir/stats.txt"
expect "unwritable statistics file: not claimed" says_not "statistics: /nonexistent"

run --lib "$lib" --check -- "${true_program[@]}"
expect "checked mode, clean run: says no error was found" says "checked mode: no error found"
expect "checked mode, clean run: exit status 0" test $status -eq 0

run --lib "$lib" --heap-profile "$scratch/heap.pb.gz" -- "${true_program[@]}"
expect "heap profile: named" says "heap profile: $scratch/heap.pb.gz"
expect "heap profile: written, with its folded stacks" \
  test -s "$scratch/heap.pb.gz" -a -e "$scratch/heap.inuse.folded" -a -e "$scratch/heap.alloc.folded"
run --lib "$lib" --heap-profile-rate 0 --heap-profile "$scratch/heap.pb.gz" -- "${true_program[@]}"
expect "--heap-profile-rate 0: a clear error, exit status 2" test $status -eq 2
run --lib "$lib" --heap-profile-rate 4096 -- "${true_program[@]}"
expect "--heap-profile-rate without --heap-profile: a clear error" says "needs --heap-profile"

printf '*\n' >"$scratch/suppress.txt"
run --lib "$lib" --leaks-exitcode 9 --leaks-suppress "$scratch/suppress.txt" -- "${true_program[@]}"
expect "--leaks-exitcode with every leak suppressed: exit status 0" test $status -eq 0
expect "--leaks-exitcode implies --leaks" says "leak report: printed on standard error above"
run --lib "$lib" --leaks-file "$scratch/leaks.folded" -- "${true_program[@]}"
expect "--leaks-file: named" says "leak report: $scratch/leaks.folded"
run --lib "$lib" --leaks-exitcode 300 -- "${true_program[@]}"
expect "--leaks-exitcode 300: a clear error" says "from 1 to 255"

# ./brisk options: every setting with its value and where it came from
out=$(BRISK_PURGE_DELAY=2s python3 "$tools/brisk_command.py" brisk_options --lib "$lib" "${options_program[@]}" 2>&1); status=$?
expect "options: exit status 0" test $status -eq 0
expect "options: a setting from the environment, as brisk read it" \
  says "BRISK_PURGE_DELAY=2000ms (from the environment)"
expect "options: a default" says "BRISK_STATS=off (default)"
expect "options: the heap profile's rate" says "BRISK_HEAP_PROFILE_RATE=524288 (default)"
out=$(BRISK_STATS=weird python3 "$tools/brisk_command.py" brisk_options --lib "$lib" "${options_program[@]}" 2>&1)
expect "options: a bad value is named in a warning" says 'BRISK_STATS="weird" is not valid'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
