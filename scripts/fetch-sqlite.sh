#!/bin/sh
# SPDX-License-Identifier: MIT
# Fetches SQLite's amalgamation (sqlite3.c, sqlite3.h: SQLite in two files,
# public domain) for the musl stage, whose preload test runs SQLite built
# with musl-gcc: Debian's sqlite3 is a glibc program, and Debian packages no
# SQLite for musl nor the amalgamation itself. The Rust crate libsqlite3-sys
# carries it (its bundled build), so cargo fetches that crate from crates.io
# into a scratch folder, and the two files are copied out. Called by
# scripts/install-deps.sh musl, which has installed Debian's cargo.
#
#   scripts/fetch-sqlite.sh [DIR]     (default: .cache/sqlite-3.41.2)
#
# Writes DIR/sqlite3.c and DIR/sqlite3.h, checked against their SHA-256
# (those of libsqlite3-sys 0.26.0: SQLite 3.41.2); nothing else is kept, and
# nothing is written outside DIR and a temporary folder. Run again, it does
# nothing when the files are there. A fetch that fails is named, and the
# test that needs the files is reported as skipped with the reason.
set -u

crate_version=0.26.0
sqlite_version=3.41.2
sha_c=efe007ec6f1a4084b87cebba18cc887c316e0baaf4ec2675990726b94cb85470
sha_h=10ff8c8842b5e6bb0555f39ce946b77d0f84acc9e33895d22242444d91900571

repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$repo/.cache/sqlite-$sqlite_version}
say() { echo "fetch-sqlite: $*" >&2; }

sound() { # DIR: both files there, with the expected contents
  [ -f "$1/sqlite3.c" ] && [ -f "$1/sqlite3.h" ] &&
    [ "$(sha256sum <"$1/sqlite3.c" | cut -d' ' -f1)" = "$sha_c" ] &&
    [ "$(sha256sum <"$1/sqlite3.h" | cut -d' ' -f1)" = "$sha_h" ]
}
sound "$dir" && exit 0

cargo=$(command -v cargo || true)
if [ -z "$cargo" ]; then
  say "no cargo (Debian's cargo: scripts/install-deps.sh musl installs it)"
  exit 1
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/project/src"
: >"$scratch/project/src/lib.rs"
cat >"$scratch/project/Cargo.toml" <<EOF
[package]
name = "fetch-sqlite"
version = "0.0.0"
edition = "2018"

[dependencies]
libsqlite3-sys = { version = "=$crate_version", default-features = false, features = ["bundled"] }
EOF
# crates.io's index is read over its sparse protocol, cargo's default since
# 1.70; Debian 12's cargo (1.65) has it only as an unstable option, which a
# stable cargo accepts under RUSTC_BOOTSTRAP=1. The git index the older
# default clones is the same data, from a host CI cannot reach.
minor=$("$cargo" --version | sed -n 's/^cargo 1\.\([0-9]*\).*/\1/p')
set --
if [ -n "$minor" ] && [ "$minor" -lt 68 ]; then
  set -- -Z sparse-registry
  export RUSTC_BOOTSTRAP=1
fi
say "cargo fetch libsqlite3-sys $crate_version (SQLite $sqlite_version)"
if ! (cd "$scratch/project" && CARGO_HOME="$scratch/cargo" \
  CARGO_REGISTRIES_CRATES_IO_PROTOCOL=sparse timeout 300 "$cargo" "$@" fetch >"$scratch/log" 2>&1); then
  tail -n 5 "$scratch/log" >&2
  say "cargo could not fetch libsqlite3-sys $crate_version"
  exit 1
fi
crate=$(find "$scratch/cargo/registry/src" -maxdepth 2 -type d -name "libsqlite3-sys-$crate_version")
mkdir -p "$dir"
cp "$crate/sqlite3/sqlite3.c" "$crate/sqlite3/sqlite3.h" "$dir/" || exit 1
if ! sound "$dir"; then
  rm -f "$dir/sqlite3.c" "$dir/sqlite3.h"
  say "libsqlite3-sys $crate_version's sqlite3.c or sqlite3.h is not the expected file"
  exit 1
fi
say "SQLite $sqlite_version's amalgamation in $dir"
