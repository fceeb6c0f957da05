// Pass "inline": substitutes each inlined stage's expression into the stages that read it.
#include "lower/passes.h"
#include "schedule/operation_builders.h"

namespace te::lowering {

namespace {

// Rewrites reads of inlined operations (into their expressions) and of operations
// already rewritten (into reads of the new operations).
class Inliner : public IRMutator {
 public:
  std::map<const OperationNode*, Operation> replaced;
  std::map<const OperationNode*, Operation> inlined;  // by current op: its (rewritten) op

 protected:
  Expr mutate_tensor_read(const Expr& e, const TensorReadNode* n) override {
    Expr r = IRMutator::mutate_tensor_read(e, n);
    const auto* rn = r.as<TensorReadNode>();
    auto in = inlined.find(n->op.get());
    if (in != inlined.end()) {
      const Operation& op = in->second;
      std::vector<std::pair<Var, Expr>> args;
      for (size_t d = 0; d < op->axis.size(); ++d) args.emplace_back(op->axis[d].var(), rn->indices[d]);
      return substitute(op->body, args);
    }
    auto rep = replaced.find(n->op.get());
    if (rep == replaced.end()) return r;
    return Expr(std::make_shared<TensorReadNode>(rn->dtype, rep->second, rn->indices, rn->value_index));
  }
};

}  // namespace

Schedule inline_stages(const Schedule& schedule) {
  Schedule s = schedule.copy();
  Inliner inl;
  for (const auto& st : s.get()->stages) {
    if (st->op->kind != OpKind::Compute) continue;
    const OperationNode* old = st->op.get();
    Operation next = sched::map_bodies(
        st->op, [&](const Expr& b) { return inl.mutate(b); }, inl.replaced);
    if (next != st->op) {
      st->op = next;
      inl.replaced[old] = st->op;
    }
    if (st->attach_type == AttachType::Inline) {
      inl.inlined[old] = st->op;
      inl.inlined[st->op.get()] = st->op;
    }
  }
  return s;
}

}  // namespace te::lowering
