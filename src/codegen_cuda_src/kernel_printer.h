// Prints one kernel: an `extern "C" __global__` function for a blockIdx loop nest.
#pragma once
#include <string>

#include "codegen_cuda_src/helpers.h"
#include "codegen_cuda_src/kernel_analysis.h"
#include "codegen_cuda_src/names.h"
#include "te/cuda.h"

namespace te::cuda {

struct KernelSource {
  std::string text;  // the function definition
  CudaKernel info;   // grid/block over host variables as analysed (before host lets are substituted)
};

// globals holds the module-level names (kernels, launcher) that locals must not shadow.
KernelSource print_kernel(const ForNode* root, const std::string& name, const KernelAnalysis& analysis,
                          const VarRanges& host_ranges, const NameTable& globals, HelperSet& helpers,
                          const CudaOptions& options);

}  // namespace te::cuda
