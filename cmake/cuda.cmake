# Optional CUDA toolkit support for the CUDA C source backend (src/codegen_cuda_src).
# build_cuda() itself needs nothing of CUDA; with the toolkit, compile_ptx() uses NVRTC
# and the tests compile every emitted kernel with nvcc. Include this file after the
# `te` target and the tests are defined.
find_package(CUDAToolkit QUIET)

set(TE_CUDA_NVRTC_SOURCE ${CMAKE_CURRENT_LIST_DIR}/../src/codegen_cuda_src/nvrtc.cpp)
get_filename_component(TE_CUDA_NVRTC_SOURCE ${TE_CUDA_NVRTC_SOURCE} ABSOLUTE)

if(CUDAToolkit_FOUND AND CUDA_nvrtc_LIBRARY)
  list(GET CUDAToolkit_INCLUDE_DIRS 0 TE_CUDA_INCLUDE_DIR)
  message(STATUS "te: CUDA toolkit ${CUDAToolkit_VERSION}: compile_ptx() uses NVRTC; nvcc is ${CUDAToolkit_NVCC_EXECUTABLE}")
  # The library itself, not CUDA::nvrtc: that target also links the driver (libcuda.so.1),
  # which machines without a GPU do not have, and NVRTC does not need it.
  target_link_libraries(te PRIVATE ${CUDA_nvrtc_LIBRARY})
  # Only nvrtc.cpp sees the CUDA headers.
  set_property(SOURCE ${TE_CUDA_NVRTC_SOURCE} APPEND PROPERTY COMPILE_DEFINITIONS
    TE_HAVE_NVRTC=1 TE_CUDA_INCLUDE_DIR="${TE_CUDA_INCLUDE_DIR}")
  set_property(SOURCE ${TE_CUDA_NVRTC_SOURCE} APPEND PROPERTY INCLUDE_DIRECTORIES ${CUDAToolkit_INCLUDE_DIRS})
else()
  message(STATUS "te: no CUDA toolkit with NVRTC: compile_ptx() throws; tests skip the NVRTC checks")
endif()

# The CUDA tests compile generated code at run time: they need the host compiler, and
# nvcc when there is one.
foreach(test_target test_cuda_codegen test_cuda_emulation test_cuda_nvcc test_cuda_lowered test_grid_sample_cuda
    test_auto_schedule_cuda)
  if(TARGET ${test_target})
    target_compile_definitions(${test_target} PRIVATE TE_HOST_CXX="${CMAKE_CXX_COMPILER}")
    if(CUDAToolkit_FOUND AND CUDAToolkit_NVCC_EXECUTABLE)
      target_compile_definitions(${test_target} PRIVATE TE_NVCC="${CUDAToolkit_NVCC_EXECUTABLE}")
    endif()
  endif()
endforeach()

# examples/offline_nvcc: te writes .cu files at build time, nvcc compiles them into a
# program. Built when CMake can compile CUDA here, and not with the sanitizers (nvcc
# does not take them).
if(TE_BUILD_EXAMPLES AND CUDAToolkit_FOUND AND NOT TE_SANITIZE)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/../examples/offline_nvcc ${CMAKE_BINARY_DIR}/examples/offline_nvcc)
  else()
    message(STATUS "te: CMake cannot compile CUDA here: examples/offline_nvcc is not built")
  endif()
endif()
