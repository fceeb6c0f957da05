// skip_zeros: a sum visits only the reduction points where a producer that is zero off a
// lattice (a transposed convolution's input with zeros between its pixels) can be nonzero.
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

}  // namespace te::sched
