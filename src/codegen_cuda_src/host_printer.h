// Splits a LoweredFunc into kernels and the host launcher that runs them.
#pragma once
#include <string>
#include <vector>

#include "codegen_cuda_src/helpers.h"
#include "codegen_cuda_src/names.h"
#include "te/cuda.h"

namespace te::cuda {

struct HostProgram {
  std::string launcher_name;
  std::vector<CudaParam> launcher_params;
  std::string launcher_text;              // the launcher's definition
  std::vector<std::string> kernel_texts;  // in launch order
  std::vector<CudaKernel> kernels;
};

// Walks f's body: every loop bound to blockIdx that is not inside another becomes a
// kernel; the statements around them become the launcher. Throws te::Error for what
// cannot run on a GPU (see build_cuda in te/cuda.h).
HostProgram split_host_and_kernels(const LoweredFunc& f, const CudaOptions& options, HelperSet& helpers);

}  // namespace te::cuda
