#!/usr/bin/env bash
# Builds other allocators from their source checkouts as libraries that can
# be preloaded, so `brisk bench` can measure brisk against the newest designs.
#
#   scripts/build-anchors.sh [--out DIR] SRC...
#
# Each SRC is a checkout (a git clone, worktree or unpacked release) of one of
#   mimalloc   https://github.com/microsoft/mimalloc   (v3 -> mimalloc3.so; v2 -> mimalloc2.so)
#   snmalloc   https://github.com/microsoft/snmalloc   (-> snmalloc.so, its libsnmallocshim.so)
#   rpmalloc   https://github.com/mjansson/rpmalloc    (-> rpmalloc.so)
# recognised by its files, whatever the folder is called. Release builds, with
# each project's own defaults for overriding malloc. For each library,
# DIR/NAME.version records the version (git describe, or the version in the
# sources) and the source folder. DIR defaults to .cache/anchors/, where
# `./brisk bench` picks every NAME.so up by itself. The `--alloc` arguments
# for other tools are printed at the end.
#
# Needs cmake, a C compiler and, for snmalloc, a C++17 compiler
# (scripts/install-deps.sh installs them). Nothing is downloaded.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/.cache/anchors"
usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; }

sources=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="${2:?--out needs a folder}"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "build-anchors: unknown option $1" >&2; usage >&2; exit 64 ;;
    *) sources+=("$1"); shift ;;
  esac
done
if [ ${#sources[@]} -eq 0 ]; then
  usage >&2
  exit 64
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"
jobs="$(nproc 2>/dev/null || echo 2)"

# Which allocator a checkout holds, from files only that project has.
kind_of() {
  if [ -f "$1/include/mimalloc.h" ]; then echo mimalloc
  elif [ -f "$1/src/snmalloc/snmalloc.h" ]; then echo snmalloc
  elif [ -f "$1/rpmalloc/rpmalloc.c" ]; then echo rpmalloc
  else return 1
  fi
}

# The version: git's tag when the checkout has history, else what the
# sources say about themselves.
version_of() {
  local src="$1" kind="$2" described
  if described="$(git -C "$src" describe --tags --always 2>/dev/null)"; then
    echo "$described"
    return
  fi
  case "$kind" in
    mimalloc)
      sed -n 's/^#define MI_MALLOC_VERSION \([0-9]*\).*/\1/p' "$src/include/mimalloc.h" |
        awk '{ printf "v%d.%d.%d (from mimalloc.h)\n", $1 / 10000, ($1 / 100) % 100, $1 % 100 }' ;;
    rpmalloc) echo "$(head -n 1 "$src/CHANGELOG") (from CHANGELOG)" ;;
    *) echo "unknown (no git history)" ;;
  esac
}

build_mimalloc() {  # src build_dir -> path of the shared library
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DMI_BUILD_TESTS=OFF -DMI_BUILD_STATIC=OFF \
    -DMI_BUILD_OBJECT=OFF -DMI_OVERRIDE=ON >"$2.log" 2>&1
  cmake --build "$2" -j "$jobs" >>"$2.log" 2>&1
  find "$2" -maxdepth 1 -name 'libmimalloc.so.*' -type f | sort | tail -n 1
}

build_snmalloc() {
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DSNMALLOC_BUILD_TESTING=OFF \
    -DSNMALLOC_STATIC_LIBRARY=OFF >"$2.log" 2>&1
  cmake --build "$2" -j "$jobs" --target snmallocshim >>"$2.log" 2>&1
  echo "$2/libsnmallocshim.so"
}

build_rpmalloc() {
  # rpmalloc builds with its own ninja generator; the shared library is one
  # translation unit, compiled here with the flags that generator uses.
  mkdir -p "$2"
  cc -std=gnu11 -O3 -funroll-loops -fPIC -shared -DRPMALLOC_COMPILE=1 -DBUILD_RELEASE=1 \
    -DBUILD_DYNAMIC_LINK=1 -DENABLE_DYNAMIC_LINK=1 -I"$1/rpmalloc" "$1/rpmalloc/rpmalloc.c" \
    -o "$2/librpmalloc.so" -lpthread >"$2.log" 2>&1
  echo "$2/librpmalloc.so"
}

# A library that a trivial program cannot run with is no use to the bench.
check_preload() {
  local stderr
  stderr="$(LD_PRELOAD="$1" /bin/true 2>&1)" && [ -z "$stderr" ]
}

args=()
for src in "${sources[@]}"; do
  src="$(cd "$src" && pwd)"
  if ! kind="$(kind_of "$src")"; then
    echo "build-anchors: $src is not a mimalloc, snmalloc or rpmalloc checkout" >&2
    exit 65
  fi
  version="$(version_of "$src" "$kind")"
  name="$kind"
  if [ "$kind" = mimalloc ]; then
    name="mimalloc$(sed -n 's/^#define MI_MALLOC_VERSION \([0-9]\).*/\1/p' "$src/include/mimalloc.h")"
  fi
  build_dir="$out/build/$name"
  echo "build-anchors: building $name $version from $src ..."
  mkdir -p "$out/build"
  if ! library="$("build_$kind" "$src" "$build_dir")" || [ ! -f "$library" ]; then
    echo "build-anchors: building $name failed; the last lines of $build_dir.log:" >&2
    tail -n 15 "$build_dir.log" >&2
    exit 1
  fi
  cp "$library" "$out/$name.so.partial"
  mv "$out/$name.so.partial" "$out/$name.so"
  if ! check_preload "$out/$name.so"; then
    echo "build-anchors: $out/$name.so cannot be preloaded into /bin/true" >&2
    exit 1
  fi
  printf '%s %s (source %s)\n' "$name" "$version" "$src" >"$out/$name.version"
  args+=("--alloc $name=$out/$name.so")
done

if [ "$out" = "$root/.cache/anchors" ]; then
  echo "build-anchors: built into $out; ./brisk bench picks them up by itself. For other tools:"
else
  echo "build-anchors: built into $out; use ./brisk bench --anchors $out, or:"
fi
printf '  %s\n' "${args[@]}"
