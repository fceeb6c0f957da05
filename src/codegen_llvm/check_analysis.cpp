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

class Buffers : public IRVisitor {
 public:
  std::unordered_set<const BufferNode*> loaded, stored;

 protected:
  void visit_load(const LoadNode* n) override {
    loaded.insert(n->buffer.get());
    IRVisitor::visit_load(n);
  }
  void visit_store(const StoreNode* n) override {
    stored.insert(n->buffer.get());
    IRVisitor::visit_store(n);
  }
};

}  // namespace

std::vector<const LoadNode*> loads_always_run(const Stmt& s) {
  AlwaysRun v;
  auto top = [&](const Stmt& x) {
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

std::unordered_set<const BufferNode*> buffers_loaded(const Expr& e) {
  Buffers v;
  v.visit(e);
  return v.loaded;
}

std::unordered_set<const BufferNode*> buffers_stored(const Stmt& s) {
  Buffers v;
  v.visit(s);
  return v.stored;
}

}  // namespace te::codegen
