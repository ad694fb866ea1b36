#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs a Windows GUI program (gui_leak.pas) under Wine with BRISK_LEAKS=1
# and checks that what brisk and BriskMM write went to PROGRAM.brisk.log
# beside the executable, matching PATTERN, since the program has no
# standard error; and that the program ended with EXPECTED_STATUS.
# usage: gui_log.sh PROGRAM.exe EXPECTED_STATUS PATTERN WINE_COMMAND...
set -u
program=$1 expected=$2 pattern=$3
shift 3
log=${program%.exe}.brisk.log
rm -f "$log"
BRISK_LEAKS=1 "$@" "$program" >/dev/null 2>&1
status=$?
failed=0
if [ "$status" -ne "$expected" ]; then
  echo "FAIL exit status $status, expected $expected"
  failed=1
fi
if [ ! -f "$log" ]; then
  echo "FAIL no $log"
  exit 1
fi
cat "$log"
if grep -Eq "$pattern" "$log"; then
  echo "ok   $log has /$pattern/"
else
  echo "FAIL $log has no line matching /$pattern/"
  failed=1
fi
exit $failed
