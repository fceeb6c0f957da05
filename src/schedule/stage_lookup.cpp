#include "schedule/stage_lookup.h"

#include <fmt/format.h>

#include "schedule/messages.h"

namespace te::sched {

int index_of(const std::vector<IterVar>& v, const IterVar& iv) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].same_as(iv)) return static_cast<int>(i);
  return -1;
}

size_t check_leaf(const StageNode& stage, const IterVar& iv, const char* primitive) {
  const std::string& sname = stage.op->name;
  if (!iv.defined()) throw Error(fmt::format("{}: undefined axis given for stage {}", primitive, quote(sname)));
  int pos = index_of(stage.leaf_iter_vars, iv);
  if (pos >= 0) return static_cast<size_t>(pos);
  if (index_of(stage.all_iter_vars, iv) >= 0)
    throw Error(fmt::format("{}: axis {} of stage {} was already split or fused; schedule its results", primitive,
                            quote(iv.name()), quote(sname)));
  throw Error(fmt::format("{}: axis {} is not an axis of stage {} (it belongs to another stage)", primitive,
                          quote(iv.name()), quote(sname)));
}

std::shared_ptr<StageNode> make_stage(const Operation& op) {
  auto s = std::make_shared<StageNode>();
  s->op = op;
  s->origin_op = op;
  if (op->kind == OpKind::Compute) {
    // A row reduction's element loops go inside its reduction loops: each step of the
    // reduction updates a row once, then each of its elements.
    const auto rows =
        op->axis.begin() + static_cast<std::ptrdiff_t>(op->is_row_reduction() ? op->row_shape.size() : op->axis.size());
    s->all_iter_vars.assign(op->axis.begin(), rows);
    s->all_iter_vars.insert(s->all_iter_vars.end(), op->reduce_axis.begin(), op->reduce_axis.end());
    s->all_iter_vars.insert(s->all_iter_vars.end(), rows, op->axis.end());
    s->leaf_iter_vars = s->all_iter_vars;
  }
  return s;
}

void set_operation(StageNode& stage, Operation next) {
  stage.op = std::move(next);
  stage.rewritten_ops.push_back(stage.op);
}

std::shared_ptr<StageNode> find_stage(const ScheduleNode& s, const OperationNode* op) {
  for (const auto& st : s.stages) {
    if (st->op.get() == op || st->origin_op.get() == op) return st;
    for (const Operation& r : st->rewritten_ops)
      if (r.get() == op) return st;
  }
  return nullptr;
}

size_t stage_index(const ScheduleNode& s, const StageNode* stage) {
  for (size_t i = 0; i < s.stages.size(); ++i)
    if (s.stages[i].get() == stage) return i;
  TE_ICHECK(false, "stage not in its schedule");
  return 0;
}

}  // namespace te::sched
