# SPDX-License-Identifier: MIT
# Fails when the Windows libbrisk.a uses a symbol it does not define: such a
# symbol would need a MinGW library (libgcc's ___chkstk_ms, libmingwex's
# printf, an import library) that a Free Pascal or Delphi program cannot link.
#   cmake -DNM=x86_64-w64-mingw32-nm -DARCHIVE=libbrisk.a -P check_imports.cmake
execute_process(COMMAND ${NM} ${ARCHIVE} OUTPUT_VARIABLE listing ERROR_QUIET
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} ${ARCHIVE} failed")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(defined "")
set(used "")
foreach(line ${lines})
  if(line MATCHES "^ +U (.+)$")
    list(APPEND used ${CMAKE_MATCH_1})
  elseif(line MATCHES "^[0-9a-f]+ [TDBRCI] (.+)$")
    list(APPEND defined ${CMAKE_MATCH_1})
  endif()
endforeach()
list(REMOVE_DUPLICATES used)
list(REMOVE_ITEM used ${defined})
list(LENGTH defined defined_count)
if(used)
  list(JOIN used " " missing)
  message(FATAL_ERROR "libbrisk.a uses symbols it does not define: ${missing}")
endif()
message(STATUS "libbrisk.a defines every symbol it uses (${defined_count} symbols)")
