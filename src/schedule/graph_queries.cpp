#include "schedule/graph_queries.h"
#include "schedule/stage_lookup.h"

#include <algorithm>

#include "expr/analysis.h"
#include "schedule/operation_builders.h"

namespace te::sched {

namespace {

// Appends the operations e reads that ops lacks, in order of first read.
void add_reads(std::vector<Operation>& ops, const Expr& e) {
  for (const TensorReadNode* n : tensor_reads(e))
    if (std::none_of(ops.begin(), ops.end(), [&](const Operation& o) { return o == n->op; })) ops.push_back(n->op);
}

}  // namespace

std::vector<Operation> reads_of(const Expr& e) {
  std::vector<Operation> ops;
  add_reads(ops, e);
  return ops;
}

namespace {
void add_reduce_bound_reads(std::vector<Operation>& ops, const OperationNode& op) {
  for (const IterVar& iv : op.reduce_axis) {
    add_reads(ops, iv.dom().min);
    add_reads(ops, iv.dom().extent);
  }
}
}  // namespace

std::vector<Operation> reads_of(const OperationNode& op) {
  std::vector<Operation> ops;
  if (op.scatter_base) ops.push_back(op.scatter_base);
  for (const Expr& b : op.bodies()) add_reads(ops, b);
  add_reduce_bound_reads(ops, op);
  for (const Expr& e : op.scatter_index) add_reads(ops, e);
  return ops;
}

std::vector<Operation> bound_reads_of(const OperationNode& op) {
  std::vector<Operation> ops;
  add_reduce_bound_reads(ops, op);
  return ops;
}

bool reads(const Operation& op, const OperationNode* producer) {
  if (op->kind != OpKind::Compute) return false;
  for (const Operation& in : reads_of(*op))
    if (in.get() == producer) return true;
  return false;
}

Expr replace_reads(const Expr& e, const std::map<const OperationNode*, Operation>& repl) {
  if (repl.empty()) return e;
  return map_tensor_reads(e, [&](const TensorReadNode* n, const Expr& read) {
    auto it = repl.find(n->op.get());
    if (it == repl.end()) return read;
    return Expr(std::make_shared<TensorReadNode>(n->dtype, it->second, n->indices, n->value_index));
  });
}

void propagate_replacements(ScheduleNode& s, std::map<const OperationNode*, Operation> repl) {
  for (auto& st : s.stages) {
    if (st->op->kind != OpKind::Compute) continue;
    Operation next = map_bodies(
        st->op, [&](const Expr& b) { return replace_reads(b, repl); }, repl);
    if (next == st->op) continue;
    repl[st->op.get()] = next;
    set_operation(*st, next);
  }
}

void replace_definition(ScheduleNode& s, StageNode& stage, Operation next) {
  Operation old = stage.op;
  set_operation(stage, std::move(next));
  propagate_replacements(s, {{old.get(), stage.op}});
}

bool has_dependent_bounds(const IterVar& iv, const OperationNode& op) {
  std::vector<Var> vars;
  for (const IterVar& a : op.axis) vars.push_back(a.var());
  for (const IterVar& a : op.reduce_axis) vars.push_back(a.var());
  for (const Expr& e : {iv.dom().min, iv.dom().extent}) {
    if (!reads_of(e).empty()) return true;
    if (uses_any_of(e, vars)) return true;
  }
  return false;
}

}  // namespace te::sched
