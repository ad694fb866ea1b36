# SPDX-License-Identifier: MIT
# Building brisk and its tests against musl (x86-64) with Debian's musl-gcc,
# a wrapper that points gcc at musl's headers, start files and libc.
#
#   scripts/install-deps.sh musl
#   cmake -S . -B build-musl -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/x86_64-linux-musl.cmake
#   cmake --build build-musl && ctest --test-dir build-musl
#
# The programs run on this machine as they are: a dynamically linked one
# through musl's loader (/lib/ld-musl-x86_64.so.1, Debian's musl package),
# with libbrisk.so linked or preloaded; the statically linked ones
# (BRISK_TEST_STATIC_PROGRAMS) hold musl and brisk both. Debian has no C++
# standard library and no Free Pascal for musl, so the C++ and Pascal tests
# are not built (BRISK_TEST_CXX, BRISK_PASCAL).

find_program(BRISK_MUSL_GCC NAMES musl-gcc)
if(NOT BRISK_MUSL_GCC)
  message(FATAL_ERROR "musl-gcc was not found: scripts/install-deps.sh musl")
endif()
set(CMAKE_C_COMPILER ${BRISK_MUSL_GCC})
# Stack capture (src/platform/linux_unwind.c) finds a frame's unwind rule
# through its module's .eh_frame_hdr (PT_GNU_EH_FRAME), which gcc asks the
# linker for in a dynamic link; Debian's musl-gcc specs leave
# --eh-frame-hdr out, and a static link omits it by default. Where there is
# none, and past musl's own code (built without unwind tables), the walk
# follows frame pointers: the test programs keep them, as a program whose
# reports should name its own functions there must.
set(CMAKE_C_FLAGS_INIT "-fno-omit-frame-pointer")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--eh-frame-hdr")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,--eh-frame-hdr")
set(BRISK_TEST_CXX OFF CACHE BOOL "Build the C++ tests (no C++ standard library for musl)")
set(BRISK_PASCAL OFF CACHE BOOL "Build the Free Pascal binding (no Free Pascal for musl)")
set(BRISK_TEST_STATIC_PROGRAMS ON CACHE BOOL "Link the static test programs with -static")
