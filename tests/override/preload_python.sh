#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs Debian's python3 (PYTHONMALLOC=malloc) on a deterministic workload on
# glibc's malloc and with LD_PRELOAD=libbrisk.so; the outputs must be
# identical, and the preloaded run must show brisk serving Python's objects.
# PYTHON replaces Debian's python3: in a 32-bit or ARM64 build, python_main.c
# linked against Debian's libpython3.11:i386 or :arm64, run through
# $CROSSCOMPILING_EMULATOR (qemu-user) where the build sets one.
# The workload runs BRISK_TEST_SCALE percent of its loops (default 100; a
# quarter or a tenth under qemu-user), the variable kept from both runs.
# usage: preload_python.sh LIBBRISK WORKLOAD.py [PYTHON]
set -u
lib=$1
workload=$2
py=${3:-/usr/bin/python3}
. "$(dirname "$0")/preload_common.sh"

if [ ! -x "$py" ]; then
  bad "$py (Debian's python3) is not installed: apt-get install python3"
  finish
fi
prepare "$lib"
same_machine "$lib" "$py"
export PYTHONMALLOC=malloc PYTHONHASHSEED=0 LC_ALL=C.UTF-8 PYTHONDONTWRITEBYTECODE=1
scale=${BRISK_TEST_SCALE:-100}
unset LD_PRELOAD PYTHONPATH PYTHONHOME PYTHONSTARTUP BRISK_TEST_SCALE
seconds=$(limit 100)

timeout -k 5 "$seconds" ${CROSSCOMPILING_EMULATOR:-} "$py" -s "$workload" --scale "$scale" \
  --probe "$tmp/probe.glibc" >"$tmp/out.glibc" 2>"$tmp/err.glibc"
rc=$?
[ $rc -eq 0 ] && ok "glibc run exits 0" || { bad "glibc run exit status $rc"; cat "$tmp/err.glibc"; }
timeout -k 5 "$seconds" env LD_PRELOAD="$lib" ${CROSSCOMPILING_EMULATOR:-} "$py" -s "$workload" \
  --scale "$scale" --probe "$tmp/probe.brisk" >"$tmp/out.brisk" 2>"$tmp/err.brisk"
rc=$?
[ $rc -eq 124 ] && bad "brisk run timed out after $seconds s (hang)"
[ $rc -eq 0 ] && ok "brisk run exits 0" || { bad "brisk run exit status $rc"; cat "$tmp/err.brisk"; }

same_output "$tmp"
grep -qx "done" "$tmp/out.brisk" && ok "workload completed" || bad "workload did not complete"

# brisk must be absent from the reference run and serving malloc in the other
probe_g=$(cat "$tmp/probe.glibc" 2>/dev/null)
probe_b=$(cat "$tmp/probe.brisk" 2>/dev/null)
[ "$probe_g" = "brisk=absent" ] && ok "reference run is on glibc" || bad "reference probe: '$probe_g'"
want="brisk=$(sed -n 's/^#define BRISK_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
  "$(dirname "$0")/../../include/brisk.h" | paste -sd.) big=1 ctypes=1 list=1 small=1"
[ "$probe_b" = "$want" ] && ok "preloaded run: $probe_b" || bad "preloaded probe: '$probe_b', want '$want'"
echo "--- output ---"
cat "$tmp/out.brisk"
finish
