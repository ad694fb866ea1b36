# SPDX-License-Identifier: MIT
# Appends the members of the import libraries in IMPORTS (made by dlltool,
# one per DLL) to the static library ARCHIVE, then re-indexes it.
#   cmake -DAR=... -DARCHIVE=libbrisk.a -DIMPORTS=dir -P merge_imports.cmake
file(GLOB libraries ${IMPORTS}/*.a)
set(scratch ${IMPORTS}/members)
file(REMOVE_RECURSE ${scratch})
set(members "")
foreach(library ${libraries})
  get_filename_component(name ${library} NAME_WE)
  file(MAKE_DIRECTORY ${scratch}/${name})
  execute_process(COMMAND ${AR} x ${library} WORKING_DIRECTORY ${scratch}/${name}
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cannot extract ${library}")
  endif()
  file(GLOB objects ${scratch}/${name}/*.o)
  list(APPEND members ${objects})
endforeach()
if(NOT members)
  message(FATAL_ERROR "no import entries in ${IMPORTS}")
endif()
execute_process(COMMAND ${AR} qs ${ARCHIVE} ${members} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cannot add the import entries to ${ARCHIVE}")
endif()
