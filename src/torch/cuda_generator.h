// The CUDA generator's side of Library (cuda_generator.cpp).
#pragma once
#include <string>
#include <vector>

#include "torch/cuda_source.h"

namespace te::torch::detail {

// Collects the CUDA kernels of the operators that Library::def defines in generator mode.
class CudaGenerator {
 public:
  // The definition checked as register_op checks it, and its CUDA kernels kept; nothing
  // is registered with PyTorch.
  OpInfo def(const std::string& qualified_name, const OpDef& def);
  std::vector<CudaKernelSource> kernels;  // in definition order
};

// Keeps a TE_TORCH_LIBRARY block for cuda_generator_main (LibraryMode::GenerateCuda).
void record_library(const char* ns, void (*init)(Library&), const char* file, int line);

}  // namespace te::torch::detail
