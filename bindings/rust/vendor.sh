#!/bin/sh
# SPDX-License-Identifier: MIT
# Copies brisk's C sources into briskalloc-sys/c_src/ (ignored by git), for
# `cargo package`: cargo packs only files inside a crate's folder, and the
# -sys crate's build.rs builds from c_src/ when it is not inside the brisk
# repository. Copies exactly what build.rs reads: src/, include/,
# CMakeLists.txt (the list of sources), and the LICENSE they are under.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dest="$here/briskalloc-sys/c_src"
rm -rf "$dest"
mkdir -p "$dest"
cp -R "$root/src" "$root/include" "$root/CMakeLists.txt" "$root/LICENSE" "$dest/"
echo "vendor.sh: brisk's sources copied to ${dest#"$root"/}"
