/// \file
/// lower(): a Schedule to loop IR, through a fixed list of passes (src/lower/lower.cpp
/// lists them in order, one line each). `TE_DUMP_IR=<pass>` (or "all") in the environment,
/// or LowerOptions::dump_ir, prints the IR after that pass to stderr.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "te/export.h"
#include "te/ir.h"
#include "te/schedule.h"
#include "te/target.h"

namespace te {

/// The range of every iter var of every computed stage, as bound inference finds it: a
/// stage's root ranges cover what its consumers read inside its attach point (its whole
/// declared domain for outputs), and split/fuse results follow from them.
class TE_API BoundMap {
 public:
  /// The range of iv; te::Error if bound inference did not reach it.
  const Range& at(const IterVar& iv) const;
  /// Whether bound inference gave iv a range.
  bool contains(const IterVar& iv) const { return ranges_.count(iv.get()) != 0; }
  /// Sets (or replaces) the range of iv.
  void set(const IterVar& iv, Range r) { ranges_[iv.get()] = {iv, std::move(r)}; }
  /// The number of iter vars with a range.
  size_t size() const { return ranges_.size(); }

 private:
  std::map<const IterVarNode*, std::pair<IterVar, Range>> ranges_;
};

/// Bound inference on a schedule (inlined stages are substituted into their readers
/// first, as lower() does).
TE_API BoundMap infer_bound(const Schedule& s);

/// Options of lower().
struct TE_API LowerOptions {
  /// Split loops whose bound guards hold on a sub-range into a guard-free main part and a
  /// guarded rest.
  bool partition_loops = true;
  /// A value that one statement computes more than once becomes a named local computed
  /// once (pass "common_subexpr_elim"); printed IR and CUDA then read like hand-written code.
  bool eliminate_common_subexpressions = true;
  /// Print the IR after this pass ("all": after every pass) to stderr; empty: the
  /// TE_DUMP_IR environment variable decides.
  std::string dump_ir;
};

/// Lowers a schedule into a function whose parameters are the buffers of `args` in order,
/// then the scalar variables that no listed tensor's shape binds (a shape dimension that
/// is exactly a variable binds it), in order of first appearance. Every tensor the
/// computation reads must be listed (te::Error naming it otherwise); computed tensors not
/// listed become intermediate buffers.
TE_API LoweredFunc lower(const Schedule& s, const std::vector<Tensor>& args, const std::string& name,
                         const LowerOptions& options = {});

/// The function that lays `input` out as `s` takes it (Schedule::pretransform): its
/// parameters are input, then the pretransformed array ("<input>_<order>", written).
/// Call it once per new value of input (a constant weight: once), then pass its output
/// where the function of `s` takes input. `input` may also be the taken placeholder.
/// `target`: where it runs, the CPU (a parallel loop; te::build) or a CUDA GPU (a
/// thread per element; te::build_cuda). te::Error when s does not take it pretransformed.
TE_API LoweredFunc lower_pretransform(const Schedule& s, const Tensor& input, const std::string& name,
                                      const Target& target = Target());

/// The names TE_DUMP_IR accepts, in pipeline order.
TE_API std::vector<std::string> lower_pass_names();

// ---- The loop IR passes lower() ends with; they also work on hand-written loop IR ----
/// Splits a loop whose body is guarded by likely(cond), cond linear in the loop variable,
/// into a guard-free main loop and a guarded remainder (not thread-bound or vectorized loops).
/// A select(likely(cond), a, b) counts as such a guard: the main loop takes a.
TE_API Stmt partition_loops(const Stmt& s);
/// Replaces each unrolled loop of constant extent by copies of its body.
TE_API Stmt unroll_loops(const Stmt& s);
/// Turns each vectorized loop of constant extent into vector statements (Ramp/Broadcast).
/// A guard on the vector variable becomes a check of the last lane with a scalar loop as
/// the fallback; a body that cannot be vectorized stays a loop of kind Vectorized (with a
/// warning), which the LLVM backend hands to LLVM's loop vectorizer.
TE_API Stmt vectorize_loops(const Stmt& s);
/// Inserts a barrier between writes of shared memory and later reads (or writes) of it
/// by the threads of the block, including across iterations of an enclosing loop.
TE_API Stmt insert_barriers(const Stmt& s);
/// Removes statements that do nothing: empty loops, empty branches, constant evaluates.
TE_API Stmt remove_no_ops(const Stmt& s);
/// Common-subexpression elimination: a scalar value a statement computes more than once
/// (and always computes: not only under && / || or if_then_else) becomes a local computed
/// once just before it, named after what it holds. Loads are shared only within one
/// statement, so none moves across a store or a barrier; index arithmetic (+ - * of
/// variables and constants), calls outside te and warp shuffles stay where they are.
TE_API Stmt eliminate_common_subexpressions(const Stmt& s);

}  // namespace te
