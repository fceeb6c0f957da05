// Rule: a sum that multiplies a producer's structured zeros (a transposed convolution's
// input with zeros inserted between its pixels, as TVM writes it) visits only the points
// where that producer can be nonzero (Stage::skip_zeros). It runs first: the rules after
// it see the rewritten reduction (fewer, shorter reduction axes) as the graph.
#include <fmt/format.h>

#include "auto_schedule/rules.h"
#include "schedule/skip_zeros.h"

namespace te::auto_sched {

std::vector<Tensor> skip_structured_zeros(Schedule& s, const std::vector<Tensor>& outputs,
                                          const AutoScheduleOptions& options, const CpuTarget& cpu,
                                          std::vector<std::string>& notes) {
  for (const Stage& st : s.stages()) {
    const Operation op = st.op();
    if (op->kind != OpKind::Compute || op->reduce_axis.empty()) continue;
    for (const Operation& in : op->inputs) {
      Tensor producer(in, 0);
      if (in->kind != OpKind::Compute) continue;
      sched::ZeroSkipPlan plan = sched::plan_skip_zeros(*s.get(), *st.get(), producer);
      if (!plan.refusal.empty()) continue;
      Stage(st).skip_zeros(producer);
      notes.push_back(fmt::format("{}: skips the zeros of {} (reduction {})", op->name, in->name,
                                  axis_names(s[Tensor(op, 0)]->op->reduce_axis)));
      // Which taps a point visits depends on its phase (x % stride): computed phase by
      // phase, the points of one phase read the same weights, which a tile reuses.
      // The last axis stays whole: its vectors would be 1 / stride as long. Unless the
      // layout rule will move a channel axis innermost (an NCHW row of 8 pixels), so
      // the last axis is no vector axis.
      const bool keep_last =
          options.target.is_cuda() || !moves_channels_innermost(*s[Tensor(op, 0)]->op, cpu, options.constant_inputs);
      std::vector<IterVar> by_phase;
      for (const IterVar& x : plan.by_phase)
        if (!keep_last || !x.same_as(op->axis.back())) by_phase.push_back(x);
      if (!by_phase.empty() && plan.stride > 1) {
        Tensor phases = s.split_phases(Tensor(op, 0), by_phase, plan.stride);
        notes.push_back(
            fmt::format("{}: computed by phases of {} ({})", op->name, axis_names(by_phase), phases.name()));
      }
      break;  // the stage's operation is a new one now
    }
  }
  return outputs_in(s, outputs);
}

}  // namespace te::auto_sched
