#include "schedule/scatter_rules.h"

#include <fmt/format.h>

#include "schedule/graph_queries.h"
#include "schedule/messages.h"

namespace te::sched {

const StageNode* scatter_of_base(const ScheduleNode& s, const OperationNode* op) {
  for (const auto& st : s.stages)
    if (st->op->scatter_base.get() == op) return st.get();
  return nullptr;
}

void refuse_scatter_parts(const ScheduleNode& s, const OperationNode& op, const char* primitive, const char* what) {
  if (op.is_scatter())
    throw Error(
        fmt::format("{}: stage {} is a scatter, which writes anywhere in its output, so it cannot be {}; "
                    "it is computed at the root",
                    primitive, quote(op.name), what));
  if (const StageNode* sc = scatter_of_base(s, &op))
    throw Error(
        fmt::format("{}: stage {} is the base of scatter {}, which fills its output in place before the "
                    "scatter runs, so it cannot be {}; it is computed at the root",
                    primitive, quote(op.name), quote(sc->op->name), what));
}

bool indexes_output_directly(const OperationNode& op, const IterVar& axis) {
  for (const Expr& e : op.scatter_index)
    if (const auto* v = e.as<VarNode>(); v != nullptr && v == axis.var().get()) return true;
  return false;
}

const StageNode* bound_reader_of(const ScheduleNode& s, const OperationNode* op) {
  for (const auto& st : s.stages)
    if (st->op->kind == OpKind::Compute)
      for (const Operation& in : bound_reads_of(*st->op))
        if (in.get() == op) return st.get();
  return nullptr;
}

}  // namespace te::sched
