// The marker build_loop_nests leaves where the threads of a cross-thread reduction
// combine their partial results, and that lower_thread_allreduce expands (as TVM's
// tvm_thread_allreduce). Between the two, passes see an ordinary Evaluate of a call.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "te/ir.h"
#include "te/tensor.h"

namespace te::lowering {

struct AllreduceMarker {
  std::vector<Expr> accumulators;  // one Load of one element per value: each thread's
                                   // partial result, and where the leader (every
                                   // reduction thread index 0) receives the total
  Expr predicate;                  // whether this thread's partial counts (false: the identity)
  int rule = 0;                    // the Reduce in LowerContext::allreduce_rules: how values combine
  std::vector<Var> threads;        // the loop variables of the reduction's thread loops
};

// The name of an output's per-thread accumulator buffer, and back (for messages).
std::string accumulator_name(const std::string& output);
std::string stage_of_accumulator(const std::string& accumulator);

Stmt make_allreduce_marker(const AllreduceMarker& m);
// The marker in s, if s is one.
std::optional<AllreduceMarker> as_allreduce_marker(const Stmt& s);

}  // namespace te::lowering
