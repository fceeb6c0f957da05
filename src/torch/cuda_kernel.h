// The CUDA kernel of a registered operator: what it does at each call (the inputs
// checked, the shape variables bound, the outputs allocated on the inputs' device, the
// compiled launcher called on PyTorch's current stream).
#pragma once
#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <string>
#include <vector>

#include "te/cuda.h"
#include "te/ir.h"
#include "te/torch_cuda_kernels.h"

namespace te::torch::detail {

struct CudaKernel {
  std::string op_name;                 // "ns::op" or "ns::op_backward": the errors' prefix
  std::vector<std::string> arg_names;  // the schema's arguments, in order
  std::vector<Buffer> inputs;          // the kernel's parameters: the arguments' buffers ...
  std::vector<Buffer> outputs;         // ... then the results'
  std::vector<Var> values;             // the launcher's scalar parameters, in order
  const te_torch_cuda_kernel* entry = nullptr;
  const te_torch_cuda_kernels* table = nullptr;
};

// The kernel of func (lowered with the arguments first), launched through entry.
CudaKernel make_cuda_kernel(const std::string& op_name, const std::vector<std::string>& arg_names,
                            const LoweredFunc& func, const std::vector<CudaParam>& launcher_params,
                            const te_torch_cuda_kernel* entry, const te_torch_cuda_kernels* table);

// Runs k on args (tensors on devices of `device_type`: CUDA, or the CPU for kernels
// compiled against the emulation). c10::Error naming the operator and the argument.
std::vector<at::Tensor> run_cuda_kernel(const CudaKernel& k, c10::ArrayRef<c10::IValue> args,
                                        c10::DeviceType device_type);

// PyTorch's current CUDA stream on a device (a cudaStream_t): cuda_stream.cpp, where
// te_torch was built with a CUDA libtorch; elsewhere a c10::Error.
void* current_cuda_stream(c10::DeviceIndex device);

}  // namespace te::torch::detail
