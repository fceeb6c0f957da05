#include "codegen_llvm/check_analysis.h"

namespace te::codegen {
namespace {

class AlwaysRun : public IRVisitor {
 public:
  std::vector<const LoadNode*> loads;

 protected:
  void visit_load(const LoadNode* n) override {
    if (n->predicate.defined()) return;
    loads.push_back(n);
    IRVisitor::visit_load(n);
  }
  void visit_select(const SelectNode* n) override { visit(n->cond); }
  void visit_call(const CallNode* n) override {
    if (n->op == Intrinsic::IfThenElse) {
      visit(n->args[0]);
      return;
    }
    IRVisitor::visit_call(n);
  }
  void visit_binary(const BinaryNode* n) override {
    if (n->op == BinOp::And || n->op == BinOp::Or) {
      visit(n->a);
      return;
    }
    IRVisitor::visit_binary(n);
  }
  void visit_let(const LetNode* n) override { visit(n->value); }
};

}  // namespace

std::vector<const LoadNode*> loads_always_run(const Stmt& s, std::vector<std::pair<Var, Expr>>* lets) {
  AlwaysRun v;
  auto top = [&](Stmt x) {
    // The locals of common-subexpression elimination are computed before their store.
    while (const auto* let = x.as<LetStmtNode>()) {
      v.visit(let->value);
      lets->emplace_back(let->var, substitute(let->value, *lets));
      x = let->body;
    }
    const auto* st = x.as<StoreNode>();
    if (st != nullptr && !st->predicate.defined()) v.visit(st->value);
  };
  if (const auto* seq = s.as<SeqNode>()) {
    for (const Stmt& x : seq->seq) top(x);
  } else {
    top(s);
  }
  return v.loads;
}

}  // namespace te::codegen
