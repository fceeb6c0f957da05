# One consumer test (tests/consumer/CMakeLists.txt): cmake -DMODE=... -P run_consumer.cmake
#   MODE=install       cmake --install the te build into PREFIX and check what is there
#   MODE=package|subdirectory|fetchcontent
#                      configure and build tests/consumer/app in BUILD_DIR that way, run
#                      its programs and check the generated kernels.
cmake_minimum_required(VERSION 3.20)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " line "${ARGN}")
    message(FATAL_ERROR "consumer ${MODE}: failed (${rc}): ${line}")
  endif()
endfunction()

# check("what is wrong" <if() condition>...): fails the test unless the condition holds.
function(check problem)
  if(NOT (${ARGN}))
    message(FATAL_ERROR "consumer ${MODE}: ${problem}")
  endif()
endfunction()

string(TIMESTAMP start "%s")

if(MODE STREQUAL "install")
  file(REMOVE_RECURSE "${PREFIX}")
  run(${CMAKE_COMMAND} --install "${TE_BINARY_DIR}" --prefix "${PREFIX}")
  file(GLOB libte "${PREFIX}/lib*/libte.so")
  file(GLOB runtime "${PREFIX}/lib*/libte_runtime.so")
  check("no libte.so under ${PREFIX}/lib*" libte)
  check("no libte_runtime.so under ${PREFIX}/lib*" runtime)
  get_filename_component(libdir "${libte}" DIRECTORY)
  foreach(f include/te/te.h include/te/export.h include/te/generator.h include/te/log.h
            include/te/runtime/c_runtime_api.h)
    check("${f} is not installed" EXISTS "${PREFIX}/${f}")
  endforeach()
  foreach(f cmake/te/teConfig.cmake cmake/te/teConfigVersion.cmake cmake/te/teTargets.cmake
            cmake/te/teKernels.cmake pkgconfig/te.pc pkgconfig/te-runtime.pc)
    check("${f} is not installed in ${libdir}" EXISTS "${libdir}/${f}")
  endforeach()
  if(EXPECT_MPI)
    check("libte_autotune_mpi.a is not installed in ${libdir}" EXISTS "${libdir}/libte_autotune_mpi.a")
    check("teAutotuneMpiTargets.cmake is not installed" EXISTS "${libdir}/cmake/te/teAutotuneMpiTargets.cmake")
    check("te/autotune/mpi.h is not installed" EXISTS "${PREFIX}/include/te/autotune/mpi.h")
  endif()
  file(GLOB_RECURSE internal "${PREFIX}/include/expr/*" "${PREFIX}/include/lower/*")
  check("internal headers are installed: ${internal}" NOT internal)

  # Only the API leaves the libraries: te::build is exported, te::codegen and
  # te::lowering (internal namespaces) are not.
  find_program(NM nm)
  if(NM)
    execute_process(COMMAND ${NM} -DC --defined-only "${libte}" OUTPUT_VARIABLE symbols
                    RESULT_VARIABLE rc)
    check("nm failed on ${libte}" rc EQUAL 0)
    string(REGEX MATCHALL "\n[0-9a-f]+ [TtWw] [^\n]*" exported "\n${symbols}")
    list(LENGTH exported count)
    message(STATUS "libte.so exports ${count} functions")
    check("te::build is not exported" symbols MATCHES "te::build\\(")
    foreach(internal "te::codegen::" "te::lowering::" "te::interp::" "te::simp::")
      string(FIND "${symbols}" "${internal}" at)
      check("libte.so exports internal symbols (${internal}...)" at EQUAL -1)
    endforeach()
  else()
    message(STATUS "no nm: the exported symbols are not checked")
  endif()
else()
  set(args -S "${APP_DIR}" -B "${BUILD_DIR}" -G "${GENERATOR}"
    -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_C_COMPILER=${CC}
    -DTE_CONSUMER_MODE=${MODE} -DTE_SOURCE_DIR=${TE_SOURCE_DIR} -DTE_CONSUMER_EXPECT_MPI=${EXPECT_MPI}
    # No optimization, no debug info: the quickest build (of te too, from source).
    -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O0" "-DCMAKE_C_FLAGS_DEBUG=-O0")
  if(MODE STREQUAL "package")
    list(APPEND args -DCMAKE_PREFIX_PATH=${PREFIX})
  else()
    # te's own tests, examples and benchmarks stay out (their default in a subproject).
    list(APPEND args -DTE_BUILD_TESTS=OFF -DTE_BUILD_EXAMPLES=OFF -DTE_BUILD_BENCHMARKS=OFF)
  endif()
  run(${CMAKE_COMMAND} ${args})
  run(${CMAKE_COMMAND} --build "${BUILD_DIR}" -j 2)
  run("${BUILD_DIR}/jit_vadd")
  run("${BUILD_DIR}/aot_app")
  if(EXPECT_MPI)
    check("the MPI consumer was not built" EXISTS "${BUILD_DIR}/mpi_tuner")
  endif()

  # The generated files: C headers with the prototypes, a .cu with the launcher.
  set(out "${BUILD_DIR}/kernels")
  file(READ "${out}/scaled_exp.h" header)
  check("scaled_exp.h lacks the prototype:\n${header}" header MATCHES "int32_t scaled_exp\\(float\\* X, float\\* Y, int32_t rows, int32_t cols, float alpha\\)")
  file(READ "${out}/vadd.cu" cu)
  check("vadd.cu lacks the launcher vadd_cuda" cu MATCHES "cudaError_t vadd_cuda\\(")
  check("vadd.cu has no kernel" cu MATCHES "__global__")
  file(READ "${out}/vadd_cuda.h" cuh)
  check("vadd_cuda.h lacks the launcher" cuh MATCHES "\ncudaError_t vadd_cuda\\(")
  check("vadd_cuda.h is not C and C++" cuh MATCHES "#ifdef __cplusplus\nextern \"C\" {")

  # aot_app links libte_runtime, not libte (no JIT, no LLVM).
  find_program(READELF readelf)
  if(READELF)
    execute_process(COMMAND ${READELF} -d "${BUILD_DIR}/aot_app" OUTPUT_VARIABLE dynamic)
    check("aot_app does not link libte_runtime" dynamic MATCHES "libte_runtime")
    check("aot_app links libte:\n${dynamic}" NOT dynamic MATCHES "libte\\.so")
  endif()

  # pkg-config: te.pc builds the same JIT program by hand.
  find_program(PKG_CONFIG pkg-config)
  if(MODE STREQUAL "package" AND PKG_CONFIG)
    file(GLOB pcdir "${PREFIX}/lib*/pkgconfig")
    set(ENV{PKG_CONFIG_PATH} "${pcdir}")
    execute_process(COMMAND ${PKG_CONFIG} --cflags --libs te OUTPUT_VARIABLE flags
                    RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
    check("pkg-config --cflags --libs te failed" rc EQUAL 0)
    separate_arguments(flags UNIX_COMMAND "${flags}")
    get_filename_component(libdir "${pcdir}" DIRECTORY)
    run(${CXX} -std=c++17 "${APP_DIR}/jit_vadd.cpp" ${flags} "-Wl,-rpath,${libdir}"
        -o "${BUILD_DIR}/jit_vadd_pkgconfig")
    run("${BUILD_DIR}/jit_vadd_pkgconfig")
  endif()
endif()

string(TIMESTAMP end "%s")
math(EXPR seconds "${end} - ${start}")
message(STATUS "consumer ${MODE}: passed in ${seconds} s")
