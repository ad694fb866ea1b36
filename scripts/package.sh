#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds the release files into OUT_DIR (default: dist/):
#   brisk_VERSION_ARCH.deb   the Debian package (cmake/package.cmake)
#   brisk-VERSION.tar.gz     the source tarball: what git has committed
# usage: scripts/package.sh [OUT_DIR [BUILD_DIR]]      (default build folder: build-dist/)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$root/dist}" && cd "${1:-$root/dist}" && pwd)
build=${2:-$root/build-dist}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
  -DBRISK_BUILD_TESTS=OFF >/dev/null
cmake --build "$build"
(cd "$build" && cpack -G DEB -B "$out" >/dev/null)
rm -rf "$out/_CPack_Packages"
version=$("$root/brisk" --version | cut -d' ' -f2)
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$root" archive --format=tar.gz --prefix="brisk-$version/" -o "$out/brisk-$version.tar.gz" HEAD
else
  echo "package.sh: not a git checkout: no source tarball (it is made from what git has committed)" >&2
fi
ls -1 "$out"/brisk*
