// The target as the rules see it: the CPU, and which tensor cores the GPU has.
#include "auto_schedule/target.h"

#include <fstream>
#include <optional>
#include <string>

#include <unistd.h>

#include "target/target_check.h"
#include "te/build.h"
#include "te/runtime/c_runtime_api.h"

namespace te::auto_sched {

namespace {

// A size from /sys ("48K", "2048K", "1M"), or -1.
int64_t parse_size(const std::string& text) {
  if (text.empty()) return -1;
  size_t pos = 0;
  int64_t v = 0;
  try {
    v = std::stoll(text, &pos);
  } catch (...) {
    return -1;
  }
  char unit = pos < text.size() ? text[pos] : ' ';
  if (unit == 'K') v <<= 10;
  if (unit == 'M') v <<= 20;
  return v;
}

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

CpuTarget cpu_target(const Target& target, int threads) {
  // A cuda target's rules need no CPU: the host's numbers fill the struct.
  const Target resolved = resolved_target(target.is_cuda() ? Target() : target);
  CpuTarget t;
  t.vector_bits = resolved.vector_bits;
  // AVX-512 and AArch64 (NEON, SVE) have 32 vector registers; SSE and AVX 16.
  const bool aarch64 = resolved.triple.rfind("aarch64", 0) == 0 || resolved.triple.rfind("arm64", 0) == 0;
  t.vector_registers = t.vector_bits >= 512 || aarch64 ? 32 : 16;
  // The caches are this machine's (a foreign CPU's are not known to te).
  const std::string base = "/sys/devices/system/cpu/cpu0/cache/index";
  for (int i = 0; i < 8; ++i) {
    std::string level = read_line(base + std::to_string(i) + "/level");
    if (level.empty()) break;
    std::string type = read_line(base + std::to_string(i) + "/type");
    int64_t size = parse_size(read_line(base + std::to_string(i) + "/size"));
    if (size <= 0) continue;
    if (level == "1" && type != "Instruction") t.l1_bytes = size;
    if (level == "2") t.l2_bytes = size;
  }
  // Some VMs list no caches under /sys; glibc's sysconf reads them from cpuid then (the
  // defaults, a smaller CPU's, would cut GEMM panels to a third of the L2 this one has).
#ifdef _SC_LEVEL2_CACHE_SIZE
  if (read_line(base + "0/level").empty()) {
    const long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l1 > 0) t.l1_bytes = l1;
    if (l2 > 0) t.l2_bytes = l2;
  }
#endif
  t.threads = threads > 0 ? threads : std::max(1, static_cast<int>(te_num_threads()));
  return t;
}

bool has_mma_sync(const Target& target) {
  const std::optional<CudaArch> arch = parse_cuda_arch(target.arch);
  return target.is_cuda() && (!arch || arch->number >= 80);
}

bool has_wgmma(const Target& target) {
  const std::optional<CudaArch> arch = parse_cuda_arch(target.arch);
  return target.is_cuda() && arch && arch->number == 90 && arch->specific;
}

}  // namespace te::auto_sched
