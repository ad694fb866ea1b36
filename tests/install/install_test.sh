#!/usr/bin/env bash
# Installs this build into a scratch prefix and builds a program against it
# three ways: pkg-config (shared), CMake package (shared and static).
# usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 source=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build" --prefix "$scratch/prefix" > /dev/null
failed=0 passed=0
expect() { # name, command...
  local name=$1; shift
  if out=$("$@" 2>&1) && grep -q "owns=1" <<<"$out"; then
    passed=$((passed + 1)); echo "ok   $name"
  else
    failed=$((failed + 1)); echo "FAIL $name: $out"
  fi
}
export PKG_CONFIG_PATH="$scratch/prefix/lib/pkgconfig"
cc "$source/consumer.c" $(pkg-config --cflags --libs brisk) -Wl,-rpath,"$scratch/prefix/lib" \
  -o "$scratch/consumer_pc"
expect "pkg-config, shared" "$scratch/consumer_pc"
cmake -S "$source" -B "$scratch/cmake" -DCMAKE_PREFIX_PATH="$scratch/prefix" > /dev/null
cmake --build "$scratch/cmake" > /dev/null
expect "find_package, brisk::brisk" "$scratch/cmake/consumer_shared"
expect "find_package, brisk::brisk_static" "$scratch/cmake/consumer_static"
if ldd "$scratch/cmake/consumer_static" | grep -q libbrisk; then
  failed=$((failed + 1)); echo "FAIL the static consumer needs libbrisk.so"
else
  passed=$((passed + 1)); echo "ok   the static consumer needs no libbrisk.so"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
