// Rule (CPU): a 3x3 stride-1 float convolution with many input and output channels is
// computed by Winograd's F(2x2, 3x3) (Schedule::winograd): per 2x2 outputs and channel
// pair 16 multiplications where the direct sum does 36, the rest a matrix product per
// tile position that the tiling rules schedule as any other. Its transforms cost a few
// additions per input and output element and weight, next to the product's
// 16 x in_channels x out_channels per tile: with fewer than kMinChannels channels on
// either side they would not pay. In NCHW the input is copied channels last and the
// outputs computed channels innermost, then copied back (the transforms read and write
// vectors of channels). Constant weights (AutoScheduleOptions::constant_inputs) are
// transformed once by the caller (Schedule::precompute), and the transformed weights are
// then constant for the layout rule. Not a search decision: the search's configs all
// take the same arguments. It runs after the zeros rule, before the layouts.
#include <fmt/format.h>

#include "auto_schedule/rules.h"
#include "schedule/graph_queries.h"
#include "schedule/winograd.h"

namespace te::auto_sched {

namespace {

constexpr int64_t kMinChannels = 16;

}  // namespace

std::vector<Tensor> use_winograd(Schedule& s, const std::vector<Tensor>& outputs, const AutoScheduleOptions& options,
                                 std::vector<Tensor>& constants, std::vector<std::string>& notes,
                                 std::set<const OperationNode*>& kept) {
  if (!options.winograd || options.target.is_cuda()) return outputs;
  std::vector<Operation> convolutions;
  for (const Stage& st : s.stages()) {
    const sched::WinogradPlan plan = sched::plan_winograd(*s.get(), *st.get());
    if (plan.refusal.empty() && st.op()->dtype == Float(32) && plan.in_channels >= kMinChannels &&
        plan.out_channels >= kMinChannels)
      convolutions.push_back(st.op());
  }
  for (const Operation& op : convolutions) {
    // Planned again: rewriting an earlier convolution gives a later one that reads it a
    // new operation.
    const Tensor conv(s[Tensor(op, 0)]->op, 0);
    const sched::WinogradPlan plan = sched::plan_winograd(*s.get(), *s[conv].get());
    const Tensor weights(plan.conv.weights->op, 0), input(plan.conv.input->op, plan.conv.input->value_index);
    const int chan = plan.conv.input_channel_dim;
    const bool input_channels_last = chan + 1 == static_cast<int>(input.ndim());
    WinogradStages wg = s.winograd(conv);
    std::string how = fmt::format("{}: Winograd F(2x2, 3x3) ({}, {}, {}, {}", op->name, wg.weights.name(),
                                  wg.input_rows.name(), wg.input.name(), wg.product.name());
    // NCHW: the input copied channels last and the outputs computed channels innermost
    // (WinogradStages::output), each copy a transpose by blocks in registers (kept at the
    // root: placement.cpp). Transposed as they go instead, element by element, the
    // transforms made the small convolution 2-3x slower than the direct sum on a Zen 5.
    if (!input_channels_last) {
      std::vector<int> order;
      for (int d = 0; d < static_cast<int>(input.ndim()); ++d)
        if (d != chan) order.push_back(d);
      order.push_back(chan);
      const Tensor copy = s.cache_read(input, "global", {wg.input_rows}, order);
      kept.insert(copy.op().get());
      how += fmt::format(", {}", copy.name());
    }
    if (wg.output.defined()) {
      kept.insert(wg.output.op().get());
      how += fmt::format(", {}", wg.output.name());
    }
    how += ")";
    // Weights another stage reads too stay an argument: transformed on every call.
    bool shared = false;
    for (const Stage& st : s.stages())
      shared = shared || (st.op() != wg.weights.op() && sched::reads(st.op(), weights.op().get()));
    if (is_constant(weights.op().get(), constants) && weights.is_placeholder() && !shared) {
      const Tensor taken = s.precompute(wg.weights);
      constants.push_back(taken);
      how += fmt::format("; the constant {} transformed once by the caller ({})", weights.name(), taken.name());
    }
    notes.push_back(how);
  }
  return outputs_in(s, outputs);
}

}  // namespace te::auto_sched
