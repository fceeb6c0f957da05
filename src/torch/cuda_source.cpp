#include "torch/cuda_source.h"

#include <fmt/format.h>

#include "te/log.h"

namespace te::torch::detail {
namespace {

CudaKernelSource make_source(const std::string& op, const std::string& c_name, const Schedule& s,
                             const std::vector<Tensor>& args, const CudaOptions& options) {
  CudaKernelSource k;
  k.op = op;
  k.c_name = c_name;
  k.entry = "te_torch_launch_" + c_name;
  k.func = lower_kernel(s, args, c_name);
  k.module = build_cuda(k.func, options);
  k.hash = fnv1a(k.module.source());
  return k;
}

// A launcher parameter's type as a cast: "float*" stays, "const float* __restrict__" loses
// its qualifier.
std::string cast_type(const std::string& c_type) {
  const std::string restrict_ = " __restrict__";
  std::string t = c_type;
  if (size_t at = t.find(restrict_); at != std::string::npos) t.erase(at, restrict_.size());
  return t;
}

}  // namespace

bool wants_cuda(const OpDef& def) { return def.cuda || static_cast<bool>(def.schedule_cuda); }

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

OpCudaKernels cuda_kernels_of(const OpDefinition& op, const OpDef& def) {
  OpCudaKernels out;
  try {
    Schedule s = schedule_kernel(op.name, "forward", "schedule_cuda", Target("cuda"), def.outputs, def.schedule_cuda);
    out.forward = make_source(op.name, op.c_name, s, op.forward_args, def.cuda_options);
  } catch (const Error& e) {
    fail(op.name, std::string("the CUDA kernel: ") + e.what());
  }
  if (op.adjoints.empty()) {
    out.no_backward_reason = op.no_gradient_reason;
    return out;
  }
  const std::string backward = op.name + "_backward";
  std::function<void(Schedule&)> schedule;
  if (def.schedule_backward_cuda) schedule = [&](Schedule& s) { def.schedule_backward_cuda(s, op.adjoints); };
  try {
    Schedule s = schedule_kernel(op.name, "backward", "schedule_backward_cuda", Target("cuda"), op.adjoints, schedule);
    out.backward = make_source(backward, op.c_name + "_backward", s, op.backward_args, def.cuda_options);
  } catch (const Error& e) {
    // The user's schedule: its failure is the registration's. te's own: the backward runs
    // on the CPU only, and says why on CUDA tensors.
    if (def.schedule_backward_cuda) fail(op.name, std::string("the CUDA backward kernel: ") + e.what());
    out.no_backward_reason = std::string("te cannot build its CUDA backward kernel: ") + e.what();
    log_message(LogLevel::Warn, "te::torch::register_op('" + op.name + "'): " + out.no_backward_reason);
  }
  return out;
}

std::string cuda_file_text(const CudaKernelSource& k) {
  std::string buffers, values;
  std::vector<std::string> args;
  size_t buffer = 0, value = 0;
  for (const CudaParam& p : k.module.launcher_params()) {
    if (p.is_buffer())
      args.push_back(fmt::format("({})buffers[{}]", cast_type(p.c_type), buffer++));
    else
      args.push_back(fmt::format("({})values[{}]", p.c_type, value++));
  }
  args.push_back("(cudaStream_t)stream");
  return k.module.source() +
         fmt::format(
             "\n#ifndef __CUDACC_RTC__\n"
             "// te::torch's entry point for {0}: the launcher's arguments from arrays (the buffers'\n"
             "// device pointers, then the shape variables), on the device of the tensors.\n"
             "extern \"C\" int {1}(void* const* buffers, const int64_t* values, int device, void* stream) {{\n"
             "  (void)values;\n"
             "  cudaError_t error = cudaSetDevice(device);\n"
             "  if (error != cudaSuccess) return (int)error;\n"
             "  return (int){2}({3});\n"
             "}}\n"
             "#endif  // __CUDACC_RTC__\n",
             k.op, k.entry, k.module.name(), fmt::join(args, ", "));
}

}  // namespace te::torch::detail
