#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds brisk for 64-bit Windows on this Linux machine and runs every
# Windows test under Wine: brisk.dll and the static libbrisk.a (MinGW-w64),
# the C tests linked each way, BriskMM's tests and the Pascal workloads
# (Free Pascal's win64 units built from fpc-source). Installs what it needs
# first (scripts/install-deps.sh windows). Exit status 0 when all pass.
#
#   scripts/test-windows.sh [BUILD_DIR]        (default: build-win64)
#
# CTest labels: windows (all of them), api, stress, diag, pascal; so
# `ctest --test-dir build-win64 -L pascal` reruns a part.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-win64}
jobs=$(nproc)

scripts/install-deps.sh windows
scripts/build-fpc-win64.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-x86_64.cmake
cmake --build "$build" -j "$jobs"
status=0
ctest --test-dir "$build" --output-on-failure -j "$jobs" || status=$?
scripts/wine-wait.sh "$build"
exit "$status"
