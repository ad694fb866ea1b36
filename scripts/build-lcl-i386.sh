#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds Lazarus's LCL (GTK 2 widgetset) for i386-linux, for the 32-bit build's
# Lazarus LCL project (pascal/tests/lazarus.sh gui): Debian ships the LCL
# compiled for its own architecture only. This compiles, with
# scripts/build-fpc-i386.sh's compiler,
#
#   the LCL, LazUtils and the units of Free Pascal's packages they use, from
#   Debian's sources (lazarus-src: /usr/lib/lazarus/VERSION; fpc-source),
#
# into PREFIX (default .cache/lcl-i386), with a compiler wrapper that finds them:
#
#   PREFIX/bin/fpc-i386-linux-lcl     # as fpc-i386-linux, with the LCL's units
#   lazbuild --compiler=PREFIX/bin/fpc-i386-linux-lcl --cpu=i386 --os=linux -d MyApp.lpi
#
# A GTK 2 program links against GTK 2's i386 libraries (libgtk-x11-2.0.so.0 and
# the ten others the LCL names), taken from GTK_I386 (default: those
# scripts/install-deps.sh linux32 unpacks into .cache/gtk2-i386, else the
# system's /usr/lib/i386-linux-gnu). The libraries those need in turn are not
# there, so the link does not check them (--allow-shlib-undefined): what the
# program itself calls must still be in GTK's libraries. Nothing is written
# outside PREFIX; running it again rebuilds only when an input changed
# (PREFIX/stamp).
#
#   scripts/build-lcl-i386.sh [PREFIX]
#
# Exit status 77, with the reason, when an input is missing.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-$repo/.cache/lcl-i386}
fpc_prefix=$repo/.cache/fpc-i386
missing() {
  echo "build-lcl-i386: $*" >&2
  exit 77
}
fail() {
  echo "build-lcl-i386: $*" >&2
  exit 1
}

[ -x "$fpc_prefix/bin/ppcross386" ] && [ -f "$fpc_prefix/fpc-i386-linux.cfg" ] ||
  missing "no i386 compiler in $fpc_prefix (scripts/build-fpc-i386.sh builds it)"
command -v fpc >/dev/null || missing "fpc not found: apt-get install fp-compiler"
version=$(fpc -iV)
fpc_source=${FPC_SOURCE:-/usr/share/fpcsrc/$version}/packages
[ -d "$fpc_source/fcl-base/src" ] || missing "Free Pascal $version's sources are not in" \
  "$fpc_source (apt-get install fpc-source)"
lazarus=
for dir in /usr/lib/lazarus/[0-9]*/; do
  [ -z "$lazarus" ] && [ -f "$dir/lcl/interfaces/gtk2/interfaces.pas" ] && lazarus=${dir%/}
done
[ -n "$lazarus" ] || missing "no LCL sources in /usr/lib/lazarus/*/lcl (apt-get install lazarus-src)"
# The libraries the LCL's GTK 2 units link (their {$linklib}s).
libraries="X11 atk-1.0 cairo gdk-x11-2.0 gdk_pixbuf-2.0 glib-2.0 gmodule-2.0 gobject-2.0
  gthread-2.0 gtk-x11-2.0 pango-1.0"
gtk=${GTK_I386:-}
if [ -z "$gtk" ]; then
  for dir in "$repo/.cache/gtk2-i386/root/usr/lib/i386-linux-gnu" /usr/lib/i386-linux-gnu; do
    [ -z "$gtk" ] && [ -e "$dir/libgtk-x11-2.0.so.0" ] && gtk=$dir
  done
fi
[ -n "$gtk" ] || missing "GTK 2's i386 libraries are not here (scripts/install-deps.sh linux32" \
  "unpacks them into .cache/gtk2-i386)"
for name in $libraries; do
  ls "$gtk/lib$name.so."[0-9]* >/dev/null 2>&1 || missing "lib$name.so.* is not in $gtk"
done

stamp="lcl $lazarus fpc $(cat "$fpc_prefix/stamp" 2>/dev/null) source $fpc_source gtk $gtk \
$(cksum <"$0")"
if [ -f "$prefix/stamp" ] && [ "$(cat "$prefix/stamp")" = "$stamp" ] &&
  [ -x "$prefix/bin/fpc-i386-linux-lcl" ]; then
  echo "build-lcl-i386: up to date in $prefix"
  exit 0
fi

mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
work=$(mktemp -d "$prefix/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
units=$work/units/i386-linux/gtk2
mkdir -p "$units" "$work/lib" "$work/bin"

# The link names (libgtk-x11-2.0.so) of the runtime libraries (.so.0).
for name in $libraries; do
  ln -s "$(ls "$gtk/lib$name.so."[0-9]* | head -n 1)" "$work/lib/lib$name.so"
done

# Where the compiler finds the sources: the LCL's folders first (its
# include files share names with some of Free Pascal's packages'), then
# every Linux package of fpc-source (the others define units of the same
# names: Free Vision's Menus, the Palm OS units' Rect, ...).
paths=()
for dir in components/lazutils components/freetype lcl lcl/widgetset lcl/interfaces \
  lcl/interfaces/gtk2 lcl/include lcl/nonwin32 lcl/forms packager/registration; do
  paths+=(-Fu"$lazarus/$dir" -Fi"$lazarus/$dir")
done
for src in "$fpc_source"/*/src; do
  case $src in
    */amunits/* | */arosunits/* | */fv/* | */gbaunits/* | */libgbafpc/* | */libndsfpc/* | \
      */libogcfpc/* | */morphunits/* | */ndsunits/* | */os2units/* | */os4units/* | \
      */palmunits/* | */tosunits/* | */univint/* | */cocoaint/* | */iosxlocale/* | \
      */wiiunits/* | */winunits* | */mui/* | */ami-extra/* | */zorba/* | */sinclairql* | \
      */webassembly/* | */wasmtime/*) continue ;;
  esac
  for dir in "$src" "$src/unix" "$src/linux" "$src/inc" "$src/i386"; do
    [ -d "$dir" ] && paths+=(-Fu"$dir" -Fi"$dir")
  done
done
while IFS= read -r dir; do
  paths+=(-Fu"$dir" -Fi"$dir")
done < <(find "$fpc_source/gtk2/src" -type d) # GTK 2's bindings lie in subfolders
paths+=(-Fu"$fpc_source/fcl-db/src/base" -Fi"$fpc_source/fcl-db/src/base")

# Every LCL unit (AllLCLUnits) and the GTK 2 widgetset (Interfaces), as
# lazbuild would build the LCL packages (-dLCL -dLCLgtk2), linked once so
# that a missing library shows here rather than in a project.
cat >"$work/lclunits.lpr" <<'EOF'
program lclunits;
uses Interfaces, AllLCLUnits;
begin
end.
EOF
echo "build-lcl-i386: the LCL (GTK 2) for i386-linux, from $lazarus"
if ! "$fpc_prefix/bin/fpc-i386-linux" -MObjFPC -Scghi -O1 -dLCL -dLCLgtk2 -FU"$units" \
  -FE"$work" "${paths[@]}" -Fl"$work/lib" -k--allow-shlib-undefined "$work/lclunits.lpr" \
  >"$work/build.log" 2>&1; then
  grep -E "Error|Fatal" "$work/build.log" | head -n 20 >&2
  fail "compiling the LCL failed"
fi
rm -f "$units"/lclunits.*

cat >"$work/fpc-i386-linux-lcl.cfg" <<EOF
# The LCL (GTK 2) for i386-linux, written by scripts/build-lcl-i386.sh: its
# units, and GTK 2's i386 libraries to link (theirs unchecked, see there)
-Fu$prefix/units/i386-linux/gtk2
-Fl$prefix/lib
-k--allow-shlib-undefined
EOF
cat >"$work/bin/fpc-i386-linux-lcl" <<EOF
#!/bin/sh
# Free Pascal for i386-linux with the LCL of $prefix (scripts/build-lcl-i386.sh)
exec "$fpc_prefix/bin/ppcross386" -n @"$fpc_prefix/fpc-i386-linux.cfg" \\
  @"$prefix/fpc-i386-linux-lcl.cfg" "\$@"
EOF
chmod +x "$work/bin/fpc-i386-linux-lcl"

rm -rf "$prefix/units" "$prefix/lib" "$prefix/bin" "$prefix/fpc-i386-linux-lcl.cfg"
mv "$work/units" "$work/lib" "$work/bin" "$work/fpc-i386-linux-lcl.cfg" "$prefix/"
echo "$stamp" >"$prefix/stamp"
echo "build-lcl-i386: $(ls "$prefix/units/i386-linux/gtk2"/*.ppu | wc -l) units in $prefix"
