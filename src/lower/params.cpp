// The function's parameters: the argument buffers in order, then every scalar variable
// the function uses that no argument's shape binds (a dimension that is exactly a
// variable binds it), in order of first appearance: argument shapes first, then the body.
#include <set>

#include "lower/passes.h"

namespace te::lowering {

namespace {

class BinderCollector : public IRVisitor {
 public:
  std::set<const VarNode*> bound;

 protected:
  void visit_for(const ForNode* n) override {
    bound.insert(n->var.get());
    IRVisitor::visit_for(n);
  }
  void visit_let_stmt(const LetStmtNode* n) override {
    bound.insert(n->var.get());
    IRVisitor::visit_let_stmt(n);
  }
  void visit_let(const LetNode* n) override {
    bound.insert(n->var.get());
    IRVisitor::visit_let(n);
  }
};

class FreeVarCollector : public IRVisitor {
 public:
  explicit FreeVarCollector(std::set<const VarNode*> skip) : skip_(std::move(skip)) {}
  std::vector<Var> vars;

  void visit(const Expr& e) override {
    if (e.defined() && e.kind() == ExprKind::Var && skip_.insert(e.as<VarNode>()).second)
      vars.emplace_back(std::static_pointer_cast<const VarNode>(e.node()));
    IRVisitor::visit(e);
  }
  using IRVisitor::visit;

 protected:
  void visit_load(const LoadNode* n) override {
    for (const Expr& e : n->buffer.shape()) visit(e);
    IRVisitor::visit_load(n);
  }
  void visit_store(const StoreNode* n) override {
    for (const Expr& e : n->buffer.shape()) visit(e);
    IRVisitor::visit_store(n);
  }

 private:
  std::set<const VarNode*> skip_;
};

}  // namespace

std::vector<Param> make_params(const LowerContext& ctx, const Stmt& body) {
  std::vector<Param> params;
  BinderCollector binders;
  binders.visit(body);
  std::set<const VarNode*> skip = binders.bound;
  for (const Buffer& buf : ctx.arg_buffers) {
    Param p;
    p.buffer = buf;
    params.push_back(p);
    for (const Expr& e : buf.shape())
      if (const auto* v = e.as<VarNode>()) skip.insert(v);
  }
  FreeVarCollector free(skip);
  for (const Buffer& buf : ctx.arg_buffers)
    for (const Expr& e : buf.shape()) free.visit(e);
  free.visit(body);
  for (const Var& v : free.vars) {
    Param p;
    p.var = v;
    params.push_back(p);
  }
  return params;
}

}  // namespace te::lowering
