#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs memory_bounds' three programs with glibc's malloc and with brisk
# preloaded, and checks brisk's resident memory against bounds relative to
# glibc's (figures in KiB):
#   churn    brisk's RSS at the last join is at most glibc's + 16 MiB and grows
#            less than 32 MiB from half the threads to all of them; a second
#            later, with no allocation since, it is at most glibc's. Each
#            figure is the median of five runs: at the join brisk's RSS
#            varies a lot from run to run, since each exited thread's heap
#            waits resident for the next thread (12.3-23.4 MiB in 30 runs,
#            median 18.5, medians of five 15.0-21.0, against glibc's
#            10.0-13.2; before the segment cache kept only two segments
#            resident while threads come and go, 16.4-31.5, median 23.4)
#   buffers  brisk's peak RSS is at most 1.1 x glibc's
#   idle     two seconds after freeing 1 GiB, brisk holds at most 16 MiB more
#            than before it allocated
# REFERENCE, where the program is not a glibc one (a musl build), is the same
# program built for glibc: its runs give glibc's figures, and brisk is run
# preloaded into PROGRAM. musl's own malloc is no yardstick for these bounds:
# it keeps almost nothing resident after the churn (under 1 MiB, where brisk
# and glibc hold 10-30 MiB) at the price of minutes a run with 8 threads,
# where glibc and brisk take seconds.
# usage: memory_bounds.sh LIBBRISK PROGRAM [REFERENCE]   (ends with 'N passed, N failed')
set -uo pipefail
lib=$1 program=$2 reference=${3:-$2}
passed=0 failed=0
field() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$2"; }
check() { # name, condition (shell arithmetic), detail
  if (($2)); then passed=$((passed + 1)); echo "ok   $1 ($3)"
  else failed=$((failed + 1)); echo "FAIL $1 ($3)"; fi
}
run() { # mode, preload (or empty: glibc's malloc, in REFERENCE)
  local runs=$reference
  [ -n "$2" ] && runs=$program
  # shellcheck disable=SC2086 # a cross build's emulator, when there is one
  env -u LD_PRELOAD ${2:+LD_PRELOAD=$2} ${CROSSCOMPILING_EMULATOR:-} "$runs" "$1" ||
    echo "exit status $?"
}

median() { # the runs' outputs, one a line: each churn field's median, as one line like a run's
  local out="" name
  for name in half end settled peak; do
    out+="$name=$(field "$name" "$1" | sort -n | sed -n 3p) "
  done
  echo "${out% }"
}
glibc_runs=$(for r in 1 2 3 4 5; do run churn ""; done)
brisk_runs=$(for r in 1 2 3 4 5; do run churn "$lib"; done)
echo "churn runs, glibc:"$'\n'"$glibc_runs"$'\n'"brisk:"$'\n'"$brisk_runs"
glibc=$(median "$glibc_runs") brisk=$(median "$brisk_runs")
echo "churn, medians of 5 runs: glibc $glibc; brisk $brisk"
check "thread churn: brisk ends at most 16 MiB above glibc" \
  "$(field end "$brisk") <= $(field end "$glibc") + 16384" "$(field end "$brisk") vs $(field end "$glibc") KiB"
check "thread churn: brisk grows less than 32 MiB from 50% to 100% of the threads" \
  "$(field end "$brisk") - $(field half "$brisk") < 32768" "$(field half "$brisk") -> $(field end "$brisk") KiB"
check "thread churn: a second after the last join brisk holds at most what glibc holds" \
  "$(field settled "$brisk") <= $(field settled "$glibc")" "$(field settled "$brisk") vs $(field settled "$glibc") KiB"

glibc=$(run buffers "") brisk=$(run buffers "$lib")
echo "buffers: glibc $glibc; brisk $brisk"
check "big buffers: brisk's peak is at most 1.1 x glibc's" \
  "$(field peak "$brisk") * 10 <= $(field peak "$glibc") * 11" "$(field peak "$brisk") vs $(field peak "$glibc") KiB"

brisk=$(run idle "$lib")
echo "idle: brisk $brisk"
check "idle: 2 s after freeing 1 GiB brisk holds at most 16 MiB" \
  "$(field after "$brisk") - $(field before "$brisk") <= 16384" "$(field before "$brisk") -> $(field full "$brisk") -> $(field after "$brisk") KiB"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
