# SPDX-License-Identifier: MIT
# Free Pascal for Win64 (cmake/windows.cmake includes this file when
# cross-building for Windows): BriskMM's tests and the Pascal workloads of
# bench/pascal as Windows programs, cross-compiled by the Linux fpc with the
# win64 units that scripts/build-fpc-win64.sh builds from fpc-source, and run
# by CTest under Wine. CTest labels: pascal, windows.
#
#   BRISK_FPC_WIN64   the fpc-win64 wrapper (default: .cache/fpc-win64, built
#                     at configure time when fpc and fpc-source are installed)
#
# The programs link libbrisk.a statically (no brisk.dll beside them: the
# test pascal_win64_errors reads their PE imports), except the BRISK_SHARED
# ones, which import brisk.dll (copied beside them). -DBRISK_PASCAL=OFF
# leaves all of it out.
if(DEFINED BRISK_PASCAL AND NOT BRISK_PASCAL)
  return()
endif()
if(CMAKE_SIZEOF_VOID_P EQUAL 4)
  # Win32: Free Pascal for i386-win32, built by scripts/build-fpc-i386.sh;
  # names and folders say win32
  set(brisk_win win32)
  set(brisk_fpc_default "${PROJECT_SOURCE_DIR}/.cache/fpc-i386/bin/fpc-i386-win32")
  set(brisk_fpc_script ${PROJECT_SOURCE_DIR}/scripts/build-fpc-i386.sh)
else()
  set(brisk_win win64)
  set(brisk_fpc_default "${PROJECT_SOURCE_DIR}/.cache/fpc-win64/bin/fpc-win64")
  set(brisk_fpc_script ${PROJECT_SOURCE_DIR}/scripts/build-fpc-win64.sh)
endif()
set(BRISK_FPC_WIN64 "${brisk_fpc_default}" CACHE FILEPATH
  "Free Pascal cross-compiling to Windows (scripts/build-fpc-win64.sh, or -i386.sh for Win32)")
find_program(brisk_fpc fpc)
if(brisk_fpc AND BRISK_FPC_WIN64 STREQUAL "${brisk_fpc_default}")
  # up to date in a moment; 15 s to 2 min the first time
  execute_process(COMMAND ${brisk_fpc_script}
    RESULT_VARIABLE brisk_fpc_win64_rc OUTPUT_QUIET ERROR_VARIABLE brisk_fpc_win64_error)
  if(NOT brisk_fpc_win64_rc EQUAL 0)
    message(WARNING "${brisk_fpc_script} failed: ${brisk_fpc_win64_error}")
  endif()
endif()
if(NOT EXISTS ${BRISK_FPC_WIN64})
  message(WARNING "Free Pascal for Windows not available (${BRISK_FPC_WIN64}): the Pascal "
    "programs are not built and the test pascal_${brisk_win}_missing fails. Install "
    "fp-compiler, fp-units-rtl and fpc-source, then run ${brisk_fpc_script}.")
  add_test(NAME pascal_${brisk_win}_missing COMMAND ${CMAKE_COMMAND} -E false)
  set_tests_properties(pascal_${brisk_win}_missing PROPERTIES LABELS "pascal;windows")
  return()
endif()

set(brisk_pascal_dir ${PROJECT_SOURCE_DIR}/pascal)
set(brisk_pascal_tests ${PROJECT_SOURCE_DIR}/pascal/tests)
set(brisk_pascal_bench ${PROJECT_SOURCE_DIR}/bench/pascal)
set(brisk_win64_tests ${PROJECT_BINARY_DIR}/pascal-${brisk_win}/tests)
set(brisk_win64_bench ${PROJECT_BINARY_DIR}/pascal-${brisk_win}/bench)
file(MAKE_DIRECTORY ${brisk_win64_tests} ${brisk_win64_bench})

# Free Pascal 3.2.2's linker stops with an internal error on the DWARF
# sections (.debug_*) that gcc -g writes: the programs link a copy of
# libbrisk.a without them (the same as libbrisk.a in a Release build).
find_program(BRISK_OBJCOPY NAMES ${BRISK_MINGW_TRIPLE}-objcopy REQUIRED)
set(brisk_fpc_lib_dir ${PROJECT_BINARY_DIR}/pascal-${brisk_win}/lib)
file(MAKE_DIRECTORY ${brisk_fpc_lib_dir})
# A step of brisk_static's own, after the import entries (cmake/windows.cmake):
# one owner, so that parallel builds never run it twice at once.
add_custom_command(TARGET brisk_static POST_BUILD
  COMMAND ${CMAKE_COMMAND} -E make_directory ${brisk_fpc_lib_dir}
  COMMAND ${BRISK_OBJCOPY} --strip-debug $<TARGET_FILE:brisk_static> ${brisk_fpc_lib_dir}/libbrisk.a
  COMMENT "libbrisk.a for Free Pascal (no DWARF sections)"
  VERBATIM)

# brisk_fpc_win64(NAME SOURCE OUTPUT_DIR [FLAGS...]): OUTPUT_DIR/NAME.exe, with
# a unit folder of its own (BriskMM compiles differently per define).
function(brisk_fpc_win64 name source output_dir)
  set(output ${output_dir}/${name}.exe)
  set(unit_dir ${PROJECT_BINARY_DIR}/pascal-${brisk_win}/units/${name})
  add_custom_command(OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${unit_dir}
    COMMAND ${BRISK_FPC_WIN64} -O2 -vw -l- ${ARGN}
      -FU${unit_dir} -Fu${brisk_pascal_dir} -Fi${brisk_pascal_tests}
      -Fl${brisk_fpc_lib_dir} -o${output} ${source}
    # brisk_static: its archive, and the stripped copy its last step writes
    DEPENDS ${source} ${brisk_pascal_dir}/BriskMM.pas ${brisk_pascal_tests}/checks.inc
      brisk_static brisk
    # fpc looks for libraries in its working directory before -Fl: not the
    # build folder, whose libbrisk.a may have DWARF sections
    WORKING_DIRECTORY ${brisk_fpc_lib_dir}
    COMMENT "fpc ${brisk_win} ${name}"
    VERBATIM)
  add_custom_target(pascal_${brisk_win}_${name} ALL DEPENDS ${output})
endfunction()

# --- BriskMM's tests ----------------------------------------------------------
brisk_fpc_win64(test_briskmm ${brisk_pascal_tests}/test_briskmm.pas ${brisk_win64_tests})
brisk_fpc_win64(test_briskmm_shared ${brisk_pascal_tests}/test_briskmm.pas ${brisk_win64_tests}
  -dBRISK_SHARED)
brisk_fpc_win64(test_errors ${brisk_pascal_tests}/test_errors.pas ${brisk_win64_tests})
# err_after_cthreads: cthreads is a Unix unit
foreach(helper err_not_first err_foreign_free ok_minimal)
  brisk_fpc_win64(${helper} ${brisk_pascal_tests}/${helper}.pas ${brisk_win64_tests})
endforeach()
brisk_fpc_win64(ok_minimal_heaptrc ${brisk_pascal_tests}/ok_minimal.pas ${brisk_win64_tests} -gh)
brisk_fpc_win64(ok_minimal_shared ${brisk_pascal_tests}/ok_minimal.pas ${brisk_win64_tests}
  -dBRISK_SHARED)
# the BRISK_SHARED programs find brisk.dll beside them
add_custom_command(OUTPUT ${brisk_win64_tests}/brisk.dll
  COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:brisk> ${brisk_win64_tests}/brisk.dll
  DEPENDS brisk VERBATIM)
add_custom_target(pascal_${brisk_win}_brisk_dll ALL DEPENDS ${brisk_win64_tests}/brisk.dll)

set(wine ${CMAKE_CROSSCOMPILING_EMULATOR})
add_test(NAME pascal_${brisk_win}_briskmm COMMAND ${wine} ${brisk_win64_tests}/test_briskmm.exe)
add_test(NAME pascal_${brisk_win}_briskmm_shared
  COMMAND ${wine} ${brisk_win64_tests}/test_briskmm_shared.exe)
add_test(NAME pascal_${brisk_win}_errors
  COMMAND ${wine} ${brisk_win64_tests}/test_errors.exe ${brisk_win64_tests})
set_tests_properties(pascal_${brisk_win}_briskmm pascal_${brisk_win}_briskmm_shared pascal_${brisk_win}_errors
  PROPERTIES LABELS "pascal;windows" TIMEOUT 300
  PASS_REGULAR_EXPRESSION "[1-9][0-9]* passed, 0 failed")

# The reports at exit: a statically linked program runs no C destructor, so
# BriskMM's finalization asks for them (brisk_binding_done); brisk.dll writes
# them when it is unloaded.
foreach(form "" _shared)
  add_test(NAME pascal_${brisk_win}_leaks${form} COMMAND ${wine} ${brisk_win64_tests}/ok_minimal${form}.exe)
  set_tests_properties(pascal_${brisk_win}_leaks${form} PROPERTIES ENVIRONMENT BRISK_LEAKS=1
    PASS_REGULAR_EXPRESSION "brisk: leak report: no blocks left allocated at exit")
  add_test(NAME pascal_${brisk_win}_stats${form} COMMAND ${wine} ${brisk_win64_tests}/ok_minimal${form}.exe)
  set_tests_properties(pascal_${brisk_win}_stats${form} PROPERTIES ENVIRONMENT BRISK_STATS=1
    PASS_REGULAR_EXPRESSION "statistics \\(pid [0-9]+\\).*  mallocs +[1-9][0-9]*  blocks allocated")
  set_tests_properties(pascal_${brisk_win}_leaks${form} pascal_${brisk_win}_stats${form} PROPERTIES
    LABELS "pascal;windows;diag" TIMEOUT 120)
endforeach()

# A GUI program has no standard error: the leak report, and BriskMM's own
# message (not first, under -gh), go to gui_leak.brisk.log beside it.
brisk_fpc_win64(gui_leak ${brisk_pascal_tests}/gui_leak.pas ${brisk_win64_tests})
brisk_fpc_win64(gui_leak_heaptrc ${brisk_pascal_tests}/gui_leak.pas ${brisk_win64_tests} -gh)
if(BRISK_WINDOWS_RUNS_SKIPPED)
  # no Wine to run them: the emulator says so and the test is skipped
  add_test(NAME pascal_${brisk_win}_gui_log COMMAND ${wine} ${brisk_win64_tests}/gui_leak.exe)
  add_test(NAME pascal_${brisk_win}_gui_log_message
    COMMAND ${wine} ${brisk_win64_tests}/gui_leak_heaptrc.exe)
else()
  add_test(NAME pascal_${brisk_win}_gui_log COMMAND ${brisk_pascal_tests}/gui_log.sh
    ${brisk_win64_tests}/gui_leak.exe 0 "^brisk:     \\(an object of class TGuiLeak\\)" ${wine})
  add_test(NAME pascal_${brisk_win}_gui_log_message COMMAND ${brisk_pascal_tests}/gui_log.sh
    ${brisk_win64_tests}/gui_leak_heaptrc.exe 3 "^BriskMM: another memory manager" ${wine})
endif()
set_tests_properties(pascal_${brisk_win}_gui_log pascal_${brisk_win}_gui_log_message PROPERTIES
  LABELS "pascal;windows;diag" TIMEOUT 120)

# --- the Pascal workloads, with FPC's heap, msvcrt's malloc (cmem) and brisk ----
if(NOT EXISTS ${brisk_pascal_bench}/lines.pas)
  return()
endif()
brisk_fpc_win64(gen_lines ${brisk_pascal_bench}/gen_lines.pas ${brisk_win64_bench})
set(flags_fpcheap "")
set(flags_cmem -dMM_CMEM)
set(flags_brisk -dMM_BRISK)
foreach(workload lines objects percall)
  foreach(manager fpcheap cmem brisk)
    brisk_fpc_win64(${workload}_${manager} ${brisk_pascal_bench}/${workload}.pas
      ${brisk_win64_bench} ${flags_${manager}})
  endforeach()
endforeach()

# Quick runs of every variant on a small generated data set: the workloads
# verify their own results (RESULT ok=1).
set(data_dir ${PROJECT_BINARY_DIR}/pascal-${brisk_win}/lines_data)
add_test(NAME pascal_${brisk_win}_gen_lines
  COMMAND ${wine} ${brisk_win64_bench}/gen_lines.exe --dir ${data_dir} --files 4 --mb 1)
set_tests_properties(pascal_${brisk_win}_gen_lines PROPERTIES LABELS "pascal;windows"
  FIXTURES_SETUP pascal_${brisk_win}_lines_data)
foreach(manager fpcheap cmem brisk)
  foreach(reader readln stream)
    add_test(NAME pascal_${brisk_win}_lines_${manager}_${reader}
      COMMAND ${wine} ${brisk_win64_bench}/lines_${manager}.exe --threads 2 --dir ${data_dir}
              --reader ${reader})
    set_tests_properties(pascal_${brisk_win}_lines_${manager}_${reader} PROPERTIES
      FIXTURES_REQUIRED pascal_${brisk_win}_lines_data PASS_REGULAR_EXPRESSION "RESULT ok=1")
  endforeach()
  add_test(NAME pascal_${brisk_win}_lines_${manager}_keep
    COMMAND ${wine} ${brisk_win64_bench}/lines_${manager}.exe --threads 2 --dir ${data_dir} --keep)
  set_tests_properties(pascal_${brisk_win}_lines_${manager}_keep PROPERTIES
    FIXTURES_REQUIRED pascal_${brisk_win}_lines_data PASS_REGULAR_EXPRESSION "RESULT ok=1 .*keep=1")
  add_test(NAME pascal_${brisk_win}_objects_${manager}
    COMMAND ${wine} ${brisk_win64_bench}/objects_${manager}.exe --threads 3 --quick)
  add_test(NAME pascal_${brisk_win}_percall_${manager}
    COMMAND ${wine} ${brisk_win64_bench}/percall_${manager}.exe --iterations 100000)
  set_tests_properties(pascal_${brisk_win}_objects_${manager} pascal_${brisk_win}_percall_${manager}
    PROPERTIES PASS_REGULAR_EXPRESSION "RESULT ok=1")
endforeach()
# BriskMM gives the line-splitting workload the results FPC's heap gives, at
# 1, 2 and 4 threads (the counts of RESULT, without the times and sizes).
if(BRISK_WINDOWS_RUNS_SKIPPED)
  # no Wine to run them: the emulator says so and the test is skipped
  add_test(NAME pascal_${brisk_win}_lines_same_results
    COMMAND ${wine} ${brisk_win64_bench}/lines_brisk.exe)
else()
  add_test(NAME pascal_${brisk_win}_lines_same_results
    COMMAND ${CMAKE_COMMAND} "-DWINE=${wine}" -DDATA=${data_dir}
      -DREFERENCE=${brisk_win64_bench}/lines_fpcheap.exe -DCANDIDATE=${brisk_win64_bench}/lines_brisk.exe
      -P ${PROJECT_SOURCE_DIR}/cmake/windows/same_results.cmake)
endif()
set_tests_properties(pascal_${brisk_win}_lines_same_results PROPERTIES
  FIXTURES_REQUIRED pascal_${brisk_win}_lines_data)
get_directory_property(brisk_all_tests TESTS)
foreach(test ${brisk_all_tests})
  if(test MATCHES "^pascal_${brisk_win}_(gen_|lines|objects|percall)")
    set_tests_properties(${test} PROPERTIES LABELS "pascal;windows" TIMEOUT 300)
  endif()
endforeach()

# Symbols later: a program built with line information (-gl) and a map
# (-Xm, written beside it) leaks; its report, written with
# BRISK_SYMBOLS_LATER=1, is named afterwards by `brisk symbolize` (Win64
# only: Wine's 32-bit side, where Win32 programs would run, is not there to
# prove it).
if(brisk_win STREQUAL "win64")
  # -OoNOSTACKFRAME: every routine keeps its frame, so that the stacks go
  # past the routines -O2 leaves without one
  brisk_fpc_win64(symbols_later ${brisk_pascal_tests}/symbols_later.pas ${brisk_win64_tests}
    -OoNOSTACKFRAME -gl -Xm)
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  add_test(NAME pascal_win64_symbols_later
    COMMAND ${Python3_EXECUTABLE} ${brisk_pascal_tests}/symbols_later_test.py ${PROJECT_SOURCE_DIR}
      ${brisk_win64_tests}/symbols_later.exe ${brisk_win64_tests}/symbols_later.map
      ${brisk_pascal_tests}/symbols_later.pas ${wine})
  set_tests_properties(pascal_win64_symbols_later PROPERTIES LABELS "pascal;windows;diag"
    TIMEOUT 300)
endif()
