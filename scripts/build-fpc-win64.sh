#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the Free Pascal units for Win64 (x86_64-win64) from Debian's
# fpc-source package with the installed fpc, so that this Linux machine can
# cross-compile Pascal programs to Windows: Debian ships Free Pascal's Linux
# units only. ppcx64 targets win64 with its own assembler and linker, so no
# other tool is needed.
#
#   scripts/build-fpc-win64.sh [PREFIX]      (default: .cache/fpc-win64)
#
# Builds the RTL (System, SysUtils, Classes, Windows, cmem, ...), rtl-objpas
# (StrUtils, DateUtils, Variants, ...) and fcl-base (Contnrs, StreamEx,
# SyncObjs, IniFiles, CustApp, ...) into PREFIX/units/x86_64-win64, and
# writes PREFIX/fpc-win64.cfg and the wrapper PREFIX/bin/fpc-win64:
#
#   PREFIX/bin/fpc-win64 -O2 MyApp.pas          # MyApp.exe, a Win64 program
#
# The wrapper runs fpc with that configuration file only (-n), so the
# system's /etc/fpc.cfg (Linux unit paths) does not apply. Nothing is
# written outside PREFIX. Running the script again rebuilds only when the
# compiler or the sources changed (PREFIX/stamp).
#
# Needs: fpc (packages fp-compiler, fp-units-rtl) and fpc-source, of the
# same version.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-$repo/.cache/fpc-win64}
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)

fail() {
  echo "build-fpc-win64: $*" >&2
  exit 1
}

command -v fpc >/dev/null || fail "fpc not found: apt-get install fp-compiler fp-units-rtl"
version=$(fpc -iV)
source=${FPC_SOURCE:-/usr/share/fpcsrc/$version}
[ -f "$source/rtl/win64/system.pp" ] ||
  fail "Free Pascal $version sources not found in $source: apt-get install fpc-source" \
    "(or set FPC_SOURCE to a source tree of version $version)"

units=$prefix/units/x86_64-win64
stamp="fpc $version $(command -v fpc) $(fpc -Px86_64 -iSO -iTP -iW) source $source"
if [ -f "$prefix/stamp" ] && [ "$(cat "$prefix/stamp")" = "$stamp" ] &&
  [ -f "$units/rtl/system.ppu" ] && [ -x "$prefix/bin/fpc-win64" ]; then
  echo "build-fpc-win64: up to date in $prefix"
  exit 0
fi

# Build into a fresh folder and move it into place at the end, so that an
# interrupted build never leaves a half-built set of units behind.
work=$(mktemp -d "$prefix/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
log=$work/build.log

# -n: ignore /etc/fpc.cfg. -Ur: release units, -O2 like Debian's own build.
ppc=(fpc -n -Twin64 -Px86_64 -O2 -Ur -vw)

# compile OUTDIR FILE [OPTIONS...]: units land in OUTDIR; any error stops
# the script with the compiler's last lines.
compile() {
  local out=$1 file=$2
  shift 2
  mkdir -p "$out"
  if ! "${ppc[@]}" -FU"$out" -Fu"$out" "$@" "$file" >>"$log" 2>&1; then
    tail -n 20 "$log" >&2
    fail "compiling $file failed (full log: $log)"
  fi
}

# --- rtl: the rules of rtl/win64/Makefile.fpc ----------------------------------
echo "build-fpc-win64: rtl"
rtl=$source/rtl
out=$work/units/rtl
rtl_paths=(-Fi"$rtl/inc" -Fi"$rtl/x86_64" -Fi"$rtl/win" -Fi"$rtl/win64"
  -Fu"$rtl/inc" -Fu"$rtl/x86_64" -Fu"$rtl/win")
compile "$out" "$rtl/win64/system.pp" "${rtl_paths[@]}" -Us -Sg
compile "$out" "$rtl/inc/uuchar.pp" "${rtl_paths[@]}"
compile "$out" "$rtl/objpas/objpas.pp" "${rtl_paths[@]}" -Fi"$rtl/objpas"
compile "$out" "$rtl/win64/buildrtl.pp" "${rtl_paths[@]}" \
  -Fi"$rtl/objpas/sysutils" -Fi"$rtl/objpas/classes" -Fi"$rtl/objpas" -Fu"$rtl/objpas" \
  -Fi"$rtl/win/wininc" -Fu"$rtl/win/wininc"
for unit in "$rtl/inc/macpas.pp" "$rtl/inc/iso7185.pp" "$rtl/inc/lineinfo.pp" \
  "$rtl/inc/lnfodwrf.pp"; do
  compile "$out" "$unit" "${rtl_paths[@]}" -Fi"$rtl/objpas"
done
compile "$out" "$rtl/charmaps/cpall.pas" "${rtl_paths[@]}" -Fi"$rtl/charmaps"

# --- packages: the units their fpmake.pp lists for win64 ------------------------
# package DIR UNIT...: compiles the units of one package from its src folder
# (and src/win, src/x86_64 where they exist) against the units built so far.
package() {
  local name=$1
  shift
  local src=$source/packages/$name/src paths=() dir
  echo "build-fpc-win64: $name"
  for dir in "$src/win" "$src/x86_64" "$src/inc" "$src"; do
    [ -d "$dir" ] && paths+=(-Fu"$dir" -Fi"$dir")
  done
  # fcl-base includes placeholders from src/dummy for what a target lacks
  [ -d "$src/dummy" ] && paths+=(-Fi"$src/dummy")
  local unit file candidate
  for unit in "$@"; do
    # the first of the package's folders for win64 that has the unit (never
    # src/unix or src/common, the sources for other targets)
    file=
    for dir in "$src/win" "$src/x86_64" "$src/inc" "$src"; do
      for candidate in "$dir/$unit.pp" "$dir/$unit.pas"; do
        [ -z "$file" ] && [ -f "$candidate" ] && file=$candidate
      done
    done
    [ -n "$file" ] || fail "$name: no source for unit $unit"
    compile "$work/units/$name" "$file" "${paths[@]}" $(printf -- '-Fu%s ' "$work"/units/*)
  done
}
package rtl-objpas system.uitypes strutils widestrutils varutils variants fmtbcd \
  convutils dateutils stdconvs nullable rtti
package fcl-base ascii85 avl_tree base64 blowfish bufstream cachecls contnrs \
  singleinstance custapp fptimer gettext idea inifiles inicol iostream nullstream \
  maskutils pooledmm rttiutils streamcoll streamex streamio syncobjs uriparser \
  wformat whtml wtex csvreadwrite csvdocument fpexprpars fptemplate

# --- configuration and wrapper ----------------------------------------------
cat >"$work/fpc-win64.cfg" <<EOF
# Free Pascal $version cross-compiling to Win64, written by scripts/build-fpc-win64.sh.
# Use: fpc -n @$prefix/fpc-win64.cfg ...   (or $prefix/bin/fpc-win64 ...)
-Twin64
-Px86_64
-Fu$units/*
# the language switches Debian's /etc/fpc.cfg sets, so that code compiles the same
-Sgic
EOF
mkdir -p "$work/bin"
cat >"$work/bin/fpc-win64" <<EOF
#!/bin/sh
# fpc for Win64 with the units of $prefix (scripts/build-fpc-win64.sh)
exec fpc -n @"$prefix/fpc-win64.cfg" "\$@"
EOF
chmod +x "$work/bin/fpc-win64"

rm -rf "$prefix/units" "$prefix/bin" "$prefix/fpc-win64.cfg"
mkdir -p "$units"
mv "$work"/units/* "$units/"
mv "$work/bin" "$work/fpc-win64.cfg" "$prefix/"
echo "$stamp" >"$prefix/stamp"
echo "build-fpc-win64: Free Pascal $version win64 units in $units"
echo "build-fpc-win64: compile with $prefix/bin/fpc-win64"
