#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs Debian's sqlite3 on a scripted database on the C library's malloc and
# with LD_PRELOAD=libbrisk.so; the outputs must be identical, and the dynamic
# linker must bind sqlite's and libc's malloc/free to libbrisk. SQLITE
# replaces Debian's sqlite3: in a 32-bit or ARM64 build, sqlite_shell.c linked
# against Debian's libsqlite3-0:i386 or :arm64, run through
# $CROSSCOMPILING_EMULATOR (qemu-user) where the build sets one; in a musl
# build, sqlite_shell.c linked by musl-gcc against Debian's libsqlite3.a
# (sqlite_glibc_shim.c). musl's loader has no LD_DEBUG to show its bindings:
# there every allocation's stack is recorded (a heap profile at a rate of one
# byte), and SQLite's own allocator functions must be among the callers of
# brisk's malloc and realloc (that musl's libc calls the preloaded malloc is
# override_libc_preload's check).
# usage: preload_sqlite.sh LIBBRISK SCRIPT.sql [SQLITE]
set -u
lib=$1
script=$2
. "$(dirname "$0")/preload_common.sh"

sq=${3:-$(command -v sqlite3)}
if [ -z "$sq" ]; then
  bad "sqlite3 is not installed (apt-get install sqlite3); this test needs it"
  finish
fi
prepare "$lib"
same_machine "$lib" "$sq"
unset LD_PRELOAD
export LC_ALL=C
seconds=$(limit 60)

# the C library whose malloc the first run uses (the files keep the name glibc)
libc=glibc
grep -q "/ld-musl-" "$sq" && libc=musl
run() { # run NAME [LD_PRELOAD value]
  if [ -n "${2:-}" ]; then
    timeout -k 5 "$seconds" env LD_PRELOAD="$2" ${CROSSCOMPILING_EMULATOR:-} "$sq" -batch "$tmp/$1.db" <"$script" >"$tmp/out.$1" 2>"$tmp/err.$1"
  else
    timeout -k 5 "$seconds" ${CROSSCOMPILING_EMULATOR:-} "$sq" -batch "$tmp/$1.db" <"$script" >"$tmp/out.$1" 2>"$tmp/err.$1"
  fi
  rc=$?
  name=$1
  [ "$name" = glibc ] && name=$libc
  [ $rc -eq 124 ] && bad "$name run timed out after $seconds s (hang)"
  [ $rc -eq 0 ] && ok "$name run exits 0" || { bad "$name run exit status $rc"; cat "$tmp/err.$1"; }
}
run glibc
run brisk "$lib"

same_output "$tmp"
grep -qx "ok" "$tmp/out.brisk" && ok "integrity_check ok" || bad "no integrity_check ok"
[ "$(wc -l <"$tmp/out.brisk")" -gt 60 ] && ok "script ran to the end" || bad "output too short"
cmp -s "$tmp/glibc.db" "$tmp/brisk.db" && ok "database files identical" || bad "database files differ"

query="select length(group_concat(hex(zeroblob(1000)))) from (select 1 union select 2);"
if [ $libc = musl ]; then
  # proof that brisk was serving SQLite's malloc and realloc: their callers.
  # Debian builds SQLite without frame pointers, so the walk ends at the
  # allocation's caller (the return address brisk's own frame holds): the
  # function may be a stack's only frame.
  env LD_PRELOAD="$lib" BRISK_HEAP_PROFILE="$tmp/heap.pb.gz" BRISK_HEAP_PROFILE_RATE=1 \
    "$sq" -batch :memory: "$query" >/dev/null 2>"$tmp/err.profile"
  for caller in sqlite3MemMalloc sqlite3MemRealloc; do
    if grep -Eq "(^|;)$caller [0-9]+$" "$tmp/heap.alloc.folded" 2>/dev/null; then
      ok "SQLite's $caller calls libbrisk's allocator"
    else
      bad "no allocation by SQLite's $caller reached libbrisk"
      cat "$tmp/err.profile"
      head -5 "$tmp/heap.alloc.folded" 2>/dev/null
    fi
  done
  echo "--- output (head) ---"
  head -30 "$tmp/out.brisk"
  finish
fi
# proof that brisk was serving malloc in the preloaded run
LD_PRELOAD=$lib LD_DEBUG=bindings LD_DEBUG_OUTPUT="$tmp/bind" ${CROSSCOMPILING_EMULATOR:-} "$sq" \
  -batch :memory: "$query" >/dev/null 2>&1
cat "$tmp"/bind* >"$tmp/bindings" 2>/dev/null
for who in libsqlite3.so libc.so.6; do
  for sym in malloc free; do
    if grep -q "binding file [^ ]*$who[^ ]* .* to [^ ]*libbrisk[^ ]* .*symbol \`$sym'" "$tmp/bindings"; then
      ok "$who binds $sym to libbrisk"
    else
      bad "$who does not bind $sym to libbrisk"
      grep "symbol \`$sym'" "$tmp/bindings" | grep "$who" | head -3
    fi
  done
done
echo "--- output (head) ---"
head -30 "$tmp/out.brisk"
finish
