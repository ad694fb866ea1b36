# SPDX-License-Identifier: MIT
# The Windows tests (cmake/windows.cmake includes this file instead of
# tests/CMakeLists.txt when cross-building for Win64): Windows programs run
# by CTest under Wine (CMAKE_CROSSCOMPILING_EMULATOR, set by
# cmake/mingw-w64-x86_64.cmake). Labels: api, stress, diag, windows.
#
# Each test program is built twice: linked with the static library (name
# suffix _static) and with brisk.dll (_dll), whose thread-exit and start-up
# paths differ. POSIX threads in the tests come from MinGW's winpthreads,
# linked statically (-static), so no MinGW DLL sits beside the programs; brisk
# itself uses no pthreads. Not built for Windows: the fork test and
# brisk_heap_check's damage test (fork), the malloc-override and preload
# tests (Windows has no malloc interposition), the layer check (it reads
# ELF objects) and the Linux diagnostics driver (LD_PRELOAD); windows_diag
# covers statistics, leak reports (to a file, with an exit status and
# suppressions), the double-free check, checked mode, the heap profile,
# sampled guard pages and frames left for `brisk symbolize`.
set(brisk_test_scale 100 CACHE STRING "Test iteration scale, percent")

# brisk_windows_test(NAME SOURCE LABEL): NAME_static and NAME_dll, and a test
# of each, from SOURCE (a path under tests/), labelled LABEL, windows and
# the source's folder.
function(brisk_windows_test name source label)
  get_filename_component(folder ${source} DIRECTORY)
  set(labels ${label} ${folder} windows)
  list(REMOVE_DUPLICATES labels)
  foreach(form static dll)
    set(target ${name}_${form})
    add_executable(${target} ${PROJECT_SOURCE_DIR}/tests/${source})
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/include
                                                 ${PROJECT_SOURCE_DIR}/tests/common)
    target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
    target_compile_definitions(${target} PRIVATE BRISK_TEST_SCALE=${brisk_test_scale})
    if(form STREQUAL "static")
      target_link_libraries(${target} PRIVATE brisk_static)
    else()
      target_link_libraries(${target} PRIVATE brisk)
    endif()
    target_link_libraries(${target} PRIVATE -static -pthread)
    add_test(NAME ${target} COMMAND ${target})
    set_tests_properties(${target} PROPERTIES LABELS "${labels}" TIMEOUT 300
      FAIL_REGULAR_EXPRESSION "[1-9][0-9]* failed")
  endforeach()
endfunction()

brisk_windows_test(brisk_api_conformance api/api_conformance.c api)
brisk_windows_test(brisk_stress_mt stress/stress_mt.c stress)
brisk_windows_test(brisk_thread_churn stress/thread_churn.c stress)
brisk_windows_test(brisk_windows_diag platform/windows_diag.c diag)
brisk_windows_test(brisk_windows_thread_exit platform/windows_thread_exit.c stress)
brisk_windows_test(brisk_next_thread_reuses_pages core/next_thread_reuses_pages.c api)
# stress again with immediate purging: decommit and recommit under live blocks
add_test(NAME brisk_stress_mt_purge0_static COMMAND brisk_stress_mt_static)
set_tests_properties(brisk_stress_mt_purge0_static PROPERTIES LABELS "stress;windows" TIMEOUT 300
  ENVIRONMENT "BRISK_PURGE_DELAY=0;BRISK_TEST_SCALE=50" FAIL_REGULAR_EXPRESSION "[1-9][0-9]* failed")
# the churn tests read the working set: alone, not beside other tests
set_tests_properties(brisk_thread_churn_static brisk_thread_churn_dll PROPERTIES RUN_SERIAL ON)

# The heap profile of a Windows program read by Google's pprof (skipped
# without it): the exported function that holds the memory comes first.
if(NOT BRISK_WINDOWS_RUNS_SKIPPED)
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  add_test(NAME windows_heap_profile_pprof
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/platform/windows_pprof_test.py
            $<TARGET_FILE:brisk_windows_diag_dll> ${CMAKE_CROSSCOMPILING_EMULATOR})
  set_tests_properties(windows_heap_profile_pprof PROPERTIES LABELS "diag;windows" TIMEOUT 300
    SKIP_RETURN_CODE 77)
endif()

# The white-box tests of the size classes and the block-start check
# (tests/core/CMakeLists.txt): static only, as brisk.dll exports no
# internal function.
foreach(t size_class_table block_start_check)
  add_executable(brisk_${t}_static ${PROJECT_SOURCE_DIR}/tests/core/${t}.c)
  target_include_directories(brisk_${t}_static PRIVATE ${PROJECT_SOURCE_DIR}/include
                             ${PROJECT_SOURCE_DIR}/tests/common ${PROJECT_SOURCE_DIR}/src/core)
  target_compile_options(brisk_${t}_static PRIVATE -Wall -Wextra -Werror)
  target_compile_definitions(brisk_${t}_static PRIVATE
                             $<TARGET_PROPERTY:brisk_objects,COMPILE_DEFINITIONS>)
  target_link_libraries(brisk_${t}_static PRIVATE brisk_static -static -pthread)
  add_test(NAME brisk_${t}_static COMMAND brisk_${t}_static)
  set_tests_properties(brisk_${t}_static PROPERTIES LABELS "core;windows" TIMEOUT 300
    FAIL_REGULAR_EXPRESSION "[1-9][0-9]* failed")
endforeach()

# libbrisk.a must link into a program whose linker has no import libraries
# (Free Pascal, Delphi): it defines every symbol it uses.
add_test(NAME windows_static_imports
  COMMAND ${CMAKE_COMMAND} -DNM=${BRISK_NM} -DARCHIVE=$<TARGET_FILE:brisk_static>
          -P ${PROJECT_SOURCE_DIR}/cmake/windows/check_imports.cmake)
set_tests_properties(windows_static_imports PROPERTIES LABELS "api;windows")

get_filename_component(brisk_toolchain ${CMAKE_TOOLCHAIN_FILE} ABSOLUTE BASE_DIR
  ${PROJECT_SOURCE_DIR})
set(brisk_prefix -) # the Wine prefix to reuse, if any
if(BRISK_WINEPREFIX)
  set(brisk_prefix ${BRISK_WINEPREFIX})
endif()
if(CMAKE_SIZEOF_VOID_P EQUAL 4)
  set(brisk_win win32)
else()
  set(brisk_win win64)
endif()
# The same Windows build with CMake's default generator, Unix Makefiles, at
# -j4 (whatever generator this build uses): the libraries and Free Pascal
# programs of both forms, whose steps once ran twice at once there.
add_test(NAME windows_makefiles_parallel
  COMMAND ${PROJECT_SOURCE_DIR}/tests/platform/windows_makefiles.sh ${PROJECT_SOURCE_DIR}
          ${brisk_toolchain} ${brisk_prefix} pascal_${brisk_win}_test_briskmm
          pascal_${brisk_win}_ok_minimal pascal_${brisk_win}_ok_minimal_shared)
set_tests_properties(windows_makefiles_parallel PROPERTIES LABELS "windows" TIMEOUT 900
  RUN_SERIAL ON PASS_REGULAR_EXPRESSION "[1-9][0-9]* passed, 0 failed")
