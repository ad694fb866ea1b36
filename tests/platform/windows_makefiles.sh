#!/bin/sh
# SPDX-License-Identifier: MIT
# The Windows cross-build with CMake's default generator, Unix Makefiles, at
# -j4: every custom command has one owner target, so no two make processes
# run the same command at once (dlltool's temporary files collided).
# Configures a scratch build of SOURCE with TOOLCHAIN, builds the libraries
# and the Free Pascal programs that use them, and checks what came out.
# usage: windows_makefiles.sh SOURCE TOOLCHAIN WINEPREFIX|- [TARGET...]
set -u
source=$1 toolchain=$2 prefix=$3
shift 3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "FAILED: $*"; echo "0 passed, 1 failed"; exit 1; }

# the stage's Wine prefix: configuring creates none of its own
reuse=
[ "$prefix" = - ] || reuse=-DBRISK_WINEPREFIX=$prefix
cmake -S "$source" -B "$scratch" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DBRISK_BUILD_TESTS=ON $reuse \
  >"$scratch/configure.log" 2>&1 || { tail -n 20 "$scratch/configure.log"; fail "configure"; }
grep -q '^CMAKE_GENERATOR:INTERNAL=Unix Makefiles$' "$scratch/CMakeCache.txt" ||
  fail "not configured with Unix Makefiles"
# Each step in one target's rules only: make runs every target's rules on
# its own, so a step in two of them can run twice at once (whether it does
# on one run is timing; this is not).
checks=0
for step in dlltool "objcopy --strip-debug"; do
  owners=$(grep -rl --include=build.make -e "$step" "$scratch/CMakeFiles" | wc -l)
  [ "$owners" -le 1 ] || fail "$step is in the rules of $owners targets: $(grep -rl --include=build.make -e "$step" \
    "$scratch/CMakeFiles" | sed 's|.*/CMakeFiles/||; s|/build.make||' | paste -sd ' ')"
  echo "ok: $step: in the rules of $owners target(s)"
  checks=$((checks + 1))
done
cmake --build "$scratch" -j4 --target brisk brisk_static "$@" >"$scratch/build.log" 2>&1 ||
  { grep -iE 'error|cannot|can.t open' "$scratch/build.log" | head -n 20; fail "cmake --build -j4"; }
echo "ok: built brisk, brisk_static $* with Unix Makefiles at -j4"
# the archive carries its import entries, once each
nm=$(sed -n 's/^BRISK_NM:FILEPATH=//p' "$scratch/CMakeCache.txt")
archive=$(find "$scratch" -maxdepth 1 -name libbrisk.a)
[ -n "$archive" ] || fail "no libbrisk.a"
imports=$("$nm" "$archive" 2>/dev/null | grep -c ' I __imp_' || true)
[ "$imports" -gt 0 ] || fail "libbrisk.a has no import entries"
echo "ok: libbrisk.a has $imports import entries"
cmake -DNM="$nm" -DARCHIVE="$archive" -P "$source/cmake/windows/check_imports.cmake" ||
  fail "libbrisk.a leaves symbols undefined"
echo "ok: libbrisk.a defines every symbol it uses"
echo "$((checks + 3)) passed, 0 failed"
