#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the tools the heap profile's tests read brisk's output with. Called
# by scripts/install-deps.sh test, which has installed Debian's golang-go and
# perl first; nothing here touches the network.
#
# - Google's pprof (a Go program Debian does not package) is built from its
#   source in tools/vendor/pprof/, with its dependencies vendored, by Debian
#   12's Go 1.19, offline, into /usr/local/bin (as root; otherwise into
#   ~/go/bin, where the tests look too).
# - Flame graphs: the tests use inferno-flamegraph where it is installed
#   (`cargo install inferno`, with a cargo that reads crates.io's sparse index)
#   and otherwise tools/vendor/flamegraph/flamegraph.pl on Debian's perl; no
#   install step is needed for either here.
#
# A tool that cannot be built is named, and the tests that need it are skipped
# with the reason.
set -u

root=$(cd "$(dirname "$0")/.." && pwd)
src=$root/tools/vendor/pprof

say() { echo "install-profile-tools: $*" >&2; }

if [ "$(id -u)" -eq 0 ]; then bin=/usr/local/bin; else bin=${HOME:-/nonexistent}/go/bin; fi

install_pprof() {
  command -v pprof >/dev/null 2>&1 || [ -x "$bin/pprof" ] && return 0
  go=$(command -v go || true)
  if [ -z "$go" ]; then
    say "no go command (Debian's golang-go: scripts/install-deps.sh test installs it)"
    return 1
  fi
  mkdir -p "$bin" || return 1
  work=$(mktemp -d)
  # Offline and from tools/vendor only: no module proxy, no toolchain download.
  (cd "$src" && GOFLAGS=-mod=vendor GOTOOLCHAIN=local GOPROXY=off GOSUMDB=off \
    GOPATH="$work/gopath" GOCACHE="$work/cache" CGO_ENABLED=0 \
    "$go" build -trimpath -buildvcs=false -o "$bin/pprof" .)
  status=$?
  rm -rf "$work"
  [ $status -eq 0 ] && say "pprof built from tools/vendor/pprof by $("$go" env GOVERSION), in $bin"
  return $status
}

install_pprof || say "pprof could not be built (the tests that read profiles with it are skipped)"
exit 0
