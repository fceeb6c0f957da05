#include "schedule/graph_queries.h"

#include <algorithm>

#include "expr/analysis.h"
#include "schedule/operation_builders.h"

namespace te::sched {

namespace {

class ReadCollector : public IRVisitor {
 public:
  std::vector<Operation> ops;

 protected:
  void visit_tensor_read(const TensorReadNode* n) override {
    bool seen = std::any_of(ops.begin(), ops.end(), [&](const Operation& o) { return o == n->op; });
    if (!seen) ops.push_back(n->op);
    IRVisitor::visit_tensor_read(n);
  }
};

class ReadReplacer : public IRMutator {
 public:
  explicit ReadReplacer(const std::map<const OperationNode*, Operation>& repl) : repl_(repl) {}

 protected:
  Expr mutate_tensor_read(const Expr& e, const TensorReadNode* n) override {
    Expr r = IRMutator::mutate_tensor_read(e, n);
    auto it = repl_.find(n->op.get());
    if (it == repl_.end()) return r;
    const auto* rn = r.as<TensorReadNode>();
    return Expr(std::make_shared<TensorReadNode>(rn->dtype, it->second, rn->indices, rn->value_index));
  }

 private:
  const std::map<const OperationNode*, Operation>& repl_;
};

}  // namespace

std::vector<Operation> reads_of(const Expr& e) {
  ReadCollector c;
  c.visit(e);
  return c.ops;
}

namespace {
void visit_reduce_bounds(ReadCollector& c, const OperationNode& op) {
  for (const IterVar& iv : op.reduce_axis) {
    c.visit(iv.dom().min);
    c.visit(iv.dom().extent);
  }
}
}  // namespace

std::vector<Operation> reads_of(const OperationNode& op) {
  ReadCollector c;
  if (op.scatter_base) c.ops.push_back(op.scatter_base);
  for (const Expr& b : op.bodies()) c.visit(b);
  visit_reduce_bounds(c, op);
  for (const Expr& e : op.scatter_index) c.visit(e);
  return c.ops;
}

std::vector<Operation> bound_reads_of(const OperationNode& op) {
  ReadCollector c;
  visit_reduce_bounds(c, op);
  return c.ops;
}

bool reads(const Operation& op, const OperationNode* producer) {
  if (op->kind != OpKind::Compute) return false;
  for (const Operation& in : reads_of(*op))
    if (in.get() == producer) return true;
  return false;
}

Expr replace_reads(const Expr& e, const std::map<const OperationNode*, Operation>& repl) {
  if (repl.empty()) return e;
  ReadReplacer r(repl);
  return r.mutate(e);
}

void propagate_replacements(ScheduleNode& s, std::map<const OperationNode*, Operation> repl) {
  for (auto& st : s.stages) {
    if (st->op->kind != OpKind::Compute) continue;
    Operation next = map_bodies(
        st->op, [&](const Expr& b) { return replace_reads(b, repl); }, repl);
    if (next == st->op) continue;
    repl[st->op.get()] = next;
    st->op = next;
  }
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
