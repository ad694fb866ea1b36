#!/bin/sh
# SPDX-License-Identifier: MIT
# Waits until the Wine server of a Win64 build's prefix has exited.
#
#   scripts/wine-wait.sh BUILD_DIR        (default: build-win64)
#
# Wine's server outlives the last program run under it by a few seconds.
# The Windows tests call this when they are done, so that nothing of theirs
# is left writing into the build folder when the caller goes on (a fresh
# machine's clean-up would race with it). Does nothing when the build has
# no Wine prefix.
set -eu
build=${1:-build-win64}
cache="$build/CMakeCache.txt"
[ -f "$cache" ] || exit 0
wineserver=$(sed -n 's/^BRISK_WINESERVER:[A-Z]*=//p' "$cache")
prefix=$(sed -n 's/^BRISK_WINEPREFIX:[A-Z]*=//p' "$cache")
if [ -x "$wineserver" ] && [ -d "$prefix" ]; then
  WINEPREFIX=$prefix timeout 60 "$wineserver" -w || true
fi
