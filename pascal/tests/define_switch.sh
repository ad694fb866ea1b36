#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds one program static, then with -dBRISK_SHARED, then static again, into
# the same unit folder, and checks with ldd that each switch took effect: fpc
# reuses a BriskMM.ppu whose source did not change, whatever the defines were.
# usage: define_switch.sh WORK_DIR PROGRAM.pas FPC [FPC_FLAGS...]
set -eu
work=$1 program=$2
shift 2
rm -rf "$work"
mkdir -p "$work/units"
failed=0
build() { # variant, extra fpc flags...
  variant=$1
  shift
  if ! "$@" -FU"$work/units" -o"$work/program" "$program" >"$work/fpc.log" 2>&1; then
    cat "$work/fpc.log"
    echo "FAIL $variant: fpc failed"
    exit 1
  fi
  if ldd "$work/program" | grep -q "libbrisk.so.0 =>"; then linked=shared; else linked=static; fi
  if [ "$linked" = "$variant" ]; then
    echo "ok   $variant build: brisk linked $linked"
  else
    echo "FAIL $variant build: brisk linked $linked (a stale BriskMM.ppu was reused)"
    failed=1
  fi
}
build static "$@"
build shared "$@" -dBRISK_SHARED
build static "$@"
exit $failed
