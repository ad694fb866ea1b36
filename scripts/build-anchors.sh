#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds other allocators from their source checkouts as libraries that can
# be preloaded, so `brisk bench` can measure brisk against the newest designs.
#
#   scripts/build-anchors.sh [--out DIR] SRC...
#
# Each SRC is a checkout (a git clone, worktree or unpacked release) of one of
#   mimalloc   https://github.com/microsoft/mimalloc   (v3 -> mimalloc3.so; v2 -> mimalloc2.so)
#   snmalloc   https://github.com/microsoft/snmalloc   (-> snmalloc.so, its libsnmallocshim.so)
#   rpmalloc   https://github.com/mjansson/rpmalloc    (-> rpmalloc.so)
#   FastMM4    https://github.com/pleriche/FastMM4     (-> fastmm4/, Pascal sources)
#   mORMot 2   https://github.com/synopse/mORMot2      (-> fpcx64mm/, its fpcx64mm unit)
# recognised by its files, whatever the folder is called. Release builds, with
# each project's own defaults for overriding malloc. For each library,
# DIR/NAME.version records the version (git describe, or the version in the
# sources) and the source folder. DIR defaults to .cache/anchors/, where
# `./brisk bench` picks every NAME.so up by itself. The `--alloc` arguments
# for other tools are printed at the end.
#
# FastMM4, the Delphi and Free Pascal memory manager, is a unit that each
# program compiles in, not a library: its sources and FastMM4Options.inc,
# unchanged (FastMM4's default options), are copied to DIR/fastmm4/ once a
# threaded program built with them has run. The Pascal bench build compiles
# the fastmm4 variants of the Pascal workloads from there. The same for
# mORMot 2's fpcx64mm, Free Pascal's x86-64 memory manager
# (src/core/mormot.core.fpcx64mm.pas, which needs no other mORMot file),
# copied to DIR/fpcx64mm/ once a threaded program built with it in each of
# its three settings (default, FPCMM_SERVER, FPCMM_BOOSTER) has run.
#
# Needs cmake, a C compiler, for snmalloc a C++17 compiler and for FastMM4
# fpc (scripts/install-deps.sh installs them). Nothing is downloaded.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/.cache/anchors"
usage() { sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; }

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
  elif [ -f "$1/FastMM4.pas" ] && [ -f "$1/FastMM4Options.inc" ]; then echo fastmm4
  elif [ -f "$1/src/core/mormot.core.fpcx64mm.pas" ]; then echo fpcx64mm
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
    fpcx64mm)  # mORMot's release and commit number: '2.4.16513'
      echo "mORMot $(tr -d "'" <"$src/src/mormot.commit.inc") (from mormot.commit.inc)" ;;
    fastmm4)  # its first line: "Fast Memory Manager 4.993"
      echo "$(sed -n '1,5s/^Fast Memory Manager \([0-9.]*\).*/\1/p' "$src/FastMM4.pas") (from FastMM4.pas)" ;;
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

# FastMM4 is compiled into each program, so what the bench needs is its
# sources: FastMM4.pas, the units it uses (FastMM4Messages; the others only
# with options that are off by default) and FastMM4Options.inc as shipped.
# A program with threads, built with them as the workloads are built (first
# in uses, before cthreads) and run, shows that this checkout works with the
# installed fpc before the bench relies on it.
build_fastmm4() {  # src build_dir -> folder of the sources
  local units="$2/fastmm4"
  if ! command -v fpc >/dev/null; then
    echo "fpc not found (scripts/install-deps.sh test installs it)" >"$2.log"
    return 1
  fi
  rm -rf "${2:?}"
  mkdir -p "$units" "$2/ppu"
  cp "$1"/FastMM4*.pas "$1/FastMM4Options.inc" "$units/"
  cat >"$2/check_fastmm4.pas" <<'PASCAL'
program CheckFastMM4;
{$mode objfpc}{$H+}
uses FastMM4, cthreads, Classes, SysUtils;
type
  TWorker = class(TThread)
  public
    Total: Int64;
    procedure Execute; override;
  end;
procedure TWorker.Execute;
var
  I: Integer;
  Kept: TStringList;
  Big: Pointer;
begin
  Kept := TStringList.Create;
  try
    for I := 1 to 20000 do
    begin
      Kept.Add(StringOfChar('x', 1 + I mod 3000));  { small and medium blocks }
      if Kept.Count = 500 then
        Kept.Clear;
      Inc(Total, 1 + I mod 3000);
    end;
  finally
    Kept.Free;
  end;
  for I := 1 to 50 do
  begin
    Big := GetMem(300000 + I * 4096);  { large blocks }
    FreeMem(Big);
  end;
end;
var
  Workers: array[0..3] of TWorker;
  Manager: TMemoryManager;
  I: Integer;
  Total: Int64;
begin
  for I := 0 to High(Workers) do
    Workers[I] := TWorker.Create(False);
  Total := 0;
  for I := 0 to High(Workers) do
  begin
    Workers[I].WaitFor;
    Inc(Total, Workers[I].Total);
    Workers[I].Free;
  end;
  GetMemoryManager(Manager);
  if Pointer(Manager.GetMem) <> Pointer(@FastGetMem) then
    WriteLn('FastMM4 is not the memory manager')
  else if Total <> 4 * 29012000 then
    WriteLn('wrong total ', Total)
  else
    WriteLn('ok');
end.
PASCAL
  fpc -B -O2 -l- -Fu"$units" -FU"$2/ppu" -o"$2/check_fastmm4" "$2/check_fastmm4.pas" >"$2.log" 2>&1
  local said
  said="$("$2/check_fastmm4" 2>&1)" || true
  echo "check_fastmm4: $said" >>"$2.log"
  [ "$said" = ok ] || return 1
  echo "$units"
}

# fpcx64mm: the one unit, as it is in the checkout. The check program is
# built once per setting, each with its own compiled units.
build_fpcx64mm() {  # src build_dir -> folder of the sources
  local units="$2/fpcx64mm" said setting
  if ! command -v fpc >/dev/null; then
    echo "fpc not found (scripts/install-deps.sh test installs it)" >"$2.log"
    return 1
  fi
  rm -rf "${2:?}"
  mkdir -p "$units"
  cp "$1/src/core/mormot.core.fpcx64mm.pas" "$units/"
  cat >"$2/check_fpcx64mm.pas" <<'PASCAL'
program CheckFpcx64mm;
{$mode objfpc}{$H+}
uses mormot.core.fpcx64mm, cthreads, Classes, SysUtils;
type
  TWorker = class(TThread)
  public
    Total: Int64;
    procedure Execute; override;
  end;
procedure TWorker.Execute;
var
  I: Integer;
  Kept: TStringList;
begin
  Kept := TStringList.Create;
  for I := 1 to 20000 do
  begin
    Kept.Add(StringOfChar('x', 1 + I mod 3000));
    if Kept.Count = 500 then
      Kept.Clear;
    Inc(Total, 1 + I mod 3000);
  end;
  Kept.Free;
  FreeMem(GetMem(1 shl 20));
end;
var
  Workers: array[0..3] of TWorker;
  I: Integer;
  Total: Int64 = 0;
begin
  for I := 0 to High(Workers) do
    Workers[I] := TWorker.Create(False);
  for I := 0 to High(Workers) do
  begin
    Workers[I].WaitFor;
    Inc(Total, Workers[I].Total);
    Workers[I].Free;
  end;
  if not IsMemoryManagerSet then
    WriteLn('fpcx64mm is not the memory manager')
  else if Total <> 4 * 29012000 then
    WriteLn('wrong total ', Total)
  else
    WriteLn('ok');
end.
PASCAL
  : >"$2.log"
  for setting in "" FPCMM_SERVER FPCMM_BOOSTER; do
    mkdir -p "$2/ppu$setting"
    fpc -B -O2 -l- ${setting:+-d$setting} -Fu"$units" -FU"$2/ppu$setting" -o"$2/check$setting" \
      "$2/check_fpcx64mm.pas" >>"$2.log" 2>&1 || return 1
    said="$("$2/check$setting" 2>&1)" || true
    echo "check_fpcx64mm ${setting:-default}: $said" >>"$2.log"
    [ "$said" = ok ] || return 1
  done
  echo "$units"
}

# A library that a trivial program cannot run with is no use to the bench.
check_preload() {
  local stderr
  stderr="$(LD_PRELOAD="$1" /bin/true 2>&1)" && [ -z "$stderr" ]
}

args=()
pascal_units=()
for src in "${sources[@]}"; do
  src="$(cd "$src" && pwd)"
  if ! kind="$(kind_of "$src")"; then
    echo "build-anchors: $src is not a mimalloc, snmalloc, rpmalloc, FastMM4 or mORMot 2 checkout" >&2
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
  if ! library="$("build_$kind" "$src" "$build_dir")" || [ ! -e "$library" ]; then
    echo "build-anchors: building $name failed; the last lines of $build_dir.log:" >&2
    tail -n 15 "$build_dir.log" >&2
    exit 1
  fi
  if [ "$kind" = fastmm4 ] || [ "$kind" = fpcx64mm ]; then
    # A folder of sources replaces the previous one whole, so no file of an
    # older version is left beside the new ones.
    rm -rf "$out/$name.partial"
    cp -R "$library" "$out/$name.partial"
    rm -rf "${out:?}/$name"
    mv "$out/$name.partial" "$out/$name"
    pascal_units+=("$name")
  else
    cp "$library" "$out/$name.so.partial"
    mv "$out/$name.so.partial" "$out/$name.so"
    if ! check_preload "$out/$name.so"; then
      echo "build-anchors: $out/$name.so cannot be preloaded into /bin/true" >&2
      exit 1
    fi
    args+=("--alloc $name=$out/$name.so")
  fi
  printf '%s %s (source %s)\n' "$name" "$version" "$src" >"$out/$name.version"
done

if [ "$out" = "$root/.cache/anchors" ]; then
  echo "build-anchors: built into $out; ./brisk bench picks them up by itself."
else
  echo "build-anchors: built into $out; use ./brisk bench --anchors $out."
fi
for name in "${pascal_units[@]}"; do
  if [ "$out" = "$root/.cache/anchors" ]; then
    echo "$name: the Pascal bench build compiles the workloads' ${name} variants from $out/$name."
  else
    # The Pascal build looks in .cache/anchors/NAME unless told otherwise.
    upper=$(echo "$name" | tr a-z A-Z)
    echo "$name: for the Pascal bench build, ./brisk bench --anchors $out," \
      "or cmake -DBRISK_${upper}_DIR=$out/$name."
  fi
done
if [ ${#args[@]} -gt 0 ]; then
  echo "For other tools:"
  printf '  %s\n' "${args[@]}"
fi
