#!/bin/sh
# SPDX-License-Identifier: MIT
# Packs both crates as `cargo publish` would and builds and tests what was
# packed, outside the repository's tree of sources:
#   1. vendor.sh copies brisk's C sources into briskalloc-sys/c_src/;
#   2. `cargo package` packs both, --no-verify: cargo's own check would build
#      each packed crate alone, briskalloc against a briskalloc-sys that is
#      not on crates.io yet, and both with the newest cc, which needs a newer
#      rustc than Debian's 1.63;
#   3. so both .crate files are unpacked side by side, outside the brisk
#      repository (the packed briskalloc-sys finds its C sources in c_src/
#      only), and both packed crates' tests run, briskalloc's against the
#      packed briskalloc-sys ([patch]), with the workspace's Cargo.lock.
# Lists each package's files in $CARGO_TARGET_DIR/package/*.list (default
# target/). Uses `cargo` from PATH (./brisk test's rust stage puts Debian's
# first).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
target=${CARGO_TARGET_DIR:-$here/target}
./vendor.sh
version=$(sed -n 's/^version = "\(.*\)"/\1/p' briskalloc-sys/Cargo.toml)
mkdir -p "$target/package"
# --allow-dirty: this checks the packing of the tree as it is, committed or not
cargo package -p briskalloc-sys --allow-dirty --list >"$target/package/briskalloc-sys.list"
cargo package -p briskalloc --allow-dirty --list >"$target/package/briskalloc.list"
for file in Cargo.toml build.rs src/lib.rs LICENSE README.md c_src/LICENSE \
    c_src/CMakeLists.txt c_src/include/brisk.h c_src/src/api/malloc.c \
    c_src/src/api/override.c c_src/src/platform/windows.c; do
  grep -qx "$file" "$target/package/briskalloc-sys.list" ||
    { echo "package.sh: briskalloc-sys's package lacks $file" >&2; exit 1; }
done
for file in Cargo.toml src/lib.rs LICENSE README.md tests/threads.rs tests/alignment.rs \
    tests/readme.rs; do
  grep -qx "$file" "$target/package/briskalloc.list" ||
    { echo "package.sh: briskalloc's package lacks $file" >&2; exit 1; }
done
cargo package -p briskalloc-sys --allow-dirty --no-verify
cargo package -p briskalloc --allow-dirty --no-verify

check=$(mktemp -d)
trap 'rm -rf "$check"' EXIT
tar -xzf "$target/package/briskalloc-sys-$version.crate" -C "$check"
tar -xzf "$target/package/briskalloc-$version.crate" -C "$check"
cat >"$check/Cargo.toml" <<TOML
[workspace]
members = ["briskalloc-$version", "briskalloc-sys-$version"]
[patch.crates-io]
briskalloc-sys = { path = "briskalloc-sys-$version" }
TOML
# the same versions of cc and libc as the workspace (rustc 1.63)
cp Cargo.lock "$check/"
cargo test --no-fail-fast --manifest-path "$check/Cargo.toml" --target-dir "$target/package-check"
echo "package.sh: both crates packed, and the packed crates passed their tests"
