#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs leak_report (built with -O1 -gl) with BRISK_LEAKS=1 and checks its
# leak report: each leak of leak_unit.pas reported with the routine and
# file:line marked "leak:" there, the objects with their class, and the
# totals. addr2line names the lines: without it the test is skipped.
# usage: leak_report.sh PROGRAM LEAK_UNIT_SOURCE
set -eu
program=$1 source=$2
[ -x /usr/bin/addr2line ] || { echo "SKIPPED: no /usr/bin/addr2line (binutils)"; exit 77; }
line_of() { grep -n "{ leak: $1 }" "$source" | cut -d: -f1; }
report=$(BRISK_LEAKS=1 "$program" 2>&1 >/dev/null)
printf '%s\n' "$report"
failed=0
expect() { # description, extended regular expression
  if printf '%s\n' "$report" | grep -Eq "$2"; then
    echo "ok   $1"
  else
    echo "FAIL $1: no line matches /$2/"
    failed=1
  fi
}
unit=$(basename "$source")
expect "totals" "^brisk: leak report: 1072 bytes in 4 blocks still allocated at exit$"
expect "the objects' group" "^brisk: #[0-9]+ 72 bytes in 3 blocks allocated at:$"
expect "the objects' class" "^brisk:     \(objects of class TLeakedCustomer\)$"
expect "the objects' line" "LEAKCUSTOMERS \(.*$unit:$(line_of customers)\)$"
expect "the buffer's group" "^brisk: #[0-9]+ 1000 bytes in 1 block allocated at:$"
expect "the buffer's line" "LEAKBUFFER \(.*$unit:$(line_of buffer)\)$"
expect "the main program's line" "main \(.*leak_report.pas:[0-9]+\)$"
exit $failed
