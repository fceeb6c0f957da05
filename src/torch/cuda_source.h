// The CUDA kernels of an operator: te's CUDA C for its forward and backward, with the
// entry point that the extension's table calls (te/torch_cuda_kernels.h). The generator
// writes them at build time; registration makes them again and compares the hashes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "te/cuda.h"
#include "torch/op_definition.h"

namespace te::torch::detail {

// One kernel: te's launcher and kernels for the op's forward or backward.
struct CudaKernelSource {
  std::string op;      // "ns::op" or "ns::op_backward": the table's key
  std::string c_name;  // "ns_op" or "ns_op_backward": its .cu file's name
  std::string entry;   // the entry point's C name: "te_torch_launch_ns_op"
  LoweredFunc func;    // its parameters: the buffers (arguments, then results)
  CudaModule module;
  uint64_t hash = 0;  // fnv1a(module.source())
};

// What an operator has on CUDA.
struct OpCudaKernels {
  std::optional<CudaKernelSource> forward;
  std::optional<CudaKernelSource> backward;  // where the op has a gradient that CUDA can schedule
  std::string no_backward_reason;            // why backward is empty (when forward is set)
};

// Whether the definition asks for a CUDA kernel (OpDef::cuda or schedule_cuda).
bool wants_cuda(const OpDef& def);

// The CUDA kernels of op (te::Error from fail() when its forward, or a backward the user
// scheduled, cannot be built; a backward that auto_schedule cannot schedule is left out).
OpCudaKernels cuda_kernels_of(const OpDefinition& op, const OpDef& def);

// FNV-1a, 64 bits: a hash that is the same in every process and build.
uint64_t fnv1a(const std::string& text);

// The .cu file of a kernel: te's module, then the entry point the table calls.
std::string cuda_file_text(const CudaKernelSource& k);

}  // namespace te::torch::detail
