# SPDX-License-Identifier: MIT
# Cross-compiling for Linux on ARM64 (AArch64, glibc) with Debian's cross
# toolchain, and running what was built (tests, benchmarks) under qemu-user.
#
#   scripts/install-deps.sh arm64
#   cmake -S . -B build-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
#   cmake --build build-arm64 && ctest --test-dir build-arm64
#
# Tests: CTest starts each test program through CMAKE_CROSSCOMPILING_EMULATOR,
# scripts/run-aarch64.sh (qemu-aarch64-static with the ARM64 C library of
# /usr/aarch64-linux-gnu), and gives the tests the same command in the
# environment variable CROSSCOMPILING_EMULATOR, with which a test that starts
# a built program itself (a script, or a program re-running itself) starts it.
# -DBRISK_QEMU_PAGE_SIZE=16384 or 65536 (tests/CMakeLists.txt) makes qemu
# report that page size to the tests, as an ARM64 kernel built with 16 or 64
# KiB pages does.

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(BRISK_CROSS_TRIPLE aarch64-linux-gnu)

find_program(BRISK_CROSS_CC NAMES ${BRISK_CROSS_TRIPLE}-gcc)
find_program(BRISK_CROSS_CXX NAMES ${BRISK_CROSS_TRIPLE}-g++)
if(NOT BRISK_CROSS_CC OR NOT BRISK_CROSS_CXX)
  message(FATAL_ERROR "the ARM64 cross compilers (${BRISK_CROSS_TRIPLE}-gcc, -g++) were not "
    "found: scripts/install-deps.sh arm64")
endif()
set(CMAKE_C_COMPILER ${BRISK_CROSS_CC})
set(CMAKE_CXX_COMPILER ${BRISK_CROSS_CXX})

# Headers and libraries from the ARM64 tree only, programs from the host.
set(CMAKE_FIND_ROOT_PATH /usr/${BRISK_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

get_filename_component(brisk_source_dir ${CMAKE_CURRENT_LIST_DIR} DIRECTORY)
set(CMAKE_CROSSCOMPILING_EMULATOR ${brisk_source_dir}/scripts/run-aarch64.sh)
