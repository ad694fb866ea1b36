#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs this build into a scratch prefix, then links programs against it in
# every documented form, under --as-needed (Debian's default, made explicit):
#  - consumer.c uses the brisk_* API (pkg-config, CMake package);
#  - libc_only.c calls no allocation function itself, so only a link form that
#    keeps brisk in makes brisk serve what libc allocates for it. Each such
#    program must report that, and ldd must show the library the form promises.
# In a cross build (ARM64) CC is the cross compiler, CMAKE_TOOLCHAIN_FILE the
# build's toolchain, and the programs run through $CROSSCOMPILING_EMULATOR
# (qemu-user); their dynamic sections (readelf) say what ldd would.
# usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 source=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
prefix=$scratch/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
lib=$(dirname "$(find "$prefix" -name libbrisk.so.0)")
export PKG_CONFIG_PATH="$lib/pkgconfig"
cc="${CC:-cc} -Wl,--as-needed"
app=$source/libc_only.c
read -ra emulator <<<"${CROSSCOMPILING_EMULATOR:-}"
target() { "${emulator[@]}" "$@"; } # runs a program built here

failed=0 passed=0
result() { # ok?, message
  if [ "$1" = yes ]; then passed=$((passed + 1)); echo "ok   $2"; else failed=$((failed + 1)); echo "FAIL $2"; fi
}
expect_owns() { # name, program: the brisk_* API consumer
  local out
  out=$(target "$2" 2>&1) && grep -q "owns=1" <<<"$out" && ok=yes || ok=no
  result $ok "$1: $out"
}
linked() { # program: "shared" when ldd finds the installed libbrisk.so.0
  # ldd's output first: grep -q stopping early would fail ldd (pipefail) at random
  local libraries
  if [ ${#emulator[@]} -gt 0 ]; then
    # ldd runs this machine's loader: the program's own dynamic section
    # instead, which must need libbrisk.so.0 and search the installed folder
    libraries=$(readelf -d "$1" 2>&1) || true
    local search
    search=$(sed -nE 's/.*\((RUNPATH|RPATH)\).*\[(.*)\]$/\2/p' <<<"$libraries")
    if grep -q "(NEEDED).*\[libbrisk.so.0\]" <<<"$libraries" && [[ ":$search:" == *":$lib:"* ]]
    then echo shared; else echo static; fi
    return
  fi
  # (LDD: the C library's own, where it is not the system's: musl-ldd)
  libraries=$(${LDD:-ldd} "$1" 2>&1) || true
  if grep -q "libbrisk.so.0 => $lib/libbrisk.so.0" <<<"$libraries"; then echo shared; else echo static; fi
}
expect_served() { # name, program, shared|static: libc_only
  local out
  out=$(target "$2" 2>&1) && ok=yes || ok=no
  result $ok "$1: $out"
  [ "$(linked "$2")" = "$3" ] && ok=yes || ok=no
  result $ok "$1: ldd shows brisk linked $3"
}

# the brisk_* API
$cc "$source/consumer.c" $(pkg-config --cflags --libs brisk) -Wl,-rpath,"$lib" -o "$scratch/consumer_pc"
expect_owns "pkg-config brisk, API" "$scratch/consumer_pc"
# (a cross build's toolchain searches its own root only: the prefix joins it)
cmake -S "$source" -B "$scratch/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
  ${CMAKE_TOOLCHAIN_FILE:+-DCMAKE_FIND_ROOT_PATH="$prefix"} \
  -DCMAKE_EXE_LINKER_FLAGS=-Wl,--as-needed >/dev/null
cmake --build "$scratch/cmake" >/dev/null
expect_owns "brisk::brisk, API" "$scratch/cmake/consumer_shared"
expect_owns "brisk::brisk_static, API" "$scratch/cmake/consumer_static"
[ "$(linked "$scratch/cmake/consumer_static")" = static ] && ok=yes || ok=no
result $ok "brisk::brisk_static, API: needs no libbrisk.so"

# brisk as malloc, libc's own allocations included
$cc "$app" -L"$lib" -Wl,-rpath,"$lib" -lbrisk -o "$scratch/l"
expect_served "cc app.c -lbrisk" "$scratch/l" shared
$cc "$app" $(pkg-config --libs brisk) -Wl,-rpath,"$lib" -o "$scratch/pc"
expect_served "pkg-config --libs brisk" "$scratch/pc" shared
$cc "$app" $(pkg-config --static --libs brisk) -Wl,-rpath,"$lib" -o "$scratch/pc_static"
expect_served "pkg-config --static --libs brisk" "$scratch/pc_static" shared
$cc -static "$app" $(pkg-config --static --libs brisk) -o "$scratch/pc_static_full"
expect_served "cc -static, pkg-config --static --libs brisk" "$scratch/pc_static_full" static
$cc "$app" $(pkg-config --libs brisk-static) -o "$scratch/pc_brisk_static"
expect_served "pkg-config --libs brisk-static" "$scratch/pc_brisk_static" static
expect_served "brisk::brisk" "$scratch/cmake/libc_only_shared" shared
expect_served "brisk::brisk_static" "$scratch/cmake/libc_only_static" static

# The check above can fail: linked without brisk_link.o, --as-needed drops brisk.
$cc "$app" -L"$lib" -Wl,-rpath,"$lib" -l:libbrisk.so.0 -o "$scratch/unanchored"
out=$(target "$scratch/unanchored" 2>&1) && ok=no || ok=yes
result $ok "control, -l:libbrisk.so.0 alone: dropped by --as-needed ($out)"

# The brisk command and the Free Pascal unit, installed beside the library;
# the command finds its own library from where it lies (any --prefix).
version=$(sed -n 's/^Version: //p' "$lib/pkgconfig/brisk.pc")
out=$("$prefix/bin/brisk" --version 2>&1) && [ "$out" = "brisk $version" ] && ok=yes || ok=no
result $ok "installed brisk --version: $out"
# (TEST_TRUE_PROGRAM: a true of the library's machine, where it is not the system's)
out=$(cd / && "$prefix/bin/brisk" run --stats -- "${emulator[@]}" "${TEST_TRUE_PROGRAM:-/bin/true}" 2>&1) &&
  grep -q "brisk $version statistics" <<<"$out" && ok=yes || ok=no
result $ok "installed brisk run --stats -- /bin/true: the installed library's statistics"
[ -s "$prefix/share/brisk/pascal/BriskMM.pas" ] && ok=yes || ok=no
result $ok "BriskMM.pas installed in share/brisk/pascal"
[ -s "$prefix/share/brisk/pascal/brisk.lpk" ] && [ -s "$prefix/share/brisk/pascal/brisk.pas" ] &&
  ok=yes || ok=no
result $ok "the Lazarus package brisk.lpk (and its main unit) installed in share/brisk/pascal"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
