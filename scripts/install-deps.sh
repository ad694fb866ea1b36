#!/usr/bin/env bash
# Installs what building and testing brisk need on Debian (only what is
# missing). Usage: scripts/install-deps.sh [test|bench|windows]   (default: test)
# bench also tries the chart library; the peer allocators are installed by
# ./brisk bench itself, which says which ones it had to skip.
set -euo pipefail
want=(cmake ninja-build gcc g++ clang clang-format pkg-config make python3 sqlite3 binutils
      fp-compiler fp-units-rtl fp-units-fcl)
optional=()
[ "${1:-test}" = bench ] && optional+=(python3-matplotlib)
# windows: the Win64 cross toolchain, Wine, and the Free Pascal sources from
# which scripts/build-fpc-win64.sh builds the win64 units (scripts/test-windows.sh)
[ "${1:-test}" = windows ] && want+=(gcc-mingw-w64-x86-64-win32 wine64 fpc-source)

missing() {
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || echo "$pkg"
  done
}
mapfile -t need < <(missing "${want[@]}")
mapfile -t maybe < <(missing "${optional[@]}")
[ ${#need[@]} -eq 0 ] && [ ${#maybe[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  [ ${#need[@]} -eq 0 ] && exit 0
  echo "install-deps: cannot install (need root and apt-get); missing: ${need[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
if [ ${#need[@]} -gt 0 ]; then
  echo "install-deps: installing ${need[*]}"
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
for pkg in "${maybe[@]}"; do
  apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null 2>&1 ||
    echo "install-deps: could not install $pkg (optional); continuing" >&2
done
