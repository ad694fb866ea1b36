#!/usr/bin/env bash
# Installs what building, testing and benchmarking brisk need on Debian.
# Usage: scripts/install-deps.sh [test|bench]   (default: test)
# Only missing packages are installed; without root or apt it lists them.
set -euo pipefail
want=(cmake ninja-build gcc g++ clang clang-format pkg-config make python3 sqlite3 fpc)
if [ "${1:-test}" = bench ]; then
  want+=(libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0 libtbbmalloc2 python3-matplotlib)
fi
missing=()
for pkg in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "install-deps: cannot install (need root and apt-get); missing: ${missing[*]}" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
