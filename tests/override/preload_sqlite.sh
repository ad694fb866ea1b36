#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs Debian's sqlite3 on a scripted database on glibc's malloc and with
# LD_PRELOAD=libbrisk.so; the outputs must be identical, and the dynamic
# linker must bind sqlite's and libc's malloc/free to libbrisk. SQLITE
# replaces Debian's sqlite3: in a 32-bit or ARM64 build, sqlite_shell.c linked
# against Debian's libsqlite3-0:i386 or :arm64, run through
# $CROSSCOMPILING_EMULATOR (qemu-user) where the build sets one.
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

run() { # run NAME [LD_PRELOAD value]
  if [ -n "${2:-}" ]; then
    timeout -k 5 "$seconds" env LD_PRELOAD="$2" ${CROSSCOMPILING_EMULATOR:-} "$sq" -batch "$tmp/$1.db" <"$script" >"$tmp/out.$1" 2>"$tmp/err.$1"
  else
    timeout -k 5 "$seconds" ${CROSSCOMPILING_EMULATOR:-} "$sq" -batch "$tmp/$1.db" <"$script" >"$tmp/out.$1" 2>"$tmp/err.$1"
  fi
  rc=$?
  [ $rc -eq 124 ] && bad "$1 run timed out after $seconds s (hang)"
  [ $rc -eq 0 ] && ok "$1 run exits 0" || { bad "$1 run exit status $rc"; cat "$tmp/err.$1"; }
}
run glibc
run brisk "$lib"

same_output "$tmp"
grep -qx "ok" "$tmp/out.brisk" && ok "integrity_check ok" || bad "no integrity_check ok"
[ "$(wc -l <"$tmp/out.brisk")" -gt 60 ] && ok "script ran to the end" || bad "output too short"
cmp -s "$tmp/glibc.db" "$tmp/brisk.db" && ok "database files identical" || bad "database files differ"

# proof that brisk was serving malloc in the preloaded run
LD_PRELOAD=$lib LD_DEBUG=bindings LD_DEBUG_OUTPUT="$tmp/bind" ${CROSSCOMPILING_EMULATOR:-} "$sq" \
  -batch :memory: \
  "select length(group_concat(hex(zeroblob(1000)))) from (select 1 union select 2);" >/dev/null 2>&1
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
