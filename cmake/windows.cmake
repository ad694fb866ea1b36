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
if(NOT CMAKE_SIZEOF_VOID_P EQUAL 8 OR NOT CMAKE_C_COMPILER_ID STREQUAL "GNU")
  message(FATAL_ERROR "brisk builds for 64-bit Windows with MinGW-w64 gcc "
    "(-DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-x86_64.cmake)")
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

find_program(BRISK_DLLTOOL NAMES x86_64-w64-mingw32-dlltool REQUIRED)
find_program(BRISK_NM NAMES x86_64-w64-mingw32-nm REQUIRED)

# Runs once CMakeLists.txt has defined the targets.
function(brisk_windows_finish)
  # The small code model addresses brisk's own data directly (MinGW's
  # default goes through a .refptr pointer: one more load on the fast path).
  target_compile_options(brisk_objects PRIVATE -mcmodel=small)

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
  set(imports_dir ${PROJECT_BINARY_DIR}/windows-imports)
  set(import_members "")
  set(import_commands "")
  foreach(dll kernel32 bcrypt msvcrt)
    set(def ${PROJECT_SOURCE_DIR}/cmake/windows/${dll}.def)
    # dlltool's members are named <prefix>_hNNN.o/_sNNN.o/_tNNN.o: one prefix per DLL
    list(APPEND import_commands
      COMMAND ${BRISK_DLLTOOL} --input-def ${def} --dllname ${dll}.dll
              --temp-prefix brisk_${dll} --output-lib ${imports_dir}/${dll}.a)
    list(APPEND import_defs ${def})
  endforeach()
  add_custom_command(OUTPUT ${imports_dir}/imports.stamp
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${imports_dir}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${imports_dir}
    ${import_commands}
    COMMAND ${CMAKE_COMMAND} -E touch ${imports_dir}/imports.stamp
    DEPENDS ${import_defs}
    COMMENT "dlltool: import entries for libbrisk.a"
    VERBATIM)
  add_custom_target(brisk_windows_imports DEPENDS ${imports_dir}/imports.stamp)
  add_dependencies(brisk_static brisk_windows_imports)
  # new import entries must reach the archive: its objects depend on them
  set_property(SOURCE ${BRISK_SOURCES} APPEND PROPERTY OBJECT_DEPENDS
    ${imports_dir}/imports.stamp)
  # Appends every member of the import libraries to libbrisk.a ("ar q" of
  # the archives' members, extracted into a scratch folder).
  add_custom_command(TARGET brisk_static POST_BUILD
    COMMAND ${CMAKE_COMMAND}
      -DAR=${CMAKE_AR} -DARCHIVE=$<TARGET_FILE:brisk_static> -DIMPORTS=${imports_dir}
      -P ${PROJECT_SOURCE_DIR}/cmake/windows/merge_imports.cmake
    VERBATIM)

  if(brisk_windows_tests)
    include(${PROJECT_SOURCE_DIR}/tests/windows.cmake)
    include(${PROJECT_SOURCE_DIR}/pascal/win64.cmake)
  endif()
endfunction()
cmake_language(DEFER CALL brisk_windows_finish)
