# te::torch (te/torch.h, src/torch): te kernels as PyTorch operators. A library of its own,
# built when libtorch is found (Debian: libtorch-dev); te itself never depends on it.
# Not in sanitizer builds: libtorch and Python are not built with the sanitizers. Pulled into
# another project (add_subdirectory, FetchContent), te builds it when asked: -DTE_WITH_TORCH=ON.
option(TE_WITH_TORCH "Build te_torch (te kernels as PyTorch operators) when libtorch is found" ${TE_IS_TOP_LEVEL})
set(TE_TORCH_FOUND OFF)
if(TE_WITH_TORCH AND NOT TE_SANITIZE)
  find_package(Torch CONFIG QUIET)
endif()
if(Torch_FOUND)
  set(TE_TORCH_FOUND ON)
  message(STATUS "te: libtorch ${Torch_VERSION} found: building te_torch (te/torch.h)")
  file(GLOB TE_TORCH_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/../src/torch/*.cpp)
  add_library(te_torch SHARED ${TE_TORCH_SOURCES})
  add_library(te::torch ALIAS te_torch)
  # libtorch's headers come from an imported target: system headers, out of -Werror's reach.
  target_link_libraries(te_torch PUBLIC te ${TORCH_LIBRARIES})
  target_include_directories(te_torch PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../src)
  # A CUDA libtorch: the CUDA kernels launch on PyTorch's current stream (c10_cuda).
  if(TARGET c10_cuda)
    target_compile_definitions(te_torch PRIVATE TE_TORCH_WITH_CUDA=1)
    target_link_libraries(te_torch PRIVATE c10_cuda)
  elseif(TE_BUILD_TESTS AND EXISTS /usr/include/c10/cuda/CUDAStream.h)
    # A CPU-only libtorch (Debian's) ships c10's CUDA headers but not c10_cuda: compile the
    # CUDA libtorch's side of cuda_stream.cpp anyway, so that it cannot rot unseen (its
    # generated cuda_cmake_macros.h is missing there: an empty one stands in).
    find_package(CUDAToolkit QUIET)
    if(CUDAToolkit_FOUND)
      set(shim ${CMAKE_BINARY_DIR}/te_torch_cuda_shim)
      file(WRITE ${shim}/c10/cuda/impl/cuda_cmake_macros.h "#pragma once\n")
      add_library(te_torch_cuda_stream_check OBJECT ${CMAKE_CURRENT_LIST_DIR}/../src/torch/cuda_stream.cpp)
      target_compile_definitions(te_torch_cuda_stream_check PRIVATE TE_TORCH_WITH_CUDA=1)
      target_include_directories(te_torch_cuda_stream_check PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../src ${shim})
      target_include_directories(te_torch_cuda_stream_check SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
      target_link_libraries(te_torch_cuda_stream_check PRIVATE te ${TORCH_LIBRARIES})
      target_compile_options(te_torch_cuda_stream_check PRIVATE ${TE_WARNINGS})
    endif()
  endif()
  target_compile_options(te_torch PRIVATE ${TE_WARNINGS})
  set_target_properties(te_torch PROPERTIES ${TE_LIBRARY_PROPERTIES} EXPORT_NAME torch INSTALL_RPATH "$ORIGIN")
  include(${CMAKE_CURRENT_LIST_DIR}/teTorchExtension.cmake)
  # `cmake --install` installs it, in an export set of its own that teConfig.cmake loads
  # when present. Component "torch": the Debian packages (runtime, dev) leave it out, so
  # they do not depend on libtorch.
  install(TARGETS te_torch EXPORT teTorchTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT torch)
  install(EXPORT teTorchTargets NAMESPACE te:: DESTINATION ${TE_INSTALL_CMAKEDIR} COMPONENT torch)
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/teTorchExtension.cmake ${CMAKE_CURRENT_LIST_DIR}/teTorchCudaArchive.cmake
    DESTINATION ${TE_INSTALL_CMAKEDIR} COMPONENT torch)
elseif(TE_WITH_TORCH AND NOT TE_SANITIZE)
  message(STATUS "te: libtorch not found (Debian: libtorch-dev): te_torch and its tests are not built")
endif()
