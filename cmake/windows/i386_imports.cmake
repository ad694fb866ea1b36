# SPDX-License-Identifier: MIT
# 32-bit Windows: what libbrisk.a needs besides brisk's objects, made from
# the archive's own undefined symbols.
# - Each cmake/windows/DLL.def again with the names decorated as the objects
#   call them (stdcall's Name@N: kernel32's and bcrypt's functions), for
#   dlltool --kill-at, which imports them by their plain names.
# - libgcc_part.a: the members of libgcc.a that define the helpers the
#   objects call (64-bit division, counting zero bits), so that a Free
#   Pascal program links with no library of gcc's.
#   cmake -DNM=... -DAR=... -DARCHIVE=libbrisk.a -DLIBGCC=libgcc.a -DDEFS=a.def,b.def
#         -DOUT=dir -P i386_imports.cmake
string(REPLACE "," ";" DEFS "${DEFS}")
execute_process(COMMAND ${NM} ${ARCHIVE} OUTPUT_VARIABLE listing RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} ${ARCHIVE} failed")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(used "")
set(defined "")
foreach(line ${lines})
  if(line MATCHES "^ +U (.+)$")
    list(APPEND used ${CMAKE_MATCH_1})
  elseif(line MATCHES "^[0-9a-f]+ [A-Z] (.+)$")
    list(APPEND defined ${CMAKE_MATCH_1})
  endif()
endforeach()
list(REMOVE_DUPLICATES used)
if(defined)
  list(REMOVE_ITEM used ${defined})
endif()

# --- decorated .def files ------------------------------------------------------------
foreach(def ${DEFS})
  get_filename_component(name ${def} NAME)
  file(STRINGS ${def} def_lines)
  set(text "")
  foreach(line ${def_lines})
    set(function "")
    if(line MATCHES "^[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*$")
      set(function ${CMAKE_MATCH_1})
    endif()
    if(function AND NOT function STREQUAL "EXPORTS")
      set(decorated ${function})
      foreach(symbol ${used})
        if(symbol MATCHES "^_(_imp__)?${function}(@[0-9]+)$")
          set(decorated ${function}${CMAKE_MATCH_2})
        endif()
      endforeach()
      string(APPEND text "${decorated}\n")
    else()
      string(APPEND text "${line}\n")
    endif()
  endforeach()
  file(WRITE ${OUT}/${name} "${text}")
endforeach()

# --- libgcc's helpers ------------------------------------------------------------------
execute_process(COMMAND ${NM} -A --defined-only ${LIBGCC} OUTPUT_VARIABLE gcc_listing
  RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} ${LIBGCC} failed")
endif()
string(REPLACE "\n" ";" gcc_lines "${gcc_listing}")
set(members "")
foreach(line ${gcc_lines})
  # libgcc.a:_udivdi3.o:00000000 T ___udivdi3
  if(line MATCHES "^[^:]+:([^:]+):[0-9a-f]+ T (.+)$")
    list(FIND used ${CMAKE_MATCH_2} index)
    if(index GREATER -1)
      list(APPEND members ${CMAKE_MATCH_1})
    endif()
  endif()
endforeach()
list(REMOVE_DUPLICATES members)
if(members)
  set(scratch ${OUT}/libgcc-members)
  file(REMOVE_RECURSE ${scratch})
  file(MAKE_DIRECTORY ${scratch})
  execute_process(COMMAND ${AR} x ${LIBGCC} ${members} WORKING_DIRECTORY ${scratch} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cannot extract ${members} from ${LIBGCC}")
  endif()
  execute_process(COMMAND ${AR} qc ${OUT}/libgcc_part.a ${members} WORKING_DIRECTORY ${scratch}
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cannot write ${OUT}/libgcc_part.a")
  endif()
endif()
