#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds the Lazarus projects of pascal/tests/lazarus with lazbuild, as a
# Lazarus user does: the brisk package (pascal/brisk.lpk) registered, then
# compiled, with libbrisk.a where a release puts it (lib/<cpu>-<os>/ beside
# the package), then each project that requires it. Everything is copied to
# WORK_DIR first, so that nothing is written into the source tree.
#   console: the program is run; it must report brisk as its memory manager
#            without naming BriskMM in its uses clause, and need no libbrisk.so
#   gui:     an LCL program (Interfaces, Forms); built, not run (no display);
#            brisk's entry points must be linked into it
# usage: lazarus.sh console|gui WORK_DIR PASCAL_DIR TESTS_DIR LIBBRISK_A [FPC]
# FPC: another Free Pascal compiler, for another target (a 32-bit build:
# scripts/build-fpc-i386.sh's fpc-i386-linux); lazbuild then builds for its
# CPU and OS, with Lazarus's FCL package taken as it is (-d: built, it would
# be written into /usr/lib/lazarus). The LCL program for i386-linux is built
# with the LCL that scripts/build-lcl-i386.sh compiles for it (Debian ships
# the LCL for its own architecture only), through that script's compiler.
# Exit status 77 (skipped) without lazbuild or the LCL units.
set -eu
project=$1 work=$2 pascal=$3 tests=$4 library=$5 fpc=${6:-fpc}

command -v lazbuild >/dev/null 2>&1 || {
  echo "SKIPPED: lazbuild not found (Debian: lcl-utils; scripts/install-deps.sh test installs it)"
  exit 77
}
target=$("$fpc" -iTP)-$("$fpc" -iTO)
if [ "$project" = gui ] && [ "$target" = i386-linux ] && [ "$fpc" != fpc ]; then
  # the i386 LCL: built once (then up to date at once), or skipped saying why
  status=0
  lcl=$("$pascal/../scripts/build-lcl-i386.sh" 2>&1) || status=$?
  if [ "$status" = 77 ]; then
    echo "SKIPPED: no LCL for i386-linux: $lcl"
    exit 77
  elif [ "$status" != 0 ]; then
    echo "$lcl"
    echo "FAIL gui: scripts/build-lcl-i386.sh failed"
    exit 1
  fi
  echo "$lcl"
  fpc=$(cd "$pascal/.." && pwd)/.cache/lcl-i386/bin/fpc-i386-linux-lcl
elif [ "$project" = gui ] && ! ls /usr/lib/lazarus/*/lcl/units/"$target"/*/interfaces.ppu >/dev/null 2>&1; then
  if [ "$fpc" = fpc ]; then
    echo "SKIPPED: no compiled LCL (Debian: lcl-units; scripts/install-deps.sh test installs it)"
  else
    echo "SKIPPED: no compiled LCL for $target: Debian's lcl-units holds the LCL for its own" \
      "architecture only, and the LCL for another is built with lazbuild into /usr/lib/lazarus"
  fi
  exit 77
fi

rm -rf "$work"
mkdir -p "$work/pkg/lib/$target"
cp "$pascal/BriskMM.pas" "$pascal/brisk.lpk" "$pascal/brisk.pas" "$work/pkg/"
cp "$library" "$work/pkg/lib/$target/"
cp -R "$tests/lazarus/$project" "$work/$project"

# A configuration of the test's own, not the user's ~/.lazarus.
lazbuild="lazbuild --pcp=$work/config"
package_flags=
if [ "$fpc" != fpc ]; then
  lazbuild="$lazbuild --compiler=$fpc --cpu=$("$fpc" -iTP) --os=$("$fpc" -iTO)"
  package_flags=-d
fi
step() { # what, command...: runs it, shows its output if it fails
  what=$1
  shift
  if ! "$@" >"$work/step.log" 2>&1; then
    tail -n 30 "$work/step.log"
    echo "FAIL $project: $what"
    exit 1
  fi
}
step "lazbuild --add-package-link brisk.lpk" $lazbuild --add-package-link "$work/pkg/brisk.lpk"
step "lazbuild brisk.lpk" $lazbuild $package_flags "$work/pkg/brisk.lpk"
# -d (--skip-dependencies): use the installed LCL and FCL as they are. Without
# it lazbuild decides that Debian's prebuilt LCL needs a rebuild (one of its
# packages ships no state file) and writes into /usr/lib/lazarus.
step "lazbuild $project.lpi" $lazbuild -d "$work/$project/$project.lpi"
program=$work/$project/$project
[ -x "$program" ] || { echo "FAIL $project: lazbuild made no $program"; exit 1; }

failed=0
if nm "$program" | grep -q " T brisk_binding_getmem$"; then
  echo "ok   $project: libbrisk.a linked into the program"
else
  echo "FAIL $project: brisk_binding_getmem is not in the program"
  failed=1
fi
if ldd "$program" | grep -q libbrisk; then
  echo "FAIL $project: the program needs a brisk shared library:"
  ldd "$program" | grep libbrisk
  failed=1
fi
case $target in
  i386-*) machine="Intel 80386" ;;
  x86_64-*) machine="Advanced Micro Devices X86-64" ;;
  *) machine= ;;
esac
if [ -n "$machine" ]; then
  if readelf -h "$program" | grep -q "Machine: *$machine\$"; then
    echo "ok   $project: an $target program ($machine)"
  else
    echo "FAIL $project: not an $target program: $(readelf -h "$program" | grep Machine:)"
    failed=1
  fi
fi
if [ "$project" = gui ]; then # the LCL's GTK 2 widgetset, Debian's and build-lcl-i386.sh's
  if readelf -d "$program" | grep -q "NEEDED.*libgtk-x11-2.0.so"; then
    echo "ok   gui: the program links GTK 2 (libgtk-x11-2.0.so), the LCL's widgetset"
  else
    echo "FAIL gui: the program does not link GTK 2: $(readelf -d "$program" | grep NEEDED)"
    failed=1
  fi
fi
if [ "$project" = console ]; then
  output=$("$program" 2>&1) || { echo "FAIL console: exit status $?: $output"; exit 1; }
  expected="brisk installed: TRUE, owns a new object: TRUE"
  if [ "$output" = "$expected" ]; then
    echo "ok   console: $output"
  else
    echo "FAIL console: printed '$output', expected '$expected'"
    failed=1
  fi
fi
exit $failed
