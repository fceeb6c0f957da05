// auto_schedule(): the rules, stage by stage (trials = 0). The order: inline, decide
// where each kept stage is computed, then schedule each root stage together with the
// stages computed inside it.
#include "te/auto_schedule.h"

#include <fmt/format.h>

#include <cstdio>

#include "auto_schedule/rules.h"
#include "te/error.h"

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
  if (n.is_reduction()) {
    if (has_tiling_reuse(cx.g, op)) {
      Tensor t(n.op);
      Tensor local = cx.s.cache_write(t, "local");
      tile_reduction_cpu(cx, cx.s[t], cx.s[local], op, {});
    } else {
      schedule_reduction_cpu(cx, op);
    }
    return;
  }
  if (const OperationNode* red = tile_of(cx, op)) {
    Stage inner = cx.stage(red);
    inner.set_scope("local");
    tile_reduction_cpu(cx, cx.stage(op), inner, red, {});
    return;
  }
  schedule_elementwise_cpu(cx, op, attached_to(cx, op));
}

}  // namespace auto_sched

namespace auto_sched {

Schedule apply_rules(const std::vector<Tensor>& outputs, const AutoScheduleOptions& options, Decisions& choices) {
  Graph g(outputs);
  Context cx{create_schedule(outputs), g, options, host_target(options.threads, options.vector_bits), {}, {}, choices};
  choose_inlines(cx);
  // CUDA: every kept stage is its own kernel (its rules bind each stage's loops).
  if (options.target != "cuda") {
    choose_placements(cx);
  } else {
    for (const Node* n : g.topo()) cx.place[n->op.get()] = Placement{};
  }
  for (const Node* n : g.topo()) {
    const OperationNode* op = n->op.get();
    if (!n->is_compute() || g.inlined.count(op) || cx.place.at(op).kind != Placement::Kind::Root) continue;
    if (options.target == "cuda") {
      schedule_root_cuda(cx, op);
    } else {
      schedule_root_cpu(cx, op);
    }
  }
  if (options.progress)
    for (const std::string& line : cx.notes) std::fprintf(stderr, "[auto_schedule] %s\n", line.c_str());
  return cx.s;
}

}  // namespace auto_sched

Schedule auto_schedule(const std::vector<Tensor>& outputs, const AutoScheduleOptions& options) {
  validate(options);
  if (outputs.empty()) throw Error("auto_schedule: no output tensors given");
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!outputs[i].defined()) throw Error(fmt::format("auto_schedule: output {} is an undefined tensor", i));
  if (options.trials > 0)
    throw Error(fmt::format("auto_schedule: AutoScheduleOptions::trials is {}, but the measured search is not "
                            "built yet; use trials = 0 (the rules alone)",
                            options.trials));
  auto_sched::Decisions rules;
  return auto_sched::apply_rules(outputs, options, rules);
}

}  // namespace te
