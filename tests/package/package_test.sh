#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The release files, as a user meets them.
#   package_test.sh build    BUILD_DIR VERSION   cpack makes BUILD_DIR/dist/brisk_VERSION_ARCH.deb
#   package_test.sh contents BUILD_DIR VERSION   the package holds what the README promises
#   package_test.sh install  BUILD_DIR VERSION   apt-get installs it; a program linked with
#       -lbrisk runs on brisk; the brisk command works from /usr/bin; removing the package
#       leaves nothing behind. It changes the machine, so it runs only as root and only where
#       no brisk package is installed already (else it skips, exit status 77, saying why).
#   package_test.sh tarball  BUILD_DIR VERSION   the source tarball builds the libraries
set -euo pipefail
what=$1 build=$2 version=$3
source=$(cd "$(dirname "$0")/../.." && pwd)
dist=$build/dist
arch=$(dpkg --print-architecture)
deb=$dist/brisk_${version}_${arch}.deb

failed=0
check() { # description, command...: runs the command, counts a failure
  local description=$1
  shift
  if "$@"; then echo "ok   $description"; else echo "FAIL $description"; failed=1; fi
}
finish() { [ "$failed" -eq 0 ] || { echo "package_test $what: failed"; exit 1; }; }

case "$what" in
build)
  rm -rf "$dist"
  (cd "$build" && cpack -G DEB -B "$dist")
  check "cpack made $(basename "$deb")" test -s "$deb"
  ;;

contents)
  listing=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|')
  control=$(dpkg-deb -f "$deb")
  echo "$control"
  libdir=/usr/lib/$(gcc -print-multiarch)
  for path in "$libdir/libbrisk.so.0" "$libdir/libbrisk.so.$version" "$libdir/libbrisk.so" \
    "$libdir/libbrisk-heapprof.so.0" \
    "$libdir/libbrisk.a" "$libdir/brisk_link.o" /usr/include/brisk.h \
    "$libdir/pkgconfig/brisk.pc" "$libdir/pkgconfig/brisk-static.pc" \
    "$libdir/cmake/brisk/briskConfig.cmake" "$libdir/cmake/brisk/briskConfigVersion.cmake" \
    /usr/bin/brisk /usr/share/brisk/tools/brisk_run.py /usr/share/brisk/pascal/BriskMM.pas \
    /usr/share/doc/brisk/LICENSE /usr/share/doc/brisk/CHANGELOG.md; do
    check "the package holds $path" grep -qx "$path" <<<"$listing"
  done
  check "nothing outside /usr" test -z "$(grep -v '^/usr' <<<"$listing" | grep -v '^/$' || true)"
  check "no build-folder paths" test -z "$(grep -e "$build" -e "$source" <<<"$listing" || true)"
  check "Version: $version" grep -qx "Version: $version" <<<"$control"
  check "depends on libc6 and python3" grep -q "^Depends: libc6 (>= 2.34), python3" <<<"$control"
  check "an ldconfig trigger" sh -c "dpkg-deb --ctrl-tarfile '$deb' | tar -xO ./triggers | grep -q '^activate-noawait ldconfig'"
  ;;

install)
  [ "$(id -u)" -eq 0 ] || { echo "skipped: installing a package needs root"; exit 77; }
  if dpkg-query -W -f='${Status}' brisk 2>/dev/null | grep -q installed; then
    echo "skipped: a brisk package is installed on this machine already; this test would replace it"
    exit 77
  fi
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  # every folder the package brings: those that did not exist before must go with it
  dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|; s|/$||' | grep . >"$scratch/paths"
  while read -r path; do [ -e "$path" ] || echo "$path"; done <"$scratch/paths" >"$scratch/new"
  export DEBIAN_FRONTEND=noninteractive
  check "apt-get install ./$(basename "$deb")" \
    sh -c "apt-get install -y -q --no-install-recommends '$deb' >'$scratch/apt.log' 2>&1 || { cat '$scratch/apt.log'; exit 1; }"
  check "dpkg knows brisk $version" sh -c "dpkg-query -W -f='\${Version}' brisk | grep -qx '$version'"

  # a program linked with -lbrisk (Debian's gcc links --as-needed) runs on brisk,
  # also for what libc allocates on its behalf (libc_only.c: see tests/install)
  cc=${CC:-cc}
  check "cc consumer.c -lbrisk links" $cc "$source/tests/install/consumer/consumer.c" -lbrisk -o "$scratch/api"
  check "it calls brisk $version through brisk.h" sh -c "'$scratch/api' | grep -qx 'brisk $version owns=1'"
  check "cc libc_only.c -lbrisk links" $cc "$source/tests/install/consumer/libc_only.c" -lbrisk -o "$scratch/libc_only"
  check "libc's allocations in a -lbrisk program are brisk's" "$scratch/libc_only"
  check "pkg-config brisk-static links brisk into the program" sh -c \
    "$cc '$source/tests/install/consumer/libc_only.c' \$(pkg-config --cflags --libs brisk-static) -o '$scratch/static' && '$scratch/static' && ! ldd '$scratch/static' | grep -q libbrisk"

  # the brisk command, from /usr/bin, with no checkout around it
  cd "$scratch"
  check "brisk --version says $version" sh -c "/usr/bin/brisk --version | grep -qx 'brisk $version'"
  check "brisk run --stats -- /bin/true prints statistics" sh -c \
    "/usr/bin/brisk run --stats -- /bin/true 2>&1 | tee '$scratch/run.log' | grep -q 'brisk $version statistics' || { cat '$scratch/run.log'; exit 1; }"
  check "brisk options names BRISK_PURGE_DELAY" sh -c "/usr/bin/brisk options 2>&1 | grep -q 'BRISK_PURGE_DELAY'"
  check "BRISK_VERBOSE=1 gives the version first" sh -c \
    "BRISK_VERBOSE=1 LD_PRELOAD=libbrisk.so.0 /bin/true 2>&1 | head -n 1 | grep -qx 'brisk: version $version'"
  if command -v fpc >/dev/null 2>&1; then
    check "a Free Pascal program builds with the installed BriskMM" sh -c \
      "fpc -O2 -Fu/usr/share/brisk/pascal -FU'$scratch' -o'$scratch/ok_minimal' '$source/pascal/tests/ok_minimal.pas' >'$scratch/fpc.log' 2>&1 || { cat '$scratch/fpc.log'; exit 1; }"
    check "it runs on BriskMM $version" sh -c "'$scratch/ok_minimal' | grep -q 'brisk $version'"
  fi
  cd /

  check "apt-get remove --purge brisk" sh -c "apt-get remove --purge -y -q brisk >'$scratch/apt.log' 2>&1 || { cat '$scratch/apt.log'; exit 1; }"
  left=$(while read -r path; do [ ! -e "$path" ] || echo "$path"; done <"$scratch/new")
  check "removing the package leaves nothing behind${left:+ (left: $left)}" test -z "$left"
  ;;

tarball)
  git -C "$source" rev-parse --git-dir >/dev/null 2>&1 ||
    { echo "skipped: not a git checkout (the tarball is made from what git has committed)"; exit 77; }
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  "$source/scripts/package.sh" "$scratch/dist" "$scratch/build" >"$scratch/package.log" 2>&1 ||
    { cat "$scratch/package.log"; exit 1; }
  tarball=$scratch/dist/brisk-$version.tar.gz
  check "scripts/package.sh made brisk-$version.tar.gz" test -s "$tarball"
  check "and the .deb" test -s "$scratch/dist/brisk_${version}_${arch}.deb"
  tar -C "$scratch" -xzf "$tarball"
  check "the tarball has LICENSE and CHANGELOG.md" test -s "$scratch/brisk-$version/LICENSE" -a -s "$scratch/brisk-$version/CHANGELOG.md"
  check "the tarball builds the libraries" sh -c \
    "cmake -S '$scratch/brisk-$version' -B '$scratch/b' -DBRISK_BUILD_TESTS=OFF >'$scratch/b.log' 2>&1 && cmake --build '$scratch/b' >>'$scratch/b.log' 2>&1 || { tail -20 '$scratch/b.log'; exit 1; }"
  check "and reports $version" sh -c "grep -q 'CMAKE_PROJECT_VERSION:STATIC=$version' '$scratch/b/CMakeCache.txt'"
  ;;
*) echo "usage: package_test.sh build|contents|install|tarball BUILD_DIR VERSION" >&2; exit 64 ;;
esac
finish
