// compile_ptx(): the module's kernels through NVRTC, when te was built with it
// (cmake/cuda.cmake defines TE_HAVE_NVRTC and TE_CUDA_INCLUDE_DIR for this file only).
#include <fmt/format.h>

#include <cctype>
#include <memory>

#include "te/cuda.h"

#ifdef TE_HAVE_NVRTC
#include <nvrtc.h>
#endif

namespace te {

namespace {

// "sm_80" or "compute_80" -> "compute_80" (PTX is generated for a virtual architecture).
std::string virtual_arch(const std::string& arch) {
  for (const char* prefix : {"sm_", "compute_"}) {
    std::string p = prefix;
    if (arch.rfind(p, 0) != 0 || arch.size() == p.size()) continue;
    std::string rest = arch.substr(p.size());
    // Digits, then letters for arch-specific variants ("sm_90a").
    size_t digits = 0;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
    bool ok = digits > 0;
    for (size_t i = digits; i < rest.size(); ++i) ok &= std::isalpha(static_cast<unsigned char>(rest[i])) != 0;
    if (ok) return "compute_" + rest;
  }
  throw Error(
      fmt::format("compile_ptx: unknown GPU architecture '{}' (expected sm_XX or compute_XX, e.g. sm_80)", arch));
}

}  // namespace

bool nvrtc_available() {
#ifdef TE_HAVE_NVRTC
  return true;
#else
  return false;
#endif
}

std::string compile_ptx(const CudaModule& module, const std::string& arch,
                        const std::vector<std::string>& extra_options) {
  std::string target = virtual_arch(arch);
#ifndef TE_HAVE_NVRTC
  (void)module;
  (void)target;
  (void)extra_options;
  throw Error(
      "compile_ptx: te was built without NVRTC (CMake did not find the CUDA toolkit); compile the .cu "
      "file with nvcc instead");
#else
  auto check = [&](nvrtcResult r, const char* what) {
    if (r != NVRTC_SUCCESS)
      throw Error(fmt::format("compile_ptx: {} failed for '{}': {}", what, module.name(), nvrtcGetErrorString(r)));
  };
  nvrtcProgram prog = nullptr;
  std::string file = module.name() + ".cu";
  check(nvrtcCreateProgram(&prog, module.source().c_str(), file.c_str(), 0, nullptr, nullptr), "nvrtcCreateProgram");
  std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram*)> guard(&prog, [](nvrtcProgram* p) { nvrtcDestroyProgram(p); });

  std::vector<std::string> options = {"--gpu-architecture=" + target, "-std=c++17"};
#ifdef TE_CUDA_INCLUDE_DIR
  options.push_back(std::string("-I") + TE_CUDA_INCLUDE_DIR);  // cuda_fp16.h
#endif
  options.insert(options.end(), extra_options.begin(), extra_options.end());
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());

  nvrtcResult compiled = nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  size_t log_size = 0;
  check(nvrtcGetProgramLogSize(prog, &log_size), "nvrtcGetProgramLogSize");
  std::string log(log_size, '\0');
  if (log_size) check(nvrtcGetProgramLog(prog, &log[0]), "nvrtcGetProgramLog");
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  if (compiled != NVRTC_SUCCESS)
    throw Error(fmt::format("compile_ptx: NVRTC could not compile '{}' for {} ({}):\n{}", module.name(), arch,
                            nvrtcGetErrorString(compiled), log));
  size_t ptx_size = 0;
  check(nvrtcGetPTXSize(prog, &ptx_size), "nvrtcGetPTXSize");
  std::string ptx(ptx_size, '\0');
  check(nvrtcGetPTX(prog, &ptx[0]), "nvrtcGetPTX");
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  return ptx;
#endif
}

}  // namespace te
