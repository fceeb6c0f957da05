// What the CPU rules need to know about the host: vector width, vector registers, caches
// and threads. Read from te's own target query (host_cpu_features) and the system.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

#include "te/dtype.h"

namespace te::auto_sched {

struct CpuTarget {
  int vector_bits = 128;     // the widest vector the host computes on
  int vector_registers = 16;  // architectural vector registers
  int64_t l1_bytes = 32 << 10;   // per-core data cache
  int64_t l2_bytes = 512 << 10;  // per-core L2
  int threads = 1;               // work items the parallel loops are made for

  // Lanes of one vector of t (at least 1).
  int lanes(DataType t) const { return t.bits() >= 8 ? std::max(1, vector_bits / t.bits()) : 1; }
  // Vector accumulators a register tile may keep (the rest hold loads and broadcasts).
  int accumulators() const { return vector_registers >= 32 ? 16 : 12; }
};

// The host, from LLVM's view of its features ("+avx512f", "+avx", "+neon", ...) and
// /sys's cache sizes; `threads` 0 means te's thread pool size.
// vector_bits > 0 replaces the host's vector width (and the register count it implies).
CpuTarget host_target(int threads, int vector_bits);

// The vector width and register count that a feature string ("+avx2,+fma,...") implies.
void vector_unit_of(const std::string& features, int* bits, int* registers);

}  // namespace te::auto_sched
