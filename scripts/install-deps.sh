#!/bin/sh
# SPDX-License-Identifier: MIT
# The one place that installs what brisk needs (Debian 12, apt-get). Nothing
# else in the repository installs packages: ./brisk runs this before each
# command, and CMake only checks and says what is missing.
#
#   scripts/install-deps.sh base      python3, which ./brisk's commands run on
#   scripts/install-deps.sh test      everything `./brisk test` needs (the default)
#   scripts/install-deps.sh bench     what `./brisk bench` needs to build, plus the
#                                     peer allocators and the chart library if it can
#   scripts/install-deps.sh overhead  what `./brisk overhead` needs (adds valgrind)
#   scripts/install-deps.sh windows   the test packages plus the Win64 cross toolchain,
#                                     Wine and the Free Pascal sources (scripts/test-windows.sh)
#   scripts/install-deps.sh arm64     the test packages plus the ARM64 cross toolchain (gcc,
#                                     g++, the ARM64 C library) and qemu-user to run its
#                                     programs (./brisk test's arm64 stages)
#   scripts/install-deps.sh musl      the test packages plus musl-gcc and musl's dynamic
#                                     loader (./brisk test's musl stage, tools/musl_bench.py)
#   scripts/install-deps.sh rust      Debian's Rust toolchain for bindings/rust (./brisk test's
#                                     rust stage): cargo and rustc, the Win64 standard library
#                                     with the MinGW-w64 compiler, and Wine to run its tests
#
# Installs only what is missing and runs `apt-get update` only when apt does not
# know a package yet (or an install failed on stale package lists). Not root:
# names the missing packages and stops.
set -eu

base="python3"
# What building brisk and its Free Pascal unit takes (the tests enable C++ too).
build="cmake ninja-build make gcc g++ pkg-config binutils fp-compiler fp-units-rtl fp-units-fcl"
# libclang-rt-14-dev holds the sanitizer runtimes: clang only recommends it, so
# an install without recommends leaves the ThreadSanitizer build unable to link.
# git makes the source tarball (scripts/package.sh), which the package stage builds.
test="$base $build clang libclang-rt-14-dev clang-format sqlite3 git"
peers="libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0 libtbbmalloc2"
chart="python3-matplotlib"
# The Win64 cross compiler, Wine to run its programs, and the Free Pascal
# sources scripts/build-fpc-win64.sh builds the win64 units from.
windows="gcc-mingw-w64-x86-64-win32 wine64 fpc-source"
# Debian's own cargo and rustc (bookworm: rustc 1.63), not rustup's, which
# CI's machine cannot download: bindings/rust builds with these, offline,
# from the crates in bindings/rust/vendor/. The Win64 std and the cross
# compiler build the crates for x86_64-pc-windows-gnu too, Wine runs them.
# The ARM64 cross compilers and C library, and qemu-user statically linked
# (scripts/run-aarch64.sh says why static).
arm64="gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static"
# musl-gcc (musl-tools), musl's headers and static library (musl-dev) and its
# dynamic loader, /lib/ld-musl-x86_64.so.1 (musl).
musl="musl musl-dev musl-tools"
rust="cargo rustc gcc libc6-dev libstd-rust-dev-windows gcc-mingw-w64-x86-64-win32 wine64"

mode=${1:-test}
case "$mode" in
  base) required=$base optional= ;;
  test) required=$test optional= ;;
  bench) required="$base $build" optional="$peers $chart valgrind" ;;
  overhead) required="$base $build valgrind" optional= ;;
  windows) required="$test $windows" optional= ;;
  arm64) required="$test $arm64" optional= ;;
  musl) required="$test $musl" optional= ;;
  rust) required="$base $rust" optional= ;;
  *) echo "usage: scripts/install-deps.sh [base|test|bench|overhead|windows|arm64|musl|rust]" >&2
     exit 64 ;;
esac

say() { echo "install-deps: $*" >&2; }

if ! command -v dpkg-query >/dev/null 2>&1; then
  # Not Debian: nothing to check against; the build names what it misses.
  command -v python3 >/dev/null 2>&1 || { say "python3 is missing; install it first"; exit 1; }
  [ "$mode" = base ] || say "not a Debian system: make sure the equivalents of these are installed: $required"
  exit 0
fi

missing() { # packages...: those not installed, on one line
  for package in "$@"; do
    dpkg-query -W -f='${Status}\n' "$package" 2>/dev/null | grep -q "install ok installed" ||
      printf '%s\n' "$package"
  done | paste -sd ' ' -
}
# shellcheck disable=SC2086 # the lists are words on purpose
need=$(missing $required)
# shellcheck disable=SC2086
want=$(missing $optional)
[ -z "$need$want" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  [ -n "$want" ] && say "optional packages missing (not root, not installed): $want"
  [ -z "$need" ] && exit 0
  say "missing packages: $need"
  say "install them as root: apt-get install --no-install-recommends $need"
  say "(or run: sudo scripts/install-deps.sh $mode)"
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
updated=no
update() {
  say "apt-get update"
  apt-get update -q >"$log" 2>&1 || { tail -n 20 "$log" >&2; say "apt-get update failed"; exit 1; }
  updated=yes
}
# apt must know every package before it installs any of them.
for package in $need $want; do
  apt-cache show --no-all-versions "$package" >/dev/null 2>&1 || { update; break; }
done
apt_install() { # packages...: 0 when apt-get installed them all
  apt-get install -y -q --no-install-recommends "$@" >"$log" 2>&1 && return 0
  [ "$updated" = yes ] && return 1
  update  # stale package lists are the usual cause
  apt-get install -y -q --no-install-recommends "$@" >"$log" 2>&1
}

if [ -n "$need" ]; then
  say "installing $need"
  # shellcheck disable=SC2086
  apt_install $need || { tail -n 20 "$log" >&2; say "could not install: $need"; exit 1; }
fi
for package in $want; do
  say "installing $package (optional)"
  apt_install "$package" && continue
  case " $chart " in
    *" $package "*) say "could not install $package: the benchmark will write its table but no chart" ;;
    *) say "could not install $package: the benchmark will run without that allocator" ;;
  esac
done
exit 0
