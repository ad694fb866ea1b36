# SPDX-License-Identifier: MIT
# The Debian package, made by CPack from what cmake/install.cmake installs:
# configure with -DCMAKE_INSTALL_PREFIX=/usr (so that the libraries go to
# Debian's multiarch folder) and run `cpack -G DEB` in the build folder.
# scripts/package.sh does both and makes the source tarball beside it.
set(CPACK_PACKAGE_NAME brisk)
set(CPACK_PACKAGE_VENDOR "The brisk authors")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "memory allocator for multithreaded programs: a drop-in malloc and a Free Pascal unit")
set(CPACK_PACKAGE_DESCRIPTION
  "brisk gives every thread its own heap: allocating and freeing a thread's own blocks takes no lock, and a block freed by another thread costs one compare-and-swap. It replaces malloc, free and C++ operator new/delete when preloaded or linked, checks every free, and has diagnostics (statistics, leak report, checked mode) switched on without rebuilding. The package holds the shared and static libraries, brisk.h, pkg-config and CMake files, the brisk command (run, options) and the BriskMM unit for Free Pascal.")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGE_CHECKSUM SHA256)
set(CPACK_STRIP_FILES OFF)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # brisk_VERSION_ARCH.deb
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "The brisk authors")
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# glibc 2.34 (Debian 12 has 2.36): brisk's objects call pthread and dl
# functions from libc itself. python3 runs the brisk command; addr2line
# (binutils) names source lines in reports; fpc builds BriskMM programs.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.34), python3")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "binutils")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "fp-compiler")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/cmake/debian/triggers)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_GENERATOR DEB)
include(CPack)
