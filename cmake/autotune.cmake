# The auto-tuner (src/autotune, globbed into libte): the LLVM version its records carry,
# and the optional MPI scale-out (te::autotune_mpi, its worker test).
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/autotune/target_info.cpp PROPERTIES
  COMPILE_DEFINITIONS "TE_AUTOTUNE_LLVM_VERSION=\"${LLVM_PACKAGE_VERSION}\"")

# Optional MPI scale-out: te_autotune_mpi (rank 0 tunes, the other ranks measure).
# -DTE_AUTOTUNE_MPI=OFF skips it; without MPI (Debian: libopenmpi-dev openmpi-bin) it is
# skipped with a message and tests/test_autotune_mpi.cpp skips its test.
option(TE_AUTOTUNE_MPI "Build the MPI scale-out of the auto-tuner when MPI is found" ON)
if(TE_AUTOTUNE_MPI)
  find_package(MPI COMPONENTS CXX QUIET)
endif()
if(TE_AUTOTUNE_MPI AND MPI_CXX_FOUND AND MPIEXEC_EXECUTABLE)
  message(STATUS "te: MPI ${MPI_CXX_VERSION} found: te_autotune_mpi (tuning over MPI ranks)")
  add_library(te_autotune_mpi STATIC ${PROJECT_SOURCE_DIR}/src/autotune/mpi/mpi_tune.cpp)
  add_library(te::autotune_mpi ALIAS te_autotune_mpi)
  target_link_libraries(te_autotune_mpi PUBLIC te::te MPI::MPI_CXX)
  target_compile_options(te_autotune_mpi PRIVATE ${TE_WARNINGS})
  # Installed as te::autotune_mpi in its own export set: teConfig.cmake loads it only
  # where the consumer's CMake finds MPI too (find_package(te COMPONENTS autotune_mpi)).
  set_target_properties(te_autotune_mpi PROPERTIES EXPORT_NAME autotune_mpi POSITION_INDEPENDENT_CODE ON)
  install(TARGETS te_autotune_mpi EXPORT teAutotuneMpiTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT teAutotuneMpiTargets NAMESPACE te:: DESTINATION ${TE_INSTALL_CMAKEDIR})
  if(TARGET test_autotune_mpi)
    target_link_libraries(test_autotune_mpi PRIVATE te_autotune_mpi)
    target_compile_definitions(test_autotune_mpi PRIVATE TE_AUTOTUNE_MPI
                                                         TE_AUTOTUNE_MPIEXEC="${MPIEXEC_EXECUTABLE}")
    # Label the discovered test "mpi" (ctest -LE mpi skips it, e.g. under ASan).
    # (test_autotune_mpi_TESTS is set by the discovered tests' file when the test was built.)
    file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/te_autotune_mpi_labels.cmake
         "if(\"\${test_autotune_mpi_TESTS}\" MATCHES \"AutotuneMpi[.]ThreeRanks\")\n"
         "  set_tests_properties(AutotuneMpi.ThreeRanks PROPERTIES LABELS mpi)\nendif()\n")
    set_property(DIRECTORY ${PROJECT_SOURCE_DIR}/tests APPEND PROPERTY TEST_INCLUDE_FILES
                 ${CMAKE_CURRENT_BINARY_DIR}/te_autotune_mpi_labels.cmake)
  endif()
elseif(TE_AUTOTUNE_MPI)
  message(STATUS "te: MPI not found (Debian: libopenmpi-dev openmpi-bin): no te_autotune_mpi, its test skips")
endif()
