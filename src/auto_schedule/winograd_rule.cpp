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

#include <optional>
#include <utility>

#include "auto_schedule/rules.h"
#include "schedule/graph_queries.h"
#include "schedule/winograd.h"

namespace te::auto_sched {

namespace {

constexpr int64_t kMinChannels = 16;

// winograd_1d: the most points a phase interpolates at (F(6, 4) and F(3, 7): errors
// about 1e-4 on C2D's and DIL's outputs of up to 20, against 2e-5 for F(4, 4); at 10
// points, F(4, 7), 3e-4); the fewest taps (measured on 7-tap windows; 3x3 windows of
// many channels take F(2x2, 3x3) above); the least saving worth the transforms; the
// least steps of the other reduction axes and output channels that hide them. Other
// windows may be any size: C3D's width window as F(6, 4) + F(6, 3), 147 steps left per
// point, ran 1.3-1.4x as fast as its direct sum on a Zen 5 (one and two threads), its
// errors 7e-4 on outputs up to 53; C2D's and DIL's one other window of 7, 1.3-1.6x.
constexpr int64_t kMaxPhasePoints = 9;
constexpr int64_t kMinTaps = 5;
constexpr int64_t kMinSavingX100 = 180;
constexpr int64_t kMinSteps = 16;

// The window of st that winograd_1d saves most on, with its plan (the most outputs per
// tile within kMaxPhasePoints), where the saving and the sizes pay; nullopt otherwise.
std::optional<std::pair<IterVar, sched::Winograd1dPlan>> window_for_winograd_1d(const Schedule& s, const Stage& st) {
  const OperationNode& op = *st.op();
  if (op.kind != OpKind::Compute || op.dtype != Float(32)) return std::nullopt;
  std::optional<std::pair<IterVar, sched::Winograd1dPlan>> best;
  for (const IterVar& window : op.reduce_axis) {
    for (int64_t m : {6, 4, 3, 2}) {
      const sched::Winograd1dPlan plan = sched::plan_winograd_1d(*s.get(), *st.get(), window, m);
      if (!plan.refusal.empty() || plan.most_phase_points > kMaxPhasePoints) continue;
      if (plan.taps >= kMinTaps && plan.multiplications_saved_x100 >= kMinSavingX100 && plan.other_steps >= kMinSteps &&
          plan.out_channels >= kMinSteps &&
          (!best || plan.multiplications_saved_x100 >= best->second.multiplications_saved_x100))
        best = std::make_pair(window, plan);
      break;  // the most outputs that fit
    }
  }
  return best;
}

// Weights that only `transform` reads, constant and an input, are transformed once by the
// caller (Schedule::precompute); the transformed placeholder joins `constants`.
void precompute_constant_weights(Schedule& s, const Tensor& weights, const Tensor& transform,
                                 std::vector<Tensor>& constants, std::string& how) {
  bool shared = false;
  for (const Stage& st : s.stages())
    shared = shared || (st.op() != transform.op() && sched::reads(st.op(), weights.op().get()));
  if (!is_constant(weights.op().get(), constants) || !weights.is_placeholder() || shared) return;
  const Tensor taken = s.precompute(transform);
  constants.push_back(taken);
  how += fmt::format("; the constant {} transformed once by the caller ({})", weights.name(), taken.name());
}

}  // namespace

std::vector<Tensor> use_winograd(Schedule& s, const std::vector<Tensor>& outputs, const AutoScheduleOptions& options,
                                 std::vector<Tensor>& constants, std::vector<std::string>& notes,
                                 std::set<const OperationNode*>& kept, std::vector<Winograd1dStages>& rows) {
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
    precompute_constant_weights(s, weights, wg.weights, constants, how);
    notes.push_back(how);
  }
  // One window in one dimension (after the 2-D rewrites, which leave no such sum).
  std::vector<Operation> windowed;
  for (const Stage& st : s.stages())
    if (window_for_winograd_1d(s, st)) windowed.push_back(st.op());
  for (const Operation& op : windowed) {
    const Tensor conv(s[Tensor(op, 0)]->op, 0);
    const auto found = window_for_winograd_1d(s, s[conv]);
    if (!found) continue;
    const auto& [window, plan] = *found;
    const Tensor weights(plan.weights->op, plan.weights->value_index);
    const WinogradStages wg = s.winograd_1d(conv, window, static_cast<int>(plan.outputs));
    std::string phases;
    for (const auto& taps : plan.phase_taps)
      if (!taps.empty()) phases += fmt::format("{}F({}, {})", phases.empty() ? "" : " + ", plan.outputs, taps.size());
    std::string how = fmt::format(
        "{}: Winograd {} along '{}' (stride {}, dilation {}), {} products per {} outputs "
        "where the direct sum does {} ({}, {}, {}",
        op->name, phases, window.name(), plan.stride, plan.dilation, plan.points, plan.outputs,
        plan.outputs * plan.taps, wg.weights.name(), wg.input.name(), wg.product.name());
    kept.insert(wg.input.op().get());
    if (wg.output.defined()) {
      kept.insert(wg.output.op().get());
      how += fmt::format(", {}", wg.output.name());
    }
    how += ")";
    rows.push_back({wg.product.op().get(), wg.output.defined() ? wg.output.op().get() : s[conv]->op.get(),
                    wg.input.op().get(), plan.input_dim, plan.outputs});
    precompute_constant_weights(s, weights, wg.weights, constants, how);
    notes.push_back(how);
  }
  return outputs_in(s, outputs);
}

}  // namespace te::auto_sched
