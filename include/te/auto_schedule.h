/// \file
/// Auto-scheduling: a schedule generated from the compute alone, no template (as TVM's
/// Ansor and Halide's autoschedulers). With trials = 0 (the default) the schedule comes
/// from te's rules only, without measuring anything: elementwise producers are inlined,
/// reductions with data reuse (matmul, conv) get a multi-level tiling with a register
/// tile (cache_write "local", unrolled rows, vectorized columns), row statistics are
/// computed inside their consumers' row loops, long reductions with few outputs are
/// split by rfactor, outer loops run in parallel and contiguous inner loops are vectorized
/// (CPU), or bound to blocks and threads (CUDA). docs/auto_schedule.md describes each rule.
///
/// \code
///   te::AutoScheduleOptions o;          // target "llvm" (the host CPU) or "cuda"
///   te::Schedule s = te::auto_schedule({C}, o);
///   te::Module m = te::build(te::lower(s, {A, B, C}, "gemm"));
/// \endcode
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "te/export.h"
#include "te/schedule.h"
#include "te/tensor.h"

namespace te {

/// What auto_schedule() targets and how much it may search.
struct TE_API AutoScheduleOptions {
  /// "llvm": the host CPU (te::build); "cuda": a CUDA GPU (te::build_cuda).
  std::string target = "llvm";
  /// Measured trials of the search; 0: the rules alone, nothing is measured.
  int trials = 0;
  /// Tuning records (JSON lines) that the search appends to and resumes from; empty: none.
  std::string records;
  /// The search's wall-clock budget in seconds; 0: no limit but `trials`.
  double time_budget_s = 0;
  /// CPU threads the schedule is made for (the parallel loops' work items); 0: every
  /// thread of te's pool (TE_NUM_THREADS).
  int threads = 0;
  /// CPU: the vector width in bits the rules make vectors of (128, 256, 512); 0: the
  /// host's widest (from host_cpu_features()). Set it when the kernel is exported for
  /// another CPU (BuildOptions::target_cpu), or for output that does not depend on the host.
  int vector_bits = 0;
  /// The search's random seed (the rules are deterministic).
  uint64_t seed = 0;
  /// Print what the rules decided (one line per stage) and the search's progress on stderr.
  bool progress = false;
  /// CUDA: threads per block of the generated kernels (a multiple of 32, at most 1024).
  int cuda_threads_per_block = 256;
};

/// A schedule for the graph that computes `outputs` (as create_schedule({outputs}) would
/// make, then scheduled), ready for lower() with the same tensors. te::Error for invalid
/// options (naming the field) and for an empty or undefined output list.
TE_API Schedule auto_schedule(const std::vector<Tensor>& outputs, const AutoScheduleOptions& options = {});

/// The checks auto_schedule() makes on its options: te::Error naming the first invalid field.
TE_API void validate(const AutoScheduleOptions& options);

}  // namespace te
