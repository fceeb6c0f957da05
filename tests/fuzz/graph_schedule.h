// Random legal schedules for the graph fuzzer's tensor graphs.
//
// CPU: cache_read ("global"/"local") and cache_write ("local") stages and rfactor first
// (they rewrite operations and need unscheduled stages), then each stage, consumers
// before producers: where it is computed (root; inline when element-wise; compute_at a
// loop of its only consumer, which is final by then), then its loops (split and
// split_nparts with odd factors, fuse, reorder, tile) and annotations (vectorize and
// unroll of loops of constant extent up to 16, parallel of data-parallel loops).
//
// GPU: every stage computed at the root is a kernel: its data-parallel loops fused,
// split by a thread count and bound to blockIdx.x/threadIdx.x. A producer is inlined, its
// own kernel, computed per thread at its consumer's threadIdx.x loop ("local"), or per
// block at its blockIdx.x loop ("shared", its loops bound to threadIdx.x; barriers
// follow); inputs may be staged through shared memory by cache_read.
#pragma once
#include <set>
#include <sstream>
#include <vector>

#include "fuzz_rng.h"
#include "te/te.h"

namespace te::fuzz {

// Numbers the primitives a CPU schedule applies, so that a minimizer can leave some out
// (the random draws stay the same; later choices see the loops as they then are).
struct StepFilter {
  std::set<int> skip;
  int count = 0;
  bool take() { return !skip.count(count++); }
};

// Schedules s (made for outputs, whose stages include `computes`) on the CPU; appends one
// line per primitive to log. Throws what the primitives throw.
void schedule_for_cpu(Rng& rng, Schedule& s, const std::vector<Tensor>& computes, std::ostringstream& log,
                      StepFilter& steps);

// Schedules s for the GPU (see above).
void schedule_for_gpu(Rng& rng, Schedule& s, const std::vector<Tensor>& inputs, const std::vector<Tensor>& computes,
                      std::ostringstream& log);

}  // namespace te::fuzz
