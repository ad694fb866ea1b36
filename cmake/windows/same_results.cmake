# SPDX-License-Identifier: MIT
# Runs two builds of the line-splitting workload (REFERENCE: FPC's own heap,
# CANDIDATE: BriskMM) at 1, 2 and 4 threads on the data in DATA and fails
# unless both verify their counts (RESULT ok=1) and report the same counts.
#   cmake -DWINE=<emulator> -DDATA=dir -DREFERENCE=a.exe -DCANDIDATE=b.exe -P same_results.cmake
function(result_of program threads out)
  execute_process(COMMAND ${WINE} ${program} --threads ${threads} --dir ${DATA}
    OUTPUT_VARIABLE output ERROR_VARIABLE errors RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT output MATCHES "RESULT ok=1 ([^\n]*)")
    message(FATAL_ERROR "${program} --threads ${threads}: exit ${rc}\n${output}${errors}")
  endif()
  # the counts, not the time and the memory
  string(REGEX REPLACE " (ms|peak_rss_kib)=[0-9]+" "" counts "${CMAKE_MATCH_1}")
  set(${out} "${counts}" PARENT_SCOPE)
endfunction()

foreach(threads 1 2 4)
  result_of(${REFERENCE} ${threads} reference)
  result_of(${CANDIDATE} ${threads} candidate)
  if(NOT reference STREQUAL candidate)
    message(FATAL_ERROR "${threads} threads: FPC heap: ${reference}\nBriskMM: ${candidate}")
  endif()
  message(STATUS "${threads} threads, both: ${candidate}")
endforeach()
