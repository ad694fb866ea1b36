# SPDX-License-Identifier: MIT
# Cross-compiling for 64-bit Windows with Debian's MinGW-w64 toolchain, and
# running what was built (tests, benchmarks) under Wine.
#
#   apt-get install gcc-mingw-w64-x86-64-win32 g++-mingw-w64-x86-64-win32 wine64
#   cmake -S . -B build-win64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-x86_64.cmake
#   cmake --build build-win64 && ctest --test-dir build-win64
#
# Compilers: the "win32" thread-model variants of x86_64-w64-mingw32-gcc/g++
# (Win32 threads, no dependency on libwinpthread-1.dll), falling back to the
# plain names. The C++ runtime and libgcc are linked statically, so that every
# .exe and .dll runs without MinGW DLLs beside it.
#
# Tests: CTest starts each test program through CMAKE_CROSSCOMPILING_EMULATOR,
# which runs it with wine64 in a Wine prefix of its own (BRISK_WINEPREFIX,
# default <build>/wine-prefix), without a display and with Wine's debug
# output off. The prefix is created once, when the project is configured
# (about 10 s and 700 MB: Wine copies its built-in DLLs into it); after that a
# program starts in about 0.5 s, or well under 0.1 s while the Wine server of
# that prefix still runs (it stays up for 3 s after the last program ends).
# Without wine64 the project still builds, and every test fails with a message
# that says to install it.

set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR AMD64)
set(BRISK_MINGW_TRIPLE x86_64-w64-mingw32)

find_program(BRISK_MINGW_CC NAMES ${BRISK_MINGW_TRIPLE}-gcc-win32 ${BRISK_MINGW_TRIPLE}-gcc)
find_program(BRISK_MINGW_CXX NAMES ${BRISK_MINGW_TRIPLE}-g++-win32 ${BRISK_MINGW_TRIPLE}-g++)
find_program(BRISK_MINGW_WINDRES NAMES ${BRISK_MINGW_TRIPLE}-windres)
if(NOT BRISK_MINGW_CC)
  message(FATAL_ERROR "MinGW-w64 C compiler (${BRISK_MINGW_TRIPLE}-gcc) not found: "
    "apt-get install gcc-mingw-w64-x86-64-win32")
endif()
set(CMAKE_C_COMPILER ${BRISK_MINGW_CC})
if(BRISK_MINGW_CXX)
  set(CMAKE_CXX_COMPILER ${BRISK_MINGW_CXX})
endif()
if(BRISK_MINGW_WINDRES)
  set(CMAKE_RC_COMPILER ${BRISK_MINGW_WINDRES})
endif()

# Headers and libraries come from the MinGW-w64 tree only, programs from the host.
set(CMAKE_FIND_ROOT_PATH /usr/${BRISK_MINGW_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_EXE_LINKER_FLAGS_INIT "-static-libgcc -static-libstdc++")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static-libgcc -static-libstdc++")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "-static-libgcc -static-libstdc++")

# --- Wine -------------------------------------------------------------------
# Debian's wine64 package installs the loader as /usr/lib/wine/wine64 (not on
# PATH unless the "wine" package is installed too).
find_program(BRISK_WINE64 NAMES wine64 wine PATHS /usr/lib/wine NO_CMAKE_FIND_ROOT_PATH)
find_program(BRISK_WINESERVER NAMES wineserver wineserver64 PATHS /usr/lib/wine
  NO_CMAKE_FIND_ROOT_PATH)

# try_compile() reads this file again in a scratch project: it needs neither
# the emulator nor a prefix there.
get_property(brisk_in_try_compile GLOBAL PROPERTY IN_TRY_COMPILE)
if(BRISK_WINE64 AND NOT brisk_in_try_compile)
  set(BRISK_WINEPREFIX "${CMAKE_BINARY_DIR}/wine-prefix" CACHE PATH
    "Wine prefix in which the cross-built programs run (created when missing)")
  # mscoree and mshtml off: no attempt to install Wine Mono or Gecko, which
  # would want a display or the network. WINEDEBUG=-all: no debug channels
  # on stderr, so that a test's output is the program's own.
  set(brisk_wine_env WINEPREFIX=${BRISK_WINEPREFIX} WINEDEBUG=-all
    "WINEDLLOVERRIDES=mscoree,mshtml=")
  # The first Wine program of a session starts Wine's background processes
  # (services.exe, explorer.exe, ...), which inherit its stdout and stderr
  # and live on for about 2 s after the program ends: CTest, which waits for
  # the test's output pipes to close, would take 2.5 s per test. So a
  # program with its output on /dev/null starts them first (0.03 s when they
  # already run, 0.5 s otherwise), then the test program runs.
  set(brisk_wine_run "\"${BRISK_WINE64}\" cmd /c exit </dev/null >/dev/null 2>&1\n"
    "exec \"${BRISK_WINE64}\" \"$@\"")
  string(CONCAT brisk_wine_run ${brisk_wine_run})
  set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_COMMAND} -E env ${brisk_wine_env}
    /bin/sh -c ${brisk_wine_run} brisk-wine)

  if(NOT EXISTS "${BRISK_WINEPREFIX}/system.reg")
    message(STATUS "Creating the Wine prefix ${BRISK_WINEPREFIX} (once, about 10 s)")
    execute_process(COMMAND ${CMAKE_COMMAND} -E env ${brisk_wine_env} ${BRISK_WINE64} wineboot --init
      RESULT_VARIABLE brisk_wineboot_rc OUTPUT_QUIET ERROR_QUIET)
    if(BRISK_WINESERVER)
      # wait until the prefix is complete and its server has exited
      execute_process(COMMAND ${CMAKE_COMMAND} -E env ${brisk_wine_env} ${BRISK_WINESERVER} -w)
    endif()
    if(NOT brisk_wineboot_rc EQUAL 0 OR NOT EXISTS "${BRISK_WINEPREFIX}/system.reg")
      message(WARNING "wineboot --init failed (${brisk_wineboot_rc}) for ${BRISK_WINEPREFIX}: "
        "the Windows tests will not run")
    endif()
  endif()
elseif(NOT brisk_in_try_compile)
  # Every test then fails and says why, rather than the shell's "cannot
  # execute binary file". (CMake reads this file more than once: warn once.)
  get_property(brisk_wine_warned GLOBAL PROPERTY BRISK_WINE_WARNED)
  if(NOT brisk_wine_warned)
    set_property(GLOBAL PROPERTY BRISK_WINE_WARNED TRUE)
    message(WARNING "wine64 not found: the Windows programs are built, but every test fails "
      "until it is installed (apt-get install wine64)")
  endif()
  set(CMAKE_CROSSCOMPILING_EMULATOR /bin/sh -c
    "echo \"wine64 not installed (apt-get install wine64): cannot run $0\" >&2\nexit 1")
endif()
