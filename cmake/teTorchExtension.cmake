# te_add_torch_extension(<name> SOURCES <file>...): a shared library of te operators for
# PyTorch (te/torch.h), which Python loads with torch.ops.load_library(path) (the path is
# $<TARGET_FILE:name>). Its sources register the operators in TE_TORCH_LIBRARY blocks. It
# links te::torch (te, te_torch and libtorch). Installed with te's package when te was
# built with libtorch: find_package(te) then provides te::torch and this function.
function(te_add_torch_extension name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES")
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "te_add_torch_extension(${name}): give its SOURCES")
  endif()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "te_add_torch_extension(${name}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET te::torch)
    message(FATAL_ERROR "te_add_torch_extension(${name}): te::torch is missing (te was built without libtorch; "
                        "Debian: libtorch-dev)")
  endif()
  # MODULE: a library loaded at run time (dlopen), never linked into a program.
  add_library(${name} MODULE ${arg_SOURCES})
  target_link_libraries(${name} PRIVATE te::torch)
  set_target_properties(${name} PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
endfunction()
