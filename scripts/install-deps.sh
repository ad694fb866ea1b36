#!/bin/sh
# SPDX-License-Identifier: MIT
# The one place that installs what brisk needs (Debian 12, apt-get). Nothing
# else in the repository installs packages: ./brisk runs this before each
# command, and CMake only checks and says what is missing.
#
#   scripts/install-deps.sh base      python3, which ./brisk's commands run on
#   scripts/install-deps.sh test      everything `./brisk test` needs (the default), with
#                                     pprof built from tools/vendor (install-profile-tools.sh)
#   scripts/install-deps.sh bench     what `./brisk bench` needs to build, plus the
#                                     peer allocators and the chart library if it can
#   scripts/install-deps.sh overhead  what `./brisk overhead` needs (adds valgrind)
#   scripts/install-deps.sh windows   the test packages plus the Win64 cross toolchain,
#                                     Wine and the Free Pascal sources (scripts/test-windows.sh)
#   scripts/install-deps.sh linux32   the test packages plus gcc's 32-bit x86 support, the
#                                     Free Pascal and Lazarus sources, GTK 2's i386 libraries
#                                     unpacked into .cache/gtk2-i386 (gtk2_i386 below), and,
#                                     where apt can, Debian's CPython and SQLite libraries for
#                                     i386 (./brisk test's linux32 stage)
#   scripts/install-deps.sh win32     the test packages plus the Win32 cross toolchain and the
#                                     Free Pascal sources, and, where apt can, Wine's 32-bit
#                                     side (./brisk test's win32 stage)
#   scripts/install-deps.sh arm64     the test packages plus the ARM64 cross toolchain (gcc,
#                                     g++, the ARM64 C library) and qemu-user to run its
#                                     programs, and, where apt can, Debian's CPython and
#                                     SQLite libraries for arm64 (./brisk test's arm64 stages)
#   scripts/install-deps.sh musl      the test packages plus musl-gcc and musl's dynamic
#                                     loader (./brisk test's musl stage, tools/musl_bench.py),
#                                     and Debian's static SQLite library (libsqlite3-dev)
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
# lazbuild and the prebuilt LCL (GTK 2) for the Lazarus package's tests; the LCL
# units need fp-units-misc (the chm units), which lcl-units does not pull in.
lazarus="lcl-utils lcl-units fp-units-misc"
# libclang-rt-14-dev holds the sanitizer runtimes: clang only recommends it, so
# an install without recommends leaves the ThreadSanitizer build unable to link.
# git makes the source tarball (scripts/package.sh), which the package stage builds.
# tmux runs `brisk top` in a terminal for its test (tests/tools/brisk_top_test.py).
# golang-go builds Google's pprof from tools/vendor/pprof, offline; perl runs
# tools/vendor/flamegraph/flamegraph.pl (perl-base lacks the open module it uses).
test="$base $build $lazarus clang libclang-rt-14-dev clang-format sqlite3 git golang-go perl tmux"
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
# Debian's CPython and SQLite libraries for arm64, as linux32_i386 below: the
# arm64 stages run them under qemu-user with the ARM64 brisk preloaded; from
# the arm64 architecture, tried apart (foreign_packages below).
arm64_foreign="libpython3.11:arm64 libsqlite3-0:arm64"
# musl-gcc (musl-tools), musl's headers and static library (musl-dev) and its
# dynamic loader, /lib/ld-musl-x86_64.so.1 (musl); libsqlite3-dev's
# libsqlite3.a, built for glibc, is linked into the musl stage's SQLite
# program (tests/override/sqlite_glibc_shim.c says why that holds).
musl="musl musl-dev musl-tools libsqlite3-dev"
rust="cargo rustc gcc libc6-dev libstd-rust-dev-windows gcc-mingw-w64-x86-64-win32 wine64"

# gcc -m32: the versioned multilib packages, not gcc-multilib, which adds only
# the link /usr/include/asm and conflicts with every cross compiler
# (gcc-aarch64-linux-gnu among them); cmake/linux-i386.cmake points -m32 at
# those headers itself. fpc-source: scripts/build-fpc-i386.sh builds Free
# Pascal's i386 compiler and units from it; lazarus-src: the LCL's sources,
# which scripts/build-lcl-i386.sh compiles for i386 (lcl-units holds only
# the x86-64 units).
linux32="gcc-12-multilib g++-12-multilib fpc-source lazarus-src"
# GTK 2's i386 libraries, which an i386 LCL program links against; the
# packages' files are unpacked into .cache/gtk2-i386, not installed (see
# gtk2_i386 below).
linux32_gtk2="libgtk2.0-0 libgdk-pixbuf-2.0-0 libglib2.0-0 libpango-1.0-0 libcairo2 libatk1.0-0
  libx11-6"
# Debian's CPython and SQLite libraries for i386 (Multi-Arch: same, so they
# install beside the amd64 ones, unlike the python3 and sqlite3 programs):
# the linux32 stage runs them with the 32-bit brisk preloaded
# (tests/override/python_main.c, sqlite_shell.c); from the i386 architecture,
# tried apart (foreign_packages below).
linux32_i386="libpython3.11:i386 libsqlite3-0:i386"
# The Win32 cross compiler and Free Pascal's sources (i386-win32 units);
# wine32:i386 is tried apart (foreign_packages below).
win32="gcc-mingw-w64-i686-win32 g++-mingw-w64-i686-win32 fpc-source"
win32_i386="wine32:i386"

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
  linux32) required="$test $linux32" optional= ;;
  win32) required="$test $win32" optional= ;;
  *) echo "usage: scripts/install-deps.sh [base|test|bench|overhead|windows|linux32|win32|arm64|musl|rust]" >&2
    exit 64 ;;
esac

say() { echo "install-deps: $*" >&2; }
# The test mode also builds Google's pprof, which Debian does not package, from
# its vendored source, offline (the heap profile's tests read brisk's profiles
# with it; they are skipped, with the reason, without).
extras() {
  [ "$mode" = test ] && sh "$(dirname "$0")/install-profile-tools.sh"
  return 0
}

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
case "$mode" in win32|linux32|arm64) ;; *) [ -z "$need$want" ] && { extras; exit 0; } ;; esac

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
# Packages of another Debian architecture: Wine's 32-bit side for the win32
# stage, and the libraries of the programs the linux32 and arm64 stages'
# preload tests run (python3's and sqlite3's, whose programs cannot be
# installed for i386 or arm64 beside the amd64 ones). They need that dpkg
# architecture, and install only while its package lists are in step with
# the amd64 ones (a mirror mid-sync serves them out of step, and apt
# refuses). Where they cannot, it says apt's answer and leaves the machine as
# it found it (the architecture removed again, so that no later `apt-get
# update` trips on its lists); the tests that need them are then reported as
# skipped.
#   foreign_packages ARCH "PACKAGE:ARCH ..." "what the stage does without them"
foreign_packages() {
  arch=$1 wanted=$2 without=$3 absent=
  for package in $wanted; do
    dpkg-query -W -f='${Status}\n' "$package" 2>/dev/null | grep -q "install ok installed" ||
      absent="$absent $package"
  done
  [ -z "$absent" ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    say "not installed (not root):$absent: $without"
    return 0
  fi
  added=no
  if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
    say "dpkg --add-architecture $arch (for$absent)"
    dpkg --add-architecture "$arch"
    added=yes
  fi
  say "apt-get update (with the $arch lists)"
  apt-get update -q >"$log" 2>&1 || { grep -E '^(E|W):' "$log" | head -n 5 >&2; }
  say "installing$absent (optional)"
  # shellcheck disable=SC2086 # the list is words on purpose
  if apt-get install -y -q --no-install-recommends $absent >"$log" 2>&1; then
    say "installed$absent"
    return 0
  fi
  grep -vE '^(Reading|Building|Some packages|requested|distribution|or been moved|The following information)' \
    "$log" | tail -n 20 >&2
  say "could not install$absent (apt's answer above): $without"
  if [ "$added" = yes ] && [ -z "$(dpkg-query -W -f='${Architecture}\n' 2>/dev/null | grep -x "$arch")" ]; then
    dpkg --remove-architecture "$arch" && apt-get update -q >"$log" 2>&1 || true
    say "dpkg's $arch architecture removed again"
  fi
  return 0
}

# GTK 2's i386 libraries for linking the linux32 stage's LCL program, which is
# built, not run. Installed through dpkg's i386 architecture they would need
# the i386 package lists in step with the amd64 ones (see above) and pull in
# some forty i386 packages; the link needs only these files. So apt, with
# lists of its own in .cache/gtk2-i386/apt (for i386 alone: the system's apt
# is left as it is), downloads the packages, and dpkg-deb unpacks them into
# .cache/gtk2-i386/root. Where it cannot, the LCL program is skipped.
gtk2_i386() {
  cache=$(cd "$(dirname "$0")/.." && pwd)/.cache/gtk2-i386
  stamp="$(printf '%s ' $linux32_gtk2)"
  [ -f "$cache/stamp" ] && [ "$(cat "$cache/stamp")" = "$stamp" ] && return 0
  without="the linux32 stage reports its Lazarus LCL project as skipped"
  if [ "$(id -u)" -ne 0 ]; then
    say "GTK 2's i386 libraries not fetched (not root): $without"
    return 0
  fi
  say "fetching GTK 2's i386 libraries into $cache"
  rm -rf "$cache"
  mkdir -p "$cache/apt/lists/partial" "$cache/apt/cache/archives/partial" "$cache/debs"
  set -- -q -o APT::Architecture=i386 -o APT::Architectures::=i386 \
    -o Dir::State::Lists="$cache/apt/lists" -o Dir::Cache="$cache/apt/cache" \
    -o APT::Sandbox::User=root
  # An index that fails (a mirror mid-sync) is reported and left out; the
  # download says whether the packages were in the others.
  apt-get "$@" update >"$log" 2>&1 || grep -E '^(E|W):' "$log" | head -n 3 >&2
  # shellcheck disable=SC2086 # the list is words on purpose
  if ! (cd "$cache/debs" && apt-get "$@" download $linux32_gtk2) >"$log" 2>&1; then
    tail -n 5 "$log" >&2
    say "could not download GTK 2's i386 packages: $without"
    rm -rf "$cache"
    return 0
  fi
  for deb in "$cache"/debs/*.deb; do
    dpkg-deb -x "$deb" "$cache/root"
  done
  rm -rf "$cache/apt" "$cache/debs"
  echo "$stamp" >"$cache/stamp"
  say "GTK 2's i386 libraries unpacked into $cache/root"
}

for package in $want; do
  say "installing $package (optional)"
  apt_install "$package" && continue
  case " $chart " in
    *" $package "*) say "could not install $package: the benchmark will write its table but no chart" ;;
    *) say "could not install $package: the benchmark will run without that allocator" ;;
  esac
done
extras
case "$mode" in
  win32) foreign_packages i386 "$win32_i386" "the win32 stage builds everything and reports its runs as skipped" ;;
  linux32) foreign_packages i386 "$linux32_i386" "the linux32 stage reports its preload tests of python3 and sqlite3 as skipped"
    gtk2_i386 ;;
  arm64) foreign_packages arm64 "$arm64_foreign" "the arm64 stages report their preload tests of python3 and sqlite3 as skipped" ;;
esac
exit 0
