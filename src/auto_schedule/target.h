// What the rules need to know about the target: the CPU's vector width, vector registers,
// caches and threads (read from te's own target query, resolved_target, and the system);
// the GPU's tensor cores.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

#include "te/dtype.h"
#include "te/target.h"

namespace te::auto_sched {

struct CpuTarget {
  int vector_bits = 128;         // the widest vector the host computes on
  int vector_registers = 16;     // architectural vector registers
  int64_t l1_bytes = 32 << 10;   // per-core data cache
  int64_t l2_bytes = 512 << 10;  // per-core L2
  int threads = 1;               // work items the parallel loops are made for

  // Lanes of one vector of t (at least 1).
  int lanes(DataType t) const { return t.bits() >= 8 ? std::max(1, vector_bits / t.bits()) : 1; }
  // Vector accumulators a register tile may keep (the rest hold loads and broadcasts).
  int accumulators() const { return vector_registers >= 32 ? 16 : 12; }
};

// The CPU of target (resolved_target: the host's for "llvm"; the host's numbers for a
// cuda target) with /sys's cache sizes; `threads` 0 means te's thread pool size.
CpuTarget cpu_target(const Target& target, int threads);

// Whether the target's GPU has the tensor cores te's schedules use (mma.sync on float16
// and bfloat16): sm_80 or later, or a target that names no architecture.
bool has_mma_sync(const Target& target);
// Whether it has warpgroup MMA: sm_90a.
bool has_wgmma(const Target& target);

}  // namespace te::auto_sched
