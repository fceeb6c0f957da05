// The host CPU as the rules see it.
#include "auto_schedule/target.h"

#include <fstream>
#include <sstream>
#include <string>

#include "te/build.h"
#include "te/runtime/c_runtime_api.h"

namespace te::auto_sched {

namespace {

bool has_feature(const std::string& features, const std::string& name) {
  std::stringstream in(features);
  std::string item;
  while (std::getline(in, item, ','))
    if (item == "+" + name) return true;
  return false;
}

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

void vector_unit_of(const std::string& features, int* bits, int* registers) {
  // The order matters: AVX-512 hosts also list +avx2 and +sse2.
  if (has_feature(features, "avx512f")) {
    *bits = 512, *registers = 32;
  } else if (has_feature(features, "avx")) {
    *bits = 256, *registers = 16;
  } else if (has_feature(features, "neon") || has_feature(features, "sve")) {
    *bits = 128, *registers = 32;
  } else {
    *bits = 128, *registers = 16;  // SSE2 and anything unknown: the common base
  }
}

CpuTarget host_target(int threads, int vector_bits) {
  CpuTarget t;
  vector_unit_of(host_cpu_features(), &t.vector_bits, &t.vector_registers);
  if (vector_bits > 0) {
    t.vector_bits = vector_bits;
    t.vector_registers = vector_bits >= 512 ? 32 : 16;
  }
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
  t.threads = threads > 0 ? threads : std::max(1, static_cast<int>(te_num_threads()));
  return t;
}

}  // namespace te::auto_sched
