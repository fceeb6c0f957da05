// auto_schedule(): the rules, stage by stage (trials = 0). The order: skip structured
// zeros, choose layouts and read strided inputs by phase (CPU), inline, decide where each
// kept stage is computed, schedule the patterns known whole (attention; on CUDA 16-bit
// matmuls on tensor cores), then schedule each other root stage together with the stages
// computed inside it.
#include "te/auto_schedule.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include <cstdio>

#include "auto_schedule/rules.h"
#include "auto_schedule/features.h"
#include "auto_schedule/search.h"
#include "schedule/stage_lookup.h"
#include "te/error.h"
#include "te/runtime/c_runtime_api.h"

namespace te {

namespace auto_sched {

namespace {

std::vector<const OperationNode*> attached_to(const Context& cx, const OperationNode* anchor) {
  std::vector<const OperationNode*> out;
  for (const Node* n : cx.g.topo()) {
    auto it = cx.place.find(n->op.get());
    if (it != cx.place.end() && it->second.kind == Placement::Kind::At && it->second.anchor == anchor &&
        !it->second.tile)
      out.push_back(n->op.get());
  }
  return out;
}

const OperationNode* tile_of(const Context& cx, const OperationNode* anchor) {
  for (const auto& [op, p] : cx.place)
    if (p.kind == Placement::Kind::At && p.anchor == anchor && p.tile) return op;
  return nullptr;
}

}  // namespace

void schedule_root_cpu(Context& cx, const OperationNode* op) {
  const Node& n = cx.g.at(op);
  if (op->is_scatter()) return schedule_scatter_cpu(cx, op);
  if (n.is_reduction()) {
    if (op->is_row_reduction()) return schedule_row_reduction_cpu(cx, op);
    if (has_tiling_reuse(cx.g, op)) {
      if (tile_lane_partials_cpu(cx, op)) return;
      Tensor t(n.op);
      Tensor local = cx.s.cache_write(t, "local");
      tile_reduction_cpu(cx, cx.s[t], cx.s[local], op, attached_to(cx, op));
    } else {
      schedule_reduction_cpu(cx, op);
    }
    return;
  }
  if (const OperationNode* red = tile_of(cx, op)) {
    Stage inner = cx.stage(red);
    inner.set_scope("local");
    tile_reduction_cpu(cx, cx.stage(op), inner, red, attached_to(cx, op));
    return;
  }
  schedule_elementwise_cpu(cx, op, attached_to(cx, op));
}

}  // namespace auto_sched

namespace auto_sched {

Schedule apply_rules(const std::vector<Tensor>& outputs, const AutoScheduleOptions& options, Decisions& choices) {
  Schedule s = create_schedule(outputs);
  std::vector<std::string> notes;
  std::set<const OperationNode*> kept;
  const CpuTarget cpu = cpu_target(options.target, options.threads);
  // The rewrites of the definitions first: the other rules see the graph they leave.
  std::vector<Tensor> current = options.skip_zeros ? skip_structured_zeros(s, outputs, options, cpu, notes) : outputs;
  std::vector<Winograd1dStages> winograd_rows;
  if (!options.target.is_cuda()) {
    std::vector<Tensor> constants = options.constant_inputs;
    current = use_winograd(s, current, options, constants, notes, kept, winograd_rows);
    current = choose_layouts(s, current, cpu, constants, notes, kept);
    current = read_strided_inputs_by_phase(s, current, cpu, choices, notes, kept);
  }
  Graph g(current);
  Context cx{s, g, options, cpu, {}, {}, {}, {}, choices};
  cx.notes = std::move(notes);
  // The kept stages as they are now: a later rewrite (a pretransform of what they read)
  // gives a stage a new operation.
  for (const OperationNode* op : kept)
    if (auto st = sched::find_stage(*s.get(), op)) cx.kept.insert(st->op.get());
  cx.whole = find_attention(cx);
  for (Winograd1dStages& w : winograd_rows) {
    w.product = sched::find_stage(*s.get(), w.product)->op.get();
    w.output = sched::find_stage(*s.get(), w.output)->op.get();
    w.input = sched::find_stage(*s.get(), w.input)->op.get();
    cx.whole.insert({w.product, w.output, w.input});
  }
  if (options.target.is_cuda()) find_gemms(cx);
  choose_inlines(cx);
  // CUDA: every kept stage is its own kernel (its rules bind each stage's loops).
  if (!options.target.is_cuda()) {
    choose_placements(cx);
    schedule_attention_cpu_rule(cx);
    for (const Winograd1dStages& w : winograd_rows) schedule_winograd_1d_cpu(cx, w);
  } else {
    for (const Node* n : g.topo()) cx.place[n->op.get()] = Placement{};
    schedule_attention_cuda_rule(cx);
    schedule_gemm_cuda_rule(cx);
  }
  for (const Node* n : g.topo()) {
    const OperationNode* op = n->op.get();
    if (!n->is_compute() || g.inlined.count(op) || cx.whole.count(op) || cx.place.at(op).kind != Placement::Kind::Root)
      continue;
    if (options.target.is_cuda()) {
      schedule_root_cuda(cx, op);
    } else {
      schedule_root_cpu(cx, op);
    }
  }
  if (!options.target.is_cuda()) skip_padding_taps(cx);
  if (options.progress)
    for (const std::string& line : cx.notes) std::fprintf(stderr, "[auto_schedule] %s\n", line.c_str());
  return cx.s;
}

}  // namespace auto_sched

namespace {

void check_outputs(const std::vector<Tensor>& outputs, const AutoScheduleOptions& options) {
  validate(options);
  if (outputs.empty()) throw Error("auto_schedule: no output tensors given");
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!outputs[i].defined()) throw Error(fmt::format("auto_schedule: output {} is an undefined tensor", i));
  if (options.constant_inputs.empty()) return;
  const std::vector<Operation> graph = topo_sort(outputs);
  for (size_t i = 0; i < options.constant_inputs.size(); ++i) {
    const Tensor& t = options.constant_inputs[i];
    if (!t.defined())
      throw Error(fmt::format("auto_schedule: AutoScheduleOptions::constant_inputs[{}] is undefined", i));
    if (!t.is_placeholder())
      throw Error(
          fmt::format("auto_schedule: AutoScheduleOptions::constant_inputs[{}] '{}' is computed; only "
                      "inputs (placeholders) are constant",
                      i, t.name()));
    if (std::find(graph.begin(), graph.end(), t.op()) == graph.end())
      throw Error(
          fmt::format("auto_schedule: AutoScheduleOptions::constant_inputs[{}] '{}' is not an input of "
                      "the outputs' graph",
                      i, t.name()));
  }
}

}  // namespace

Schedule auto_schedule(const std::vector<Tensor>& outputs, const AutoScheduleOptions& options) {
  check_outputs(outputs, options);
  if (options.trials > 0) return auto_sched::search(outputs, options);
  if (!options.records.empty()) return auto_sched::best_recorded(outputs, options);
  auto_sched::Decisions rules;
  return auto_sched::apply_rules(outputs, options, rules);
}

std::vector<AutoScheduleDecision> auto_schedule_decisions(const std::vector<Tensor>& outputs,
                                                          const AutoScheduleOptions& options) {
  check_outputs(outputs, options);
  auto_sched::Decisions rules;
  auto_sched::apply_rules(outputs, options, rules);
  std::vector<AutoScheduleDecision> out;
  for (const auto_sched::DecisionPoint& p : rules.points()) out.push_back({p.name, p.options, p.rule_value});
  return out;
}

Schedule auto_schedule_with(const std::vector<Tensor>& outputs, const AutoScheduleOptions& options,
                            const std::map<std::string, int64_t>& values) {
  check_outputs(outputs, options);
  auto_sched::Decisions chosen(values);
  Schedule s = auto_sched::apply_rules(outputs, options, chosen);
  for (const auto& [name, value] : values) {
    const auto& points = chosen.points();
    auto p = std::find_if(points.begin(), points.end(), [&](const auto& d) { return d.name == name; });
    if (p == points.end()) {
      std::string known;
      for (const auto& d : points) known += (known.empty() ? "" : ", ") + d.name;
      throw Error(fmt::format("auto_schedule_with: the rules ask for no decision '{}' in this graph (they ask for: {})",
                              name, known.empty() ? "none" : known));
    }
    if (!std::binary_search(p->options.begin(), p->options.end(), value))
      throw Error(fmt::format("auto_schedule_with: {} is not an option of '{}' (its options: {})", value, name,
                              fmt::join(p->options, ", ")));
  }
  return s;
}

std::vector<std::pair<std::string, float>> loop_features(const LoweredFunc& f, int threads) {
  if (!f.body.defined()) throw Error("loop_features: the function '" + f.name + "' has no body");
  std::vector<float> v = auto_sched::feature_vector(f, threads > 0 ? threads : te_num_threads());
  const auto& names = auto_sched::loop_feature_names();
  std::vector<std::pair<std::string, float>> out;
  for (size_t i = 0; i < v.size(); ++i) out.emplace_back(names[i], v[i]);
  return out;
}

}  // namespace te
