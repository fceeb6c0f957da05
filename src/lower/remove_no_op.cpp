// Pass "remove_no_op": drops statements that do nothing: loops that run no iteration or
// whose body does nothing, branches that do nothing, evaluates (expressions have no side
// effects), allocations and lets around nothing, and stores of an element's own value
// (a blended update whose condition no lane takes: vectorize's blend_private_store).
#include "lower/passes.h"
#include "te/lower.h"

namespace te {

namespace lowering {

bool is_no_op(const Stmt& s) {
  if (!s.defined()) return true;
  if (const auto* q = s.as<SeqNode>()) return q->seq.empty();
  return s.kind() == StmtKind::Evaluate;
}

}  // namespace lowering

namespace {

using lowering::is_no_op;

Stmt no_op() { return seq({}); }

class NoOpRemover : public IRMutator {
 protected:
  Stmt mutate_for(const Stmt& s, const ForNode* n) override {
    if (const int64_t* e = as_const_int(n->extent); e && *e <= 0) return no_op();
    Stmt r = IRMutator::mutate_for(s, n);
    return is_no_op(r.as<ForNode>()->body) ? no_op() : r;
  }
  Stmt mutate_if_then_else(const Stmt& s, const IfThenElseNode* n) override {
    Stmt t = mutate(n->then_case);
    Stmt e = n->else_case.defined() ? mutate(n->else_case) : Stmt();
    bool t_empty = is_no_op(t), e_empty = is_no_op(e);
    if (t_empty && e_empty) return no_op();
    if (is_one(n->cond)) return t;
    if (is_zero(n->cond)) return e_empty ? no_op() : e;
    if (t_empty) return if_then_else(!n->cond, e);
    if (e_empty) e = Stmt();
    if (t.same_as(n->then_case) && e.same_as(n->else_case)) return s;
    return if_then_else(n->cond, t, e);
  }
  Stmt mutate_seq(const Stmt& s, const SeqNode* n) override {
    std::vector<Stmt> kept;
    bool changed = false;
    for (const Stmt& c : n->seq) {
      Stmt m = mutate(c);
      changed = changed || !m.same_as(c);
      if (is_no_op(m)) {
        changed = true;
        continue;
      }
      kept.push_back(m);
    }
    return changed ? seq(kept) : s;
  }
  Stmt mutate_evaluate(const Stmt&, const EvaluateNode*) override { return no_op(); }
  Stmt mutate_store(const Stmt& s, const StoreNode* n) override {
    const auto* l = n->value.as<LoadNode>();
    if (n->atomic_add || l == nullptr || l->predicate.defined() || !l->buffer.same_as(n->buffer) ||
        l->indices.size() != n->indices.size())
      return s;
    for (size_t d = 0; d < n->indices.size(); ++d)
      if (!equal(l->indices[d], n->indices[d])) return s;
    return no_op();
  }
  Stmt mutate_allocate(const Stmt& s, const AllocateNode* n) override {
    Stmt r = IRMutator::mutate_allocate(s, n);
    return is_no_op(r.as<AllocateNode>()->body) ? no_op() : r;
  }
  Stmt mutate_let_stmt(const Stmt& s, const LetStmtNode* n) override {
    Stmt r = IRMutator::mutate_let_stmt(s, n);
    return is_no_op(r.as<LetStmtNode>()->body) ? no_op() : r;
  }
};

}  // namespace

Stmt remove_no_ops(const Stmt& s) {
  NoOpRemover r;
  return r.mutate(s);
}

}  // namespace te
