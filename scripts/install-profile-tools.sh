#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the tools the heap profile's tests read brisk's output with, into
# /usr/local/bin: Google's pprof (a Go program, from the Go module proxy) and
# inferno-flamegraph (a Rust program, from crates.io), which renders folded
# stacks as a flame graph (Debian 12 packages neither, nor flamegraph.pl). Called by
# scripts/install-deps.sh test, as root; a tool that cannot be installed is
# named, and the tests that need it are skipped with the reason.
#
# Debian 12's Go is 1.19 and pprof needs a newer one: the Go toolchain itself
# is a module on the proxy (golang.org/toolchain), fetched with Debian's go.
set -u

PPROF_VERSION=v0.0.0-20261105003125-4bf881d7fb0b
GO_TOOLCHAIN=go1.26.8 # what that pprof's go.mod asks for, or later
GO_MINOR_NEEDED=26
INFERNO_VERSION=0.11.21
BIN=/usr/local/bin

say() { echo "install-profile-tools: $*" >&2; }

have() { command -v "$1" >/dev/null 2>&1 || [ -x "$BIN/$1" ]; }

install_pprof() {
  have pprof && return 0
  go=$(command -v go || true)
  if [ -z "$go" ]; then
    apt-get install -y --no-install-recommends golang-go ca-certificates >/dev/null || return 1
    go=$(command -v go) || return 1
  fi
  work=$(mktemp -d)
  export GOPATH="$work/gopath" GOMODCACHE="$work/gopath/pkg/mod" GOCACHE="$work/cache"
  export GOFLAGS=-modcacherw GOTOOLCHAIN=local
  minor=$("$go" env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
  if [ "${minor:-0}" -lt "$GO_MINOR_NEEDED" ]; then
    say "go $("$go" env GOVERSION) is too old for pprof: fetching $GO_TOOLCHAIN from the Go module proxy"
    dir=$(cd "$work" && "$go" mod download -json "golang.org/toolchain@v0.0.1-$GO_TOOLCHAIN.linux-amd64" |
      sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    [ -n "$dir" ] && [ -f "$dir/bin/go" ] || { rm -rf "$work"; return 1; }
    # module archives keep no executable bits
    find "$dir/bin" "$dir/pkg/tool" -type f -exec chmod +x {} +
    go="$dir/bin/go"
  fi
  GOBIN="$BIN" "$go" install "github.com/google/pprof@$PPROF_VERSION"
  status=$?
  rm -rf "$work"
  return $status
}

# Needs a cargo that reads crates.io's sparse index (1.68 or later, as rustup
# installs): Debian 12's cargo (1.65) fetches the index with git from a host
# that CI's machines cannot reach, so it is not installed for this.
install_inferno() {
  have inferno-flamegraph && return 0
  cargo=$(command -v cargo || true)
  minor=$([ -n "$cargo" ] && "$cargo" --version | sed -n 's/^cargo 1\.\([0-9]*\).*/\1/p')
  if [ "${minor:-0}" -lt 68 ]; then
    say "inferno-flamegraph needs cargo 1.68 or later (crates.io's sparse index); found ${cargo:-none}"
    return 1
  fi
  work=$(mktemp -d)
  CARGO_HOME="$work" CARGO_REGISTRIES_CRATES_IO_PROTOCOL=sparse "$cargo" install --quiet --locked \
    --root "$work/root" inferno --version "$INFERNO_VERSION" >/dev/null
  status=$?
  [ $status -eq 0 ] && cp "$work/root/bin/inferno-flamegraph" "$BIN/"
  rm -rf "$work"
  return $status
}

if [ "$(id -u)" -ne 0 ]; then
  have pprof && have inferno-flamegraph && exit 0
  say "not root: pprof and inferno-flamegraph not installed (their tests are skipped)"
  exit 0
fi
install_pprof || say "pprof could not be installed (the tests that read profiles with it are skipped)"
install_inferno || say "inferno-flamegraph could not be installed (the flame graph test is skipped)"
exit 0
