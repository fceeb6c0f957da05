// create_schedule, stage lookup and the Stage accessors.
#include <fmt/format.h>

#include "schedule/messages.h"
#include "schedule/stage_lookup.h"
#include "te/schedule.h"

namespace te {

using sched::quote;

Schedule create_schedule(const std::vector<Tensor>& outputs) {
  auto n = std::make_shared<ScheduleNode>();
  for (const Tensor& t : outputs)
    if (!t.defined()) throw Error("create_schedule: an output tensor is undefined");
  n->outputs = outputs;
  for (const Operation& op : topo_sort(outputs)) {
    auto st = sched::make_stage(op);
    for (const Tensor& t : outputs)
      if (t.op() == op) st->is_output = true;
    n->stages.push_back(st);
  }
  return Schedule(n);
}

Stage Schedule::operator[](const Operation& op) const {
  if (!op) throw Error("schedule: undefined tensor");
  auto st = sched::find_stage(*node_, op.get());
  if (!st) throw Error(fmt::format("schedule: tensor {} is not part of this schedule", quote(op->name)));
  return Stage(node_, st);
}

Stage Schedule::operator[](const Tensor& t) const {
  if (!t.defined()) throw Error("schedule: undefined tensor");
  return (*this)[t.op()];
}

std::vector<Stage> Schedule::stages() const {
  std::vector<Stage> out;
  for (const auto& st : node_->stages) out.emplace_back(node_, st);
  return out;
}

Schedule Schedule::copy() const {
  auto n = std::make_shared<ScheduleNode>();
  n->outputs = node_->outputs;
  for (const auto& st : node_->stages) n->stages.push_back(std::make_shared<StageNode>(*st));
  n->pretransforms = node_->pretransforms;
  return Schedule(n);
}

ForKind Stage::for_kind(const IterVar& iv) const {
  auto it = node_->attrs.find(iv.get());
  return it == node_->attrs.end() ? ForKind::Serial : it->second.kind;
}

IterVar Stage::bound_thread(const IterVar& iv) const {
  auto it = node_->attrs.find(iv.get());
  return it == node_->attrs.end() ? IterVar() : it->second.thread;
}

Stage Stage::attach_stage() const {
  if (node_->attach_type != AttachType::Scope) return Stage();
  auto st = sched::find_stage(*schedule_, node_->attach_op.get());
  TE_ICHECK(st != nullptr, "attach stage missing from its schedule");
  return Stage(schedule_, st);
}

}  // namespace te
