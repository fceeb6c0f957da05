// skip_zeros and skip_padding: a sum visits only the reduction points where a producer
// that is zero off a lattice (a transposed convolution's input with zeros between its
// pixels) or outside a box (a zero padding) can be nonzero.
#pragma once
#include <string>
#include <vector>

#include "te/schedule.h"

namespace te::sched {

// What stage.skip_zeros(producer) would do (stage being one of s's). auto_schedule asks
// before applying it.
struct ZeroSkipPlan {
  std::string refusal;            // why it would be refused; empty when it applies
  std::vector<IterVar> by_phase;  // the stage's axes that the residue classes depend on
  int stride = 0;                 // their common stride (0: strides differ)
};
ZeroSkipPlan plan_skip_zeros(const ScheduleNode& s, const StageNode& stage, const Tensor& producer);

// What stage.skip_padding(producer, {axis}) would make of `axis`: the axis over its taps
// inside the producer's box (bounds in the stage's axes), or why it would be refused.
struct PaddingPlan {
  std::string refusal;
  IterVar taps;
};
PaddingPlan plan_skip_padding(const ScheduleNode& s, const StageNode& stage, const Tensor& producer,
                              const IterVar& axis);

// What skip_zeros and skip_padding share: `stage` sums a product with one read of
// `producer`, an element-wise `if_then_else(cond, value, 0)`; `tests` are cond's conjuncts
// at that read (in the stage's axes). `refusal` says why the pattern is not there.
struct ZeroFactor {
  std::string refusal;
  std::vector<Expr> tests;
};
ZeroFactor zero_factor_tests(const ScheduleNode& s, const StageNode& stage, const Tensor& producer);

// Whether r is a leaf of st that no split, fuse or annotation has touched yet.
bool is_untouched_leaf(const StageNode& st, const IterVar& r);

}  // namespace te::sched
