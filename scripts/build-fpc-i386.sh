#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds Free Pascal for 32-bit x86 from Debian's fpc-source package with the
# installed fpc: Debian ships the x86-64 compiler (ppcx64) and its Linux
# units only. This builds
#
#   the compiler ppcross386 (Free Pascal's compiler sources, target i386),
#   the i386-linux units  (RTL, rtl-objpas, fcl-base), for the 32-bit Linux build,
#   the i386-win32 units  (RTL, rtl-objpas, fcl-base), for the Win32 build,
#
# into PREFIX (default .cache/fpc-i386), with a configuration file and a
# wrapper per target:
#
#   PREFIX/bin/fpc-i386-linux -O2 MyApp.pas     # a 32-bit Linux program
#   PREFIX/bin/fpc-i386-win32 -O2 MyApp.pas     # MyApp.exe, a Win32 program
#
# ppcross386 assembles and links with its own ELF and PE writers; for Linux it
# links with the host's ld (-m elf_i386) against the 32-bit C library of
# gcc-12-multilib (/usr/lib32, and its libgcc.a). The wrappers run ppcross386 with their
# configuration file only (-n): /etc/fpc.cfg names the x86-64 units. Running
# the script again rebuilds only when the compiler or the sources changed
# (PREFIX/stamp). Nothing is written outside PREFIX.
#
#   scripts/build-fpc-i386.sh [PREFIX]
#
# Needs: fpc (fp-compiler, fp-units-rtl) and fpc-source, of the same version.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-$repo/.cache/fpc-i386}
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)

fail() {
  echo "build-fpc-i386: $*" >&2
  exit 1
}

command -v fpc >/dev/null || fail "fpc not found: apt-get install fp-compiler fp-units-rtl"
version=$(fpc -iV)
source=${FPC_SOURCE:-/usr/share/fpcsrc/$version}
[ -f "$source/compiler/pp.pas" ] && [ -f "$source/rtl/win32/system.pp" ] ||
  fail "Free Pascal $version sources not found in $source: apt-get install fpc-source" \
    "(or set FPC_SOURCE to a source tree of version $version)"
host_units=/usr/lib/x86_64-linux-gnu/fpc/$version/units/x86_64-linux
[ -d "$host_units/rtl" ] || fail "the x86-64 Linux units of fpc $version are not in $host_units"
messages=/usr/lib/x86_64-linux-gnu/fpc/$version/msg/errore.msg
[ -f "$messages" ] || fail "fpc's message file $messages is missing"

stamp="fpc $version $(command -v fpc) source $source $(cat "$0" | cksum)"
if [ -f "$prefix/stamp" ] && [ "$(cat "$prefix/stamp")" = "$stamp" ] &&
  [ -x "$prefix/bin/fpc-i386-linux" ] && [ -x "$prefix/bin/fpc-i386-win32" ]; then
  echo "build-fpc-i386: up to date in $prefix"
  exit 0
fi

# Build into a fresh folder and move it into place at the end, so that an
# interrupted build never leaves a half-built set behind.
work=$(mktemp -d "$prefix/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
log=$work/build.log

run() { # command...: its output to the log; any error stops with the log's end
  if ! "$@" >>"$log" 2>&1; then
    tail -n 20 "$log" >&2
    fail "failed: $* (full log: $log)"
  fi
}

# --- the compiler ---------------------------------------------------------------
# msg2inc turns the message file into the include files the compiler's
# sources expect (Debian's fpc-source leaves them out).
echo "build-fpc-i386: ppcross386"
host=(fpc -n -Fu"$host_units/rtl" -Fu"$host_units/rtl-objpas")
mkdir -p "$work/compiler" "$work/bin"
run "${host[@]}" -FU"$work/compiler" -FE"$work/compiler" "$source/compiler/utils/msg2inc.pp"
(cd "$work/compiler" && run ./msg2inc "$messages" msg msg)
compiler=$source/compiler
run "${host[@]}" -O2 -di386 -dGDB -Fi"$work/compiler" -Fu"$compiler" -Fi"$compiler" \
  -Fu"$compiler/i386" -Fu"$compiler/x86" -Fu"$compiler/systems" \
  -Fi"$compiler/i386" -Fi"$compiler/x86" -Fi"$compiler/systems" \
  -FU"$work/compiler" -o"$work/bin/ppcross386" "$compiler/pp.pas"

# --- the units of one target ---------------------------------------------------------
# units TARGET OS_FOLDER: the RTL (the rules of rtl/OS/Makefile.fpc, through
# its buildrtl.pp) and the packages' units BriskMM's programs use.
units() {
  local target=$1 os=$2 rtl=$source/rtl out
  local units_dir=$work/units/i386-$target
  echo "build-fpc-i386: i386-$target units"
  local ppc=("$work/bin/ppcross386" -n -T"$target" -O2 -Ur -vw)
  local paths=(-Fi"$rtl/inc" -Fi"$rtl/i386" -Fi"$rtl/x86" -Fu"$rtl/inc" -Fu"$rtl/i386" -Fu"$rtl/x86")
  if [ "$os" = linux ]; then
    paths+=(-Fi"$rtl/unix" -Fi"$rtl/linux" -Fi"$rtl/linux/i386" -Fu"$rtl/unix" -Fu"$rtl/linux"
      -Fu"$rtl/common")
  else
    paths+=(-Fi"$rtl/win" -Fi"$rtl/win32" -Fu"$rtl/win" -Fu"$rtl/win32" -Fu"$rtl/common"
      -Fi"$rtl/win/wininc" -Fu"$rtl/win/wininc")
  fi
  out=$units_dir/rtl
  mkdir -p "$out"
  compile() { run "${ppc[@]}" -FU"$out" -Fu"$out" "${paths[@]}" "$@"; }
  compile -Us -Sg "$rtl/$os/system.pp"
  compile "$rtl/inc/uuchar.pp"
  compile -Fi"$rtl/objpas" "$rtl/objpas/objpas.pp"
  compile -Fi"$rtl/charmaps" "$rtl/charmaps/cpall.pas" # before buildrtl, which uses it on Linux
  local objpas=(-Fi"$rtl/objpas/sysutils" -Fi"$rtl/objpas/classes" -Fi"$rtl/objpas" -Fu"$rtl/objpas")
  if [ "$os" = linux ]; then
    # rtl/linux/Makefile.fpc's units for i386 (its buildrtl.pp names a unit,
    # sortbase, that this source tree lacks)
    local name dir file
    for name in fpintres si_prc si_c21g si_c21 si_c si_dll si_uc unixtype ctypes baseunix \
      strings extpas syscall unixutil heaptrc termio unix linux initc cmem x86 ports cpu mmx \
      linuxvcs sysutils typinfo math charset character unixcp getopts errors dl dynlibs types \
      sysconst fpwidestring cthreads classes fgl rtlconsts dos cwstring fpcylix; do
      file=
      for dir in linux unix i386 x86 inc objpas common; do
        for candidate in "$rtl/$dir/$name.pp" "$rtl/$dir/$name.pas"; do
          [ -z "$file" ] && [ -f "$candidate" ] && file=$candidate
        done
      done
      [ -n "$file" ] || fail "rtl: no source for unit $name"
      compile "${objpas[@]}" "$file"
    done
  else
    compile "${objpas[@]}" "$rtl/$os/buildrtl.pp"
    compile "$rtl/inc/heaptrc.pp" # win64's buildrtl.pp has it, win32's not
  fi
  local unit
  for unit in inc/macpas.pp inc/iso7185.pp inc/lineinfo.pp inc/lnfodwrf.pp; do
    compile -Fi"$rtl/objpas" "$rtl/$unit"
  done
  # packages DIR UNIT...: one package's units from its src folder (and the
  # folder of this OS), against the units built so far
  package() {
    local name=$1 src=$source/packages/$1/src dir file candidate
    shift
    local os_dir=$src/unix
    [ "$os" = linux ] || os_dir=$src/win
    local found=() dirs=("$os_dir" "$src/i386" "$src/inc" "$src")
    [ "$os" = linux ] && dirs+=("$src/common") # the units other targets take from win/
    for dir in "${dirs[@]}"; do
      [ -d "$dir" ] && found+=(-Fu"$dir" -Fi"$dir")
    done
    [ -d "$src/dummy" ] && found+=(-Fi"$src/dummy")
    for unit in "$@"; do
      file=
      for dir in "${dirs[@]}"; do
        for candidate in "$dir/$unit.pp" "$dir/$unit.pas"; do
          [ -z "$file" ] && [ -f "$candidate" ] && file=$candidate
        done
      done
      [ -n "$file" ] || fail "$name: no source for unit $unit"
      mkdir -p "$units_dir/$name"
      run "${ppc[@]}" -FU"$units_dir/$name" "${found[@]}" $(printf -- '-Fu%s ' "$units_dir"/*) "$file"
    done
  }
  local candidate
  package rtl-objpas system.uitypes strutils varutils variants dateutils
  package fcl-base contnrs streamex syncobjs inifiles custapp
}
units linux linux
units win32 win32

# --- configuration files and wrappers ---------------------------------------------------
for target in linux win32; do
  {
    echo "# Free Pascal $version for i386-$target, written by scripts/build-fpc-i386.sh."
    echo "-T$target"
    echo "-Pi386"
    echo "-Fu$prefix/units/i386-$target/*"
    if [ "$target" = linux ]; then
      # the 32-bit C library (gcc-12-multilib), the host's ld for 32-bit ELF
      echo "-Fl/usr/lib32"
      echo "-Fl$(dirname "$(gcc -m32 -print-libgcc-file-name)")"
      echo "-XP"
      echo "-k-m"
      echo "-kelf_i386"
    fi
    echo "# the language switches Debian's /etc/fpc.cfg sets, so that code compiles the same"
    echo "-Sgic"
  } >"$work/fpc-i386-$target.cfg"
  cat >"$work/bin/fpc-i386-$target" <<EOF
#!/bin/sh
# Free Pascal for i386-$target with the units of $prefix (scripts/build-fpc-i386.sh)
exec "$prefix/bin/ppcross386" -n @"$prefix/fpc-i386-$target.cfg" "\$@"
EOF
  chmod +x "$work/bin/fpc-i386-$target"
done

rm -rf "$prefix/units" "$prefix/bin" "$prefix"/fpc-i386-*.cfg
mkdir -p "$prefix/units"
mv "$work"/units/* "$prefix/units/"
mv "$work/bin" "$work"/fpc-i386-*.cfg "$prefix/"
echo "$stamp" >"$prefix/stamp"
echo "build-fpc-i386: Free Pascal $version for i386-linux and i386-win32 in $prefix"
