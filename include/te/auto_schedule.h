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
/// With trials > 0 (CPU only) the values the rules leave open (register tile rows and
/// vectors, column panels, work items per thread, reuse blocks, rfactor parts) are
/// searched as Ansor does: a learned cost model (gradient-boosted trees over features of
/// each candidate's lowered loop nest) ranks candidates bred from the best measured ones,
/// and te::autotune measures the chosen ones in forked workers, each checked against the
/// default schedule's output. Records (AutoScheduleOptions::records) make a run
/// resumable, and a later call with as many trials reads the best back without measuring.
/// The search forks this process: call it before running kernels with parallel loops
/// here (see te/autotune/measure.h).
///
/// \code
///   te::AutoScheduleOptions o;          // target "llvm" (the host CPU) or "cuda"
///   te::Schedule s = te::auto_schedule({C}, o);
///   te::Module m = te::build(te::lower(s, {A, B, C}, "gemm"));
/// \endcode
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "te/export.h"
#include "te/ir.h"
#include "te/schedule.h"
#include "te/target.h"
#include "te/tensor.h"

namespace te {

/// What auto_schedule() targets and how much it may search.
struct TE_API AutoScheduleOptions {
  /// What the schedule is for (te::Target): "llvm", the host CPU (te::build), or another
  /// CPU ("llvm -mcpu=x86-64-v3", "llvm -mtriple=aarch64-linux-gnu": the rules take its
  /// vector width, and its vector_bits when set); "cuda": a CUDA GPU (te::build_cuda).
  Target target;
  /// Measured trials of the search (the rules' own config first); 0: the rules alone,
  /// nothing is measured. Needs target "llvm" and constant shapes.
  int trials = 0;
  /// Tuning records (JSON lines) that the search appends to and resumes from; empty: none.
  /// With trials = 0 they are only read: the best config they hold for this graph and
  /// these options is replayed without measuring (the rules' schedule when they hold none;
  /// te::Error when the file does not exist), as Ansor's ApplyHistoryBest.
  std::string records;
  /// The search's wall-clock budget in seconds; 0: no limit but `trials`.
  double time_budget_s = 0;
  /// CPU threads the schedule is made for (the parallel loops' work items); 0: every
  /// thread of te's pool (TE_NUM_THREADS).
  int threads = 0;
  /// The search's random seed (the rules are deterministic).
  uint64_t seed = 0;
  /// Print what the rules decided (one line per stage) and the search's progress on stderr.
  bool progress = false;
  /// Sums that multiply a producer's structured zeros skip those products: a transposed
  /// convolution's input with zeros inserted between its pixels (Stage::skip_zeros), and
  /// on the CPU a convolution's zero padding in its long outer window loops
  /// (Stage::skip_padding). The result is unchanged unless a factor multiplied by such a
  /// zero is infinite or NaN (0 * inf is NaN as written; skipped, as PyTorch's
  /// convolutions skip it). false: every product as written.
  bool skip_zeros = true;
  /// CPU: 3x3 stride-1 float32 convolutions of 16 or more input and output channels are
  /// computed by Winograd's F(2x2, 3x3) (Schedule::winograd): 2.25x fewer multiplications,
  /// the result within a few rounding errors of the direct sum's, not equal to it bit for
  /// bit. Their constant weights (constant_inputs) are then taken transformed
  /// (Schedule::precompute; lower_pretransform makes the function that transforms them).
  /// false: every convolution as written.
  bool winograd = true;
  /// Inputs (placeholders of the graph) whose values the caller sets once and reuses over
  /// many calls: a model's weights. The rules may then ask for one in another layout
  /// (Schedule::pretransform: an NCHW convolution's OIHW weights as HWIO, whatever their
  /// size; weights of many output channels blocked by 4 vectors of columns)
  /// rather than pack it on every call. The schedule's pretransforms() says which;
  /// the caller lays each out once with the function lower_pretransform() makes and
  /// passes that array in the input's place.
  std::vector<Tensor> constant_inputs;
  /// CUDA: threads per block of the generated kernels (a multiple of 32, at most 1024).
  int cuda_threads_per_block = 256;
};

/// A schedule for the graph that computes `outputs` (as create_schedule({outputs}) would
/// make, then scheduled), ready for lower() with the same tensors. te::Error for invalid
/// options (naming the field) and for an empty or undefined output list.
TE_API Schedule auto_schedule(const std::vector<Tensor>& outputs, const AutoScheduleOptions& options = {});

/// The checks auto_schedule() makes on its options: te::Error naming the first invalid field.
TE_API void validate(const AutoScheduleOptions& options);

/// One value the rules leave open for the search: "<stage>.<what>" (e.g. "C.tile_rows",
/// "C.column_panels", "B.items_per_thread"), the values it may take and the rules' own.
struct TE_API AutoScheduleDecision {
  std::string name;              ///< "<stage>.<what>"; a repeated stage name gets "#2", "#3"
  std::vector<int64_t> options;  ///< ascending; rule_value is one of them
  int64_t rule_value = 0;        ///< what trials = 0 uses
};

/// The search space of auto_schedule() for this graph: the decisions the rules ask for,
/// in the order they ask (points with a single option included).
TE_API std::vector<AutoScheduleDecision> auto_schedule_decisions(const std::vector<Tensor>& outputs,
                                                                 const AutoScheduleOptions& options = {});

/// The rules' schedule with some decisions set (a search's config replayed; the others
/// keep the rules' values). te::Error naming the decision when a name is not one the rules
/// ask for or a value is not among its options.
TE_API Schedule auto_schedule_with(const std::vector<Tensor>& outputs, const AutoScheduleOptions& options,
                                   const std::map<std::string, int64_t>& values);

/// The features of a lowered loop nest that the search's cost model ranks candidates by
/// (name, log2(1 + value)): arithmetic, loads by access pattern, vector lanes, the bytes
/// touched inside the innermost loops, parallel work items per thread (`threads`; 0: te's
/// pool), loop and guard overhead, allocations.
TE_API std::vector<std::pair<std::string, float>> loop_features(const LoweredFunc& f, int threads = 0);

}  // namespace te
