# Runs Doxygen on include/te with WARN_IF_UNDOCUMENTED and fails on any warning, listing
# them (docs/CMakeLists.txt registers this as a test when Doxygen is installed).
get_filename_component(out_dir ${WARNINGS} DIRECTORY)
file(MAKE_DIRECTORY ${out_dir})
file(REMOVE ${WARNINGS})
execute_process(COMMAND ${DOXYGEN} ${DOXYFILE} WORKING_DIRECTORY ${ROOT}
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "doxygen failed (${rc}): ${err}")
endif()
file(READ ${WARNINGS} warnings)
if(NOT warnings STREQUAL "")
  message(FATAL_ERROR "Doxygen warnings in include/te (every public declaration needs a /// comment):\n${warnings}")
endif()
message(STATUS "every public declaration of include/te is documented")
