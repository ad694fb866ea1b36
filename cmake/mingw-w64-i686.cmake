# SPDX-License-Identifier: MIT
# Cross-compiling for 32-bit Windows with Debian's MinGW-w64 toolchain, and
# running what was built under Wine's 32-bit side.
#
#   scripts/install-deps.sh win32       (gcc-mingw-w64-i686-win32, and wine32:i386 where apt can)
#   cmake -S . -B build-win32 -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-i686.cmake
#   cmake --build build-win32 && ctest --test-dir build-win32
#
# The same as cmake/mingw-w64-x86_64.cmake (read it first) for i686: brisk.dll,
# libbrisk.dll.a and libbrisk.a, the Windows tests and the Free Pascal
# programs for i386-win32 (built with scripts/build-fpc-i386.sh's compiler).
# Tests run with Wine's 32-bit loader, /usr/lib/wine/wine, from Debian's
# wine32:i386 (the i386 architecture added to dpkg). Where it is not
# installed, everything still builds, and every test that would run a
# Windows program reports SKIPPED (exit status 77) and says why, never passed.

set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86)
set(BRISK_MINGW_TRIPLE i686-w64-mingw32)

find_program(BRISK_MINGW_CC NAMES ${BRISK_MINGW_TRIPLE}-gcc-win32 ${BRISK_MINGW_TRIPLE}-gcc)
find_program(BRISK_MINGW_CXX NAMES ${BRISK_MINGW_TRIPLE}-g++-win32 ${BRISK_MINGW_TRIPLE}-g++)
find_program(BRISK_MINGW_WINDRES NAMES ${BRISK_MINGW_TRIPLE}-windres)
if(NOT BRISK_MINGW_CC)
  message(FATAL_ERROR "MinGW-w64 C compiler (${BRISK_MINGW_TRIPLE}-gcc) not found: "
    "apt-get install gcc-mingw-w64-i686-win32")
endif()
set(CMAKE_C_COMPILER ${BRISK_MINGW_CC})
if(BRISK_MINGW_CXX)
  set(CMAKE_CXX_COMPILER ${BRISK_MINGW_CXX})
endif()
if(BRISK_MINGW_WINDRES)
  set(CMAKE_RC_COMPILER ${BRISK_MINGW_WINDRES})
endif()

set(CMAKE_FIND_ROOT_PATH /usr/${BRISK_MINGW_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Frame pointers everywhere: on 32-bit x86, RtlCaptureStackBackTrace walks
# the EBP chain, and without them a report's stacks come out empty.
set(CMAKE_C_FLAGS_INIT "-fno-omit-frame-pointer")
set(CMAKE_CXX_FLAGS_INIT "-fno-omit-frame-pointer")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static-libgcc -static-libstdc++")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static-libgcc -static-libstdc++")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "-static-libgcc -static-libstdc++")

# --- Wine's 32-bit side ----------------------------------------------------------
# /usr/lib/wine/wine is wine32's loader; wine64's cannot start a 32-bit program.
find_program(BRISK_WINE32 NAMES wine PATHS /usr/lib/wine NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
find_program(BRISK_WINESERVER NAMES wineserver PATHS /usr/lib/wine NO_CMAKE_FIND_ROOT_PATH)
get_property(brisk_in_try_compile GLOBAL PROPERTY IN_TRY_COMPILE)
if(BRISK_WINE32 AND NOT brisk_in_try_compile)
  set(BRISK_WINEPREFIX "${CMAKE_BINARY_DIR}/wine-prefix" CACHE PATH
    "Wine prefix in which the cross-built programs run (created when missing)")
  set(brisk_wine_env WINEPREFIX=${BRISK_WINEPREFIX} WINEDEBUG=-all
    "WINEDLLOVERRIDES=mscoree,mshtml=")
  # as in cmake/mingw-w64-x86_64.cmake: Wine's background processes first
  set(brisk_wine_run "\"${BRISK_WINE32}\" cmd /c exit </dev/null >/dev/null 2>&1\n"
    "exec \"${BRISK_WINE32}\" \"$@\"")
  string(CONCAT brisk_wine_run ${brisk_wine_run})
  set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_COMMAND} -E env ${brisk_wine_env}
    /bin/sh -c ${brisk_wine_run} brisk-wine)
  if(NOT EXISTS "${BRISK_WINEPREFIX}/system.reg")
    message(STATUS "Creating the Wine prefix ${BRISK_WINEPREFIX} (once, about 10 s)")
    execute_process(COMMAND ${CMAKE_COMMAND} -E env ${brisk_wine_env} ${BRISK_WINE32} wineboot --init
      RESULT_VARIABLE brisk_wineboot_rc OUTPUT_QUIET ERROR_QUIET)
    if(BRISK_WINESERVER)
      execute_process(COMMAND ${CMAKE_COMMAND} -E env ${brisk_wine_env} ${BRISK_WINESERVER} -w)
    endif()
  endif()
elseif(NOT brisk_in_try_compile)
  get_property(brisk_wine_warned GLOBAL PROPERTY BRISK_WINE_WARNED)
  if(NOT brisk_wine_warned)
    set_property(GLOBAL PROPERTY BRISK_WINE_WARNED TRUE)
    message(WARNING "Wine's 32-bit side (/usr/lib/wine/wine, Debian's wine32:i386) not found: "
      "the Win32 programs are built, and every test that runs one is skipped")
  endif()
  # exit status 77: CTest's SKIPPED (cmake/windows.cmake sets SKIP_RETURN_CODE)
  set(CMAKE_CROSSCOMPILING_EMULATOR /bin/sh -c
    "echo \"skipped: Wine's 32-bit side is not installed (wine32:i386, which scripts/install-deps.sh win32 tries to install): cannot run $0\"\nexit 77")
  set(BRISK_WINDOWS_RUNS_SKIPPED ON)
endif()
