#include "codegen_cuda_src/target_arch.h"

#include <fmt/format.h>

#include "codegen_cuda_src/tensor_intrinsics.h"
#include "target/target_check.h"
#include "te/error.h"
#include "te/tensorize.h"

namespace te::cuda {

namespace {

std::string arch_text(const ArchNeed& need) { return fmt::format("sm_{}{}", need.number, need.specific ? "a" : ""); }

// Whether a GPU of architecture `a` runs instructions that need `need`: an arch-specific
// one exactly there, others from their compute capability on.
bool satisfies(const CudaArch& a, const ArchNeed& need) {
  if (need.number == 0) return true;
  return need.specific ? a.specific && a.number == need.number : a.number >= need.number;
}

CudaArch parsed(const std::string& arch) {
  std::optional<CudaArch> a = parse_cuda_arch(arch);
  if (!a)
    throw Error(
        fmt::format("build_cuda: CudaOptions::arch '{}' is not a CUDA architecture (sm_80, sm_90, sm_90a, ...)", arch));
  return *a;
}

}  // namespace

void check_arch(const LoweredFunc& f, const std::string& arch) {
  if (arch.empty()) return;
  const CudaArch a = parsed(arch);
  for (const TensorIntrinsicCallNode* n : tensor_intrinsic_calls(f)) {
    const ArchNeed need = arch_needed(n);
    if (!satisfies(a, need))
      throw Error(fmt::format(
          "build_cuda: function '{}' calls tensor intrinsic '{}' ({}), which needs {}{}, but the file is for {} "
          "(CudaOptions::arch), where only its slower portable path would run: build for {} or schedule without it",
          f.name, n->intrinsic->name, need.instruction, arch_text(need), need.specific ? "" : " or newer", arch,
          arch_text(need)));
  }
}

std::string arch_guard(const std::string& arch) {
  if (arch.empty()) return "";
  const CudaArch a = parsed(arch);
  const std::string condition =
      a.specific ? fmt::format("__CUDA_ARCH__ != {0}0 || !defined(__CUDA_ARCH_FEAT_SM{0}_ALL)", a.number)
                 : fmt::format("__CUDA_ARCH__ < {}0", a.number);
  return fmt::format(
      "// For {0} (CudaOptions::arch): nvcc -arch={0}.\n"
      "#if defined(__CUDA_ARCH__) && ({1})\n"
      "#error \"te generated this file for {0}{2}: compile it with -arch={0}\"\n"
      "#endif\n",
      arch, condition, a.specific ? "" : " or newer");
}

}  // namespace te::cuda
