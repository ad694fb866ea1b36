# SPDX-License-Identifier: MIT
# Installing brisk: the libraries, brisk.h, a CMake package (brisk::brisk,
# brisk::brisk_static) and pkg-config files (brisk, brisk-static), arranged so
# that a program linked with brisk cannot silently run on glibc's malloc.
#
# Debian's gcc links with --as-needed: a shared library stays in the program
# only if the program's own objects refer to one of its symbols. A program
# that allocates only inside libc (fopen, printf, getline) refers to none, so
# a plain -lbrisk would be dropped. A static library gives the linker the
# objects that define symbols it still misses: with no reference to malloc,
# brisk's malloc stays out of the program. Hence:
#  - shared: brisk_link.o, a tiny object that refers to BRISK_LINK_ANCHOR, is
#    linked in front of libbrisk.so.0, by -lbrisk (the installed libbrisk.so is
#    a linker script, as glibc's libc.so is) and by brisk::brisk;
#  - static: -u BRISK_LINK_ANCHOR makes the linker miss the anchor, so it takes
#    brisk's from libbrisk.a (brisk::brisk_static, brisk-static.pc and
#    `pkg-config --static brisk`).
# tests/install/install_test.sh builds a program each way and checks that
# brisk served what libc allocated for it.

# Every program that uses brisk as its malloc needs this symbol from brisk.
set(BRISK_LINK_ANCHOR malloc)

if(BRISK_OVERRIDE)
  add_library(brisk_link OBJECT cmake/brisk_link.c)
  # malloc declared as void(void) on purpose: only its address is taken
  target_compile_options(brisk_link PRIVATE -fno-builtin)
  target_compile_definitions(brisk_link PRIVATE BRISK_LINK_ANCHOR=${BRISK_LINK_ANCHOR})
  # the same in a project that builds brisk itself (add_subdirectory, FetchContent)
  set(brisk_link_object $<INSTALL_PREFIX>/${CMAKE_INSTALL_LIBDIR}/brisk_link.o)
  target_link_options(brisk INTERFACE $<INSTALL_INTERFACE:${brisk_link_object}>
    $<BUILD_INTERFACE:$<TARGET_OBJECTS:brisk_link>>)
  add_dependencies(brisk brisk_link) # so its object exists when a program links
  set(BRISK_STATIC_ANCHOR -Wl,-u,${BRISK_LINK_ANCHOR})
  target_link_options(brisk_static INTERFACE ${BRISK_STATIC_ANCHOR})
  set(brisk_namelink NAMELINK_SKIP) # libbrisk.so is the linker script
endif()

install(TARGETS brisk brisk_static EXPORT briskTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ${brisk_namelink}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(BRISK_OVERRIDE)
  install(FILES $<TARGET_OBJECTS:brisk_link> DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RENAME brisk_link.o)
  configure_file(cmake/libbrisk.so.in ${PROJECT_BINARY_DIR}/install/libbrisk.so @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/install/libbrisk.so DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
if(TARGET brisk_heapprof) # preloaded by `brisk run --heap-profile`, never linked
  install(TARGETS brisk_heapprof LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_SKIP)
endif()
install(FILES include/brisk.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(EXPORT briskTargets NAMESPACE brisk:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/brisk)
include(CMakePackageConfigHelpers)
configure_package_config_file(cmake/briskConfig.cmake.in
  ${PROJECT_BINARY_DIR}/briskConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/brisk)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/briskConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/briskConfig.cmake ${PROJECT_BINARY_DIR}/briskConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/brisk)

# pkg-config files find the prefix from where they lie (relocatable install)
file(RELATIVE_PATH BRISK_PC_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" BRISK_PC_PREFIX "${BRISK_PC_PREFIX}")
foreach(pc brisk brisk-static)
  configure_file(cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/install/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/install/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

# The brisk command (its run, options, top and symbolize commands: they need only the
# installed library and python3), and the Free Pascal unit with its readme.
set(BRISK_INSTALL_TOOLSDIR ${CMAKE_INSTALL_DATADIR}/brisk/tools)
file(RELATIVE_PATH BRISK_BIN_TO_TOOLS /${CMAKE_INSTALL_BINDIR} /${BRISK_INSTALL_TOOLSDIR})
file(RELATIVE_PATH BRISK_BIN_TO_LIB /${CMAKE_INSTALL_BINDIR} /${CMAKE_INSTALL_LIBDIR})
configure_file(cmake/brisk-command.sh.in ${PROJECT_BINARY_DIR}/install/brisk @ONLY)
install(PROGRAMS ${PROJECT_BINARY_DIR}/install/brisk DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES tools/brisk_command.py tools/brisk_run.py tools/brisk_options.py tools/brisk_top.py
  tools/brisk_symbolize.py tools/brisk_elf.py
  DESTINATION ${BRISK_INSTALL_TOOLSDIR})
install(FILES pascal/BriskMM.pas pascal/brisk.lpk pascal/brisk.pas pascal/README.md DESTINATION ${CMAKE_INSTALL_DATADIR}/brisk/pascal)
install(FILES LICENSE README.md CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
