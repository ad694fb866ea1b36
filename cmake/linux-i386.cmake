# SPDX-License-Identifier: MIT
# 32-bit Linux (i386, glibc) built on x86-64 with the host's gcc -m32, and run
# natively: the kernel runs 32-bit programs as they are.
#
#   scripts/install-deps.sh linux32     (gcc-12-multilib, g++-12-multilib)
#   cmake -S . -B build-linux32 -DCMAKE_TOOLCHAIN_FILE=cmake/linux-i386.cmake
#   cmake --build build-linux32 && ctest --test-dir build-linux32
#
# Debian's gcc-multilib adds nothing but the link /usr/include/asm to the
# versioned packages (the kernel's x86 headers, which serve -m32 too), and
# conflicts with every cross compiler (gcc-aarch64-linux-gnu among them). So
# brisk installs the versioned packages and points -m32 at those headers
# through a folder of its own in the build tree.
#
# Free Pascal: BRISK_FPC_I386 (default .cache/fpc-i386/bin/fpc-i386, built by
# scripts/build-fpc-i386.sh) compiles the Pascal programs for i386-linux.

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR i686)
set(CMAKE_C_COMPILER gcc)
set(CMAKE_CXX_COMPILER g++)

# The kernel's asm/ headers for -m32 (see above), in the build folder.
set(brisk_i386_include ${CMAKE_BINARY_DIR}/i386-include)
if(NOT EXISTS ${brisk_i386_include}/asm AND EXISTS /usr/include/x86_64-linux-gnu/asm)
  file(MAKE_DIRECTORY ${brisk_i386_include})
  file(CREATE_LINK /usr/include/x86_64-linux-gnu/asm ${brisk_i386_include}/asm SYMBOLIC)
endif()
set(CMAKE_C_FLAGS_INIT "-m32 -idirafter ${brisk_i386_include}")
set(CMAKE_CXX_FLAGS_INIT "-m32 -idirafter ${brisk_i386_include}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-m32")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-m32")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "-m32")

# 32-bit libraries live in /usr/lib32 on Debian.
set(CMAKE_LIBRARY_ARCHITECTURE i386-linux-gnu)
set(FIND_LIBRARY_USE_LIB32_PATHS ON)
