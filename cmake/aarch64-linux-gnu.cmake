# SPDX-License-Identifier: MIT
# Cross-compiling for Linux on ARM64 (AArch64, glibc) with Debian's cross
# toolchain, and running what was built (tests, benchmarks) under qemu-user.
#
#   scripts/install-deps.sh arm64
#   cmake -S . -B build-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
#   cmake --build build-arm64 && ctest --test-dir build-arm64
#
# Tests: CTest starts each test program through CMAKE_CROSSCOMPILING_EMULATOR:
# qemu-aarch64-static with the ARM64 C library of /usr/aarch64-linux-gnu
# (Debian's libc6-arm64-cross). The statically linked qemu, because LD_PRELOAD
# (an ARM64 libbrisk) must reach the emulated program's loader: a dynamically
# linked qemu, or a shell script around it, would be given it by the host's
# loader first. tests/CMakeLists.txt hands the same command to the tests in
# the environment variable CROSSCOMPILING_EMULATOR (with QEMU_LD_PREFIX), so
# that a test that starts a built program itself (a script, or a program
# re-running itself) starts it through qemu too: an ARM64 program cannot be
# executed directly without binfmt_misc, which a container rarely has.
# -DBRISK_QEMU_PAGE_SIZE=16384 or 65536 makes qemu report that page size
# (AT_PAGESZ), as an ARM64 kernel built with 16 or 64 KiB pages does.

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(BRISK_CROSS_TRIPLE aarch64-linux-gnu)
set(BRISK_DEBIAN_ARCH arm64) # Debian's name, for its libraries (tests/override)
set(BRISK_TOOLCHAIN_FILE ${CMAKE_CURRENT_LIST_FILE}) # its whole path (tests/install)

find_program(BRISK_CROSS_CC NAMES ${BRISK_CROSS_TRIPLE}-gcc)
find_program(BRISK_CROSS_CXX NAMES ${BRISK_CROSS_TRIPLE}-g++)
if(NOT BRISK_CROSS_CC OR NOT BRISK_CROSS_CXX)
  message(FATAL_ERROR "the ARM64 cross compilers (${BRISK_CROSS_TRIPLE}-gcc, -g++) were not "
    "found: scripts/install-deps.sh arm64")
endif()
set(CMAKE_C_COMPILER ${BRISK_CROSS_CC})
set(CMAKE_CXX_COMPILER ${BRISK_CROSS_CXX})

# Headers and libraries from the ARM64 tree only, programs from the host.
# (appended to: a project built against packages installed elsewhere adds
# their prefix with -DCMAKE_FIND_ROOT_PATH=PREFIX)
list(APPEND CMAKE_FIND_ROOT_PATH /usr/${BRISK_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

find_program(BRISK_QEMU_AARCH64 NAMES qemu-aarch64-static)
if(NOT BRISK_QEMU_AARCH64)
  set(BRISK_QEMU_AARCH64 qemu-aarch64-static) # every test fails, naming it
endif()
set(BRISK_QEMU_LD_PREFIX /usr/${BRISK_CROSS_TRIPLE})
# The C library's folder first: where Debian's own arm64 C library is
# installed too (libc6:arm64, pulled in by the libraries of python3 and
# sqlite3 that scripts/install-deps.sh arm64 adds), the dynamic loader of
# the prefix would otherwise load that libc.so.6 from /lib/aarch64-linux-gnu,
# another build than its own, and threads would not start.
set(CMAKE_CROSSCOMPILING_EMULATOR ${BRISK_QEMU_AARCH64} -L ${BRISK_QEMU_LD_PREFIX}
    -E LD_LIBRARY_PATH=${BRISK_QEMU_LD_PREFIX}/lib)
if(BRISK_QEMU_PAGE_SIZE)
  list(APPEND CMAKE_CROSSCOMPILING_EMULATOR -p ${BRISK_QEMU_PAGE_SIZE})
endif()
