# SPDX-License-Identifier: MIT
# brisk for 64-bit Windows, cross-built with MinGW-w64 (see
# cmake/mingw-w64-x86_64.cmake and docs/WINDOWS.md). Included by
# CMakeLists.txt once BRISK_SOURCES is known; does nothing for other targets.
#
# - The platform layer is src/platform/windows*.c instead of linux*.c.
# - No malloc override: a Windows program's malloc belongs to its C runtime
#   DLL and cannot be replaced by linking a symbol of the same name.
# - brisk.dll exports the brisk_* API (objects built with
#   BRISK_BUILDING_DLL: __declspec(dllexport)), with its import library
#   libbrisk.dll.a.
# - libbrisk.a holds the objects built with BRISK_STATIC, plus the import
#   entries (made by dlltool from cmake/windows/*.def) of the few kernel32,
#   bcrypt and msvcrt functions brisk calls, so that Free Pascal's linker,
#   which has no MinGW import libraries, needs nothing else. Its test
#   windows_static_imports checks that the archive leaves no symbol
#   undefined.
# - The tests (tests/windows.cmake) and the Free Pascal programs
#   (pascal/win64.cmake) replace the Linux ones, and run under Wine.
if(NOT WIN32)
  return()
endif()
if(NOT CMAKE_C_COMPILER_ID STREQUAL "GNU")
  message(FATAL_ERROR "brisk builds for Windows with MinGW-w64 gcc "
    "(-DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-x86_64.cmake, or cmake/mingw-w64-i686.cmake)")
endif()
if(NOT BRISK_MINGW_TRIPLE)
  set(BRISK_MINGW_TRIPLE x86_64-w64-mingw32)
endif()
cmake_minimum_required(VERSION 3.19) # cmake_language(DEFER)

set(BRISK_OVERRIDE OFF CACHE BOOL "Export malloc & co (not on Windows)" FORCE)
set(BRISK_OVERRIDE OFF)
list(REMOVE_ITEM BRISK_SOURCES src/api/override.c src/api/override_new.c)
list(TRANSFORM BRISK_SOURCES REPLACE "^src/platform/linux" "src/platform/windows")

# The test folders of CMakeLists.txt are Linux's; brisk_windows_finish adds
# the Windows ones instead.
set(brisk_windows_tests ${BRISK_BUILD_TESTS})
set(BRISK_BUILD_TESTS OFF)
if(brisk_windows_tests)
  enable_testing() # here: CMake ignores it in a deferred call
endif()

find_program(BRISK_DLLTOOL NAMES ${BRISK_MINGW_TRIPLE}-dlltool REQUIRED)
find_program(BRISK_NM NAMES ${BRISK_MINGW_TRIPLE}-nm REQUIRED)

# Runs once CMakeLists.txt has defined the targets.
function(brisk_windows_finish)
  # The small code model addresses brisk's own data directly (MinGW's
  # default goes through a .refptr pointer: one more load on the fast path).
  # 32-bit code addresses it directly anyway.
  if(CMAKE_SIZEOF_VOID_P EQUAL 8)
    target_compile_options(brisk_objects PRIVATE -mcmodel=small)
  endif()

  # --- brisk.dll: the same sources, built to export the API -----------------
  add_library(brisk_dll_objects OBJECT ${BRISK_SOURCES})
  foreach(property INCLUDE_DIRECTORIES COMPILE_OPTIONS COMPILE_DEFINITIONS)
    get_target_property(value brisk_objects ${property})
    set_property(TARGET brisk_dll_objects PROPERTY ${property} "${value}")
  endforeach()
  target_compile_definitions(brisk_dll_objects PRIVATE BRISK_BUILDING_DLL)
  target_compile_definitions(brisk_objects PRIVATE BRISK_STATIC)
  set_property(TARGET brisk PROPERTY SOURCES $<TARGET_OBJECTS:brisk_dll_objects>)
  set_property(TARGET brisk PROPERTY LINK_LIBRARIES bcrypt)
  set_property(TARGET brisk PROPERTY INTERFACE_LINK_LIBRARIES "")
  set_target_properties(brisk PROPERTIES PREFIX "" OUTPUT_NAME brisk
    IMPORT_PREFIX lib IMPORT_SUFFIX .dll.a)
  # a program that includes brisk.h gets __declspec(dllimport)...
  # ...unless it links the static library
  set_property(TARGET brisk_static PROPERTY INTERFACE_COMPILE_DEFINITIONS BRISK_STATIC)
  set_property(TARGET brisk_static PROPERTY INTERFACE_LINK_LIBRARIES "")

  # --- libbrisk.a: the objects and the import entries they need ----------------
  # Every step below belongs to one target, brisk_static, as a step after its
  # archive is written: a custom command's output that two targets depend on
  # runs once for each of them with Makefiles, at the same time under -j (the
  # two runs of dlltool collided on their temporary files).
  set(imports_dir ${PROJECT_BINARY_DIR}/windows-imports)
  set(import_commands "")
  set(import_defs "")
  foreach(dll kernel32 bcrypt msvcrt)
    list(APPEND import_defs ${PROJECT_SOURCE_DIR}/cmake/windows/${dll}.def)
  endforeach()
  if(CMAKE_SIZEOF_VOID_P EQUAL 4)
    # 32-bit: the .def files with stdcall's decorated names, imported by their
    # plain names (--kill-at), and the libgcc helpers the objects call
    # (cmake/windows/i386_imports.cmake)
    execute_process(COMMAND ${CMAKE_C_COMPILER} -print-libgcc-file-name
      OUTPUT_VARIABLE brisk_libgcc OUTPUT_STRIP_TRAILING_WHITESPACE)
    list(JOIN import_defs "," defs_argument) # a list in one argument
    list(APPEND import_commands COMMAND ${CMAKE_COMMAND} -DNM=${BRISK_NM} -DAR=${CMAKE_AR}
      -DARCHIVE=$<TARGET_FILE:brisk_static> -DLIBGCC=${brisk_libgcc} -DDEFS=${defs_argument}
      -DOUT=${imports_dir} -P ${PROJECT_SOURCE_DIR}/cmake/windows/i386_imports.cmake)
  endif()
  foreach(dll kernel32 bcrypt msvcrt)
    if(CMAKE_SIZEOF_VOID_P EQUAL 4)
      set(def ${imports_dir}/${dll}.def)
      set(kill_at --kill-at)
    else()
      set(def ${PROJECT_SOURCE_DIR}/cmake/windows/${dll}.def)
      set(kill_at "")
    endif()
    # dlltool's members are named <prefix>_hNNN.o/_sNNN.o/_tNNN.o: one prefix per DLL
    list(APPEND import_commands
      COMMAND ${BRISK_DLLTOOL} ${kill_at} --input-def ${def} --dllname ${dll}.dll
              --temp-prefix brisk_${dll} --output-lib ${imports_dir}/${dll}.a)
  endforeach()
  # Appends every member of the import libraries to libbrisk.a ("ar q" of
  # the archives' members, extracted into a scratch folder).
  add_custom_command(TARGET brisk_static POST_BUILD
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${imports_dir}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${imports_dir}
    ${import_commands}
    COMMAND ${CMAKE_COMMAND}
      -DAR=${CMAKE_AR} -DARCHIVE=$<TARGET_FILE:brisk_static> -DIMPORTS=${imports_dir}
      -P ${PROJECT_SOURCE_DIR}/cmake/windows/merge_imports.cmake
    COMMENT "dlltool: import entries for libbrisk.a"
    VERBATIM)
  # new import entries must reach the archive: a changed .def file writes it again
  set_property(TARGET brisk_static APPEND PROPERTY LINK_DEPENDS ${import_defs})

  if(brisk_windows_tests)
    include(${PROJECT_SOURCE_DIR}/tests/windows.cmake)
    include(${PROJECT_SOURCE_DIR}/pascal/win64.cmake)
    if(BRISK_WINDOWS_RUNS_SKIPPED)
      # no Wine to run them (the toolchain file's emulator says so, exit 77)
      get_directory_property(brisk_all_tests DIRECTORY ${PROJECT_SOURCE_DIR} TESTS)
      set_tests_properties(${brisk_all_tests} PROPERTIES SKIP_RETURN_CODE 77)
    endif()
  endif()
endfunction()
cmake_language(DEFER CALL brisk_windows_finish)
