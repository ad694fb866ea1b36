#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# brisk pulled into another CMake project (tests/install/embed) with
# add_subdirectory and with FetchContent: it builds brisk::brisk and
# brisk::brisk_static, which serve the program's allocations, and none of
# brisk's tests or benchmarks, and leaves the project's build type alone.
# usage: embed_test.sh BRISK_SOURCE_DIR
set -euo pipefail
source=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=0
check() { # description, command...
  local description=$1
  shift
  if "$@"; then echo "ok   $description"; else echo "FAIL $description"; failed=1; fi
}

for how in add_subdirectory FetchContent; do
  build=$scratch/$how
  if ! cmake -S "$source/tests/install/embed" -B "$build" -DEMBED_WITH=$how -DBRISK_SOURCE="$source" \
    -DCMAKE_EXE_LINKER_FLAGS=-Wl,--as-needed >"$scratch/$how.log" 2>&1 ||
    ! cmake --build "$build" -j "$(nproc)" >>"$scratch/$how.log" 2>&1; then
    cat "$scratch/$how.log"
    echo "FAIL $how: the project with brisk in it does not build"
    failed=1
    continue
  fi
  targets=$(cmake --build "$build" --target help)
  check "$how: brisk, brisk_static built" grep -q "libbrisk.a" <<<"$(find "$build" -name 'libbrisk*')"
  check "$how: no brisk tests registered" sh -c "ctest --test-dir '$build' -N | grep -q 'Total Tests: 0'"
  check "$how: no test or benchmark targets (stress_mt, churn)" \
    sh -c "! grep -qw -e stress_mt -e churn -e api_conformance <<'EOF2'
$targets
EOF2"
  check "$how: the project's build type left empty" \
    grep -qx "CMAKE_BUILD_TYPE:STRING=" "$build/CMakeCache.txt"
  check "$how: brisk::brisk serves the program" "$build/app_shared"
  check "$how: brisk::brisk_static serves the program" "$build/app_static"
done
[ "$failed" -eq 0 ] || exit 1
