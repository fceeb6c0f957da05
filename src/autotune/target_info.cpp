// Targets and the host as tuning records name them. TE_AUTOTUNE_LLVM_VERSION comes from
// CMake (cmake/autotune.cmake): LLVM's headers stay in src/codegen_llvm.
#include <fmt/format.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "te/autotune/records.h"
#include "te/build.h"

#ifndef TE_AUTOTUNE_LLVM_VERSION
#define TE_AUTOTUNE_LLVM_VERSION "unknown"
#endif

namespace te::autotune {

namespace {
uint32_t fnv1a(const std::string& s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}
}  // namespace

std::string llvm_version() { return TE_AUTOTUNE_LLVM_VERSION; }

std::string target_string(const Target& target) {
  if (!target.is_llvm()) return target.str();  // nothing for LLVM to resolve
  const Target resolved = resolved_target(target);
  // The features are long; their hash tells two hosts with the same CPU name apart.
  std::string text =
      fmt::format("{} -mcpu={} features={:08x}", resolved.triple, resolved.cpu, fnv1a(resolved.features));
  if (target.vector_bits > 0) text += fmt::format(" -vector-bits={}", target.vector_bits);
  return text;
}

std::string host_target_string() {
  static const std::string host = target_string(Target());
  return host;
}

std::string host_cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "unknown" : line.substr(start);
  }
  return "unknown";
}

}  // namespace te::autotune
