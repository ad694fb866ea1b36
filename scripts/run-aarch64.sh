#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/run-aarch64.sh PROGRAM ARGS...: runs an ARM64 Linux program on
# this x86-64 machine under qemu-user, with Debian's ARM64 C library
# (libc6-arm64-cross, in /usr/aarch64-linux-gnu). cmake/aarch64-linux-gnu.cmake
# runs every test program through it.
#
# qemu-aarch64-static, not the dynamically linked qemu-aarch64: LD_PRELOAD
# (an ARM64 libbrisk) must reach the emulated program's loader, and the
# host's loader would try to load it into qemu itself. The variables go on
# to the programs the emulated one starts: an ARM64 program cannot be
# executed directly without binfmt_misc (which a container rarely has), so a
# test that re-runs itself, or a script that runs a built program, starts it
# with $CROSSCOMPILING_EMULATOR. QEMU_PAGESIZE, when set, is the page size
# qemu reports (AT_PAGESZ), as a 16 or 64 KiB page kernel does.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
QEMU_LD_PREFIX=${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}
CROSSCOMPILING_EMULATOR=$here/run-aarch64.sh
export QEMU_LD_PREFIX CROSSCOMPILING_EMULATOR
qemu=$(command -v qemu-aarch64-static || true)
if [ -z "$qemu" ]; then
  echo "run-aarch64.sh: qemu-aarch64-static is missing: scripts/install-deps.sh arm64" >&2
  exit 1
fi
exec "$qemu" "$@"
