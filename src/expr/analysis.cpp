#include "expr/analysis.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "expr/int_arith.h"

namespace te {
namespace {

// Stops walking once the answer is known.
class VarUse : public IRVisitor {
 public:
  explicit VarUse(const VarPredicate& pick) : pick_(pick) {}
  bool found = false;
  using IRVisitor::visit;
  void visit(const Expr& e) override {
    if (!found && e.defined() && seen_.insert(e.get()).second) IRVisitor::visit(e);  // once per node
  }
  void visit(const Stmt& s) override {
    if (!found && s.defined()) IRVisitor::visit(s);
  }

 protected:
  void visit_var(const VarNode* n) override { found = found || pick_(n); }

 private:
  const VarPredicate& pick_;
  std::unordered_set<const ExprNode*> seen_;
};

class FreeVars : public IRVisitor {
 public:
  std::vector<Var> vars;
  using IRVisitor::visit;
  void visit(const Expr& e) override {
    if (!e.defined() || !seen_.insert(e.get()).second) return;  // once per node
    if (const auto* v = e.as<VarNode>()) {
      if (std::count(bound_.begin(), bound_.end(), v) == 0)
        vars.emplace_back(std::static_pointer_cast<const VarNode>(e.node()));
      return;
    }
    IRVisitor::visit(e);
  }

 protected:
  void visit_let(const LetNode* n) override {
    visit(n->value);
    bound_.push_back(n->var.get());
    visit(n->body);
    bound_.pop_back();
  }

 private:
  std::vector<const VarNode*> bound_;
  std::unordered_set<const ExprNode*> seen_;
};

class Mentioned : public IRVisitor {
 public:
  Mentions found;
  using IRVisitor::visit;
  void visit(const Expr& e) override {
    if (const auto* v = e.defined() ? e.as<VarNode>() : nullptr)
      if (vars_.insert(v).second) found.vars.emplace_back(std::static_pointer_cast<const VarNode>(e.node()));
    IRVisitor::visit(e);
  }

 protected:
  void visit_load(const LoadNode* n) override {
    buffer(n->buffer);
    for (const Expr& e : n->buffer.shape()) visit(e);
    IRVisitor::visit_load(n);
  }
  void visit_store(const StoreNode* n) override {
    buffer(n->buffer);
    for (const Expr& e : n->buffer.shape()) visit(e);
    IRVisitor::visit_store(n);
  }
  void visit_allocate(const AllocateNode* n) override {
    for (const Expr& e : n->buffer.shape()) visit(e);  // the buffer itself is defined inside
    IRVisitor::visit_allocate(n);
  }

 private:
  void buffer(const Buffer& b) {
    if (buffers_.insert(b.get()).second) found.buffers.push_back(b);
  }
  std::unordered_set<const VarNode*> vars_;
  std::unordered_set<const BufferNode*> buffers_;
};

class Binders : public IRVisitor {
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

class TensorReads : public IRVisitor {
 public:
  std::vector<const TensorReadNode*> reads;

 protected:
  void visit_tensor_read(const TensorReadNode* n) override {
    reads.push_back(n);
    IRVisitor::visit_tensor_read(n);
  }
};

class Buffers : public IRVisitor {
 public:
  BufferUse use;
  using IRVisitor::visit;
  void visit(const Expr& e) override {
    if (e.defined() && seen_.insert(e.get()).second) IRVisitor::visit(e);  // once per node
  }

 protected:
  void visit_load(const LoadNode* n) override {
    use.loaded.insert(n->buffer.get());
    IRVisitor::visit_load(n);
  }
  void visit_store(const StoreNode* n) override {
    use.stored.insert(n->buffer.get());
    IRVisitor::visit_store(n);
  }

 private:
  std::unordered_set<const ExprNode*> seen_;
};

}  // namespace

bool uses_any_var(const Expr& e, const VarPredicate& pick) {
  VarUse v(pick);
  v.visit(e);
  return v.found;
}
bool uses_any_var(const Stmt& s, const VarPredicate& pick) {
  VarUse v(pick);
  v.visit(s);
  return v.found;
}
bool uses_var(const Expr& e, const VarNode* var) {
  return uses_any_var(e, [var](const VarNode* n) { return n == var; });
}
bool uses_var(const Stmt& s, const VarNode* var) {
  return uses_any_var(s, [var](const VarNode* n) { return n == var; });
}
bool uses_any_of(const Expr& e, const std::vector<Var>& vars) {
  return uses_any_var(e, [&](const VarNode* n) {
    return std::any_of(vars.begin(), vars.end(), [n](const Var& v) { return v.get() == n; });
  });
}

std::vector<Var> free_vars(const Expr& e) {
  FreeVars f;
  f.visit(e);
  return f.vars;
}

Mentions mentions(const Stmt& s) {
  Mentioned m;
  m.visit(s);
  return m.found;
}

std::set<const VarNode*> bound_vars(const Stmt& s) {
  Binders b;
  b.visit(s);
  return b.bound;
}

std::vector<const TensorReadNode*> tensor_reads(const Expr& e) {
  TensorReads r;
  r.visit(e);
  return r.reads;
}

namespace {
class TensorReadMapper : public IRMutator {
 public:
  explicit TensorReadMapper(const std::function<Expr(const TensorReadNode*, const Expr&)>& with) : with_(with) {}

 protected:
  Expr mutate_tensor_read(const Expr& e, const TensorReadNode* n) override {
    Expr r = IRMutator::mutate_tensor_read(e, n);
    return with_(r.as<TensorReadNode>(), r);
  }

 private:
  const std::function<Expr(const TensorReadNode*, const Expr&)>& with_;
};
}  // namespace

Expr map_tensor_reads(const Expr& e, const std::function<Expr(const TensorReadNode* read, const Expr& e)>& with) {
  TensorReadMapper m(with);
  return m.mutate(e);
}

BufferUse buffer_use(const Stmt& s) {
  Buffers b;
  b.visit(s);
  return b.use;
}
BufferUse buffer_use(const Expr& e) {
  Buffers b;
  b.visit(e);
  return b.use;
}

namespace {

bool fragment_scope(MemoryScope s) { return s == MemoryScope::Warp || s == MemoryScope::Warpgroup; }

bool loads_fragment(const Expr& e) {
  for (const BufferNode* b : buffer_use(e).loaded)
    if (fragment_scope(b->scope)) return true;
  return false;
}

// Whether s holds only serial loops, lets, branches, sequences and stores (*touches:
// whether one of them loads or stores a fragment).
bool nest_statements(const StmtNode* s, bool* touches) {
  switch (s->kind) {
    case StmtKind::For: {
      auto* n = static_cast<const ForNode*>(s);
      return n->for_kind != ForKind::ThreadBinding && n->for_kind != ForKind::Vectorized &&
             nest_statements(n->body.get(), touches);
    }
    case StmtKind::LetStmt: {
      auto* n = static_cast<const LetStmtNode*>(s);
      *touches |= loads_fragment(n->value);
      return nest_statements(n->body.get(), touches);
    }
    case StmtKind::Seq:
      for (const Stmt& x : static_cast<const SeqNode*>(s)->seq)
        if (!nest_statements(x.get(), touches)) return false;
      return true;
    case StmtKind::IfThenElse: {
      auto* n = static_cast<const IfThenElseNode*>(s);
      *touches |= loads_fragment(n->cond);
      return nest_statements(n->then_case.get(), touches) &&
             (!n->else_case.defined() || nest_statements(n->else_case.get(), touches));
    }
    case StmtKind::Store: {
      auto* n = static_cast<const StoreNode*>(s);
      *touches |= fragment_scope(n->buffer.scope()) || loads_fragment(n->value);
      for (const Expr& i : n->indices) *touches |= loads_fragment(i);
      return true;
    }
    default: return false;
  }
}

}  // namespace

bool is_fragment_nest(const StmtNode* root) {
  bool touches = false;
  return root->kind == StmtKind::For && nest_statements(root, &touches) && touches;
}

namespace {

class IntEvaluator {
 public:
  explicit IntEvaluator(const VarValue& value_of) : value_of_(value_of) {}

  std::optional<int64_t> eval(const Expr& e) {
    if (!e.defined() || !e.dtype().is_scalar() || !(e.dtype().is_integer() || e.dtype().is_bool())) return std::nullopt;
    DataType t = e.dtype();
    switch (e->kind) {
      case ExprKind::IntImm: return e.as<IntImmNode>()->value;
      case ExprKind::Var: {
        auto* n = e.as<VarNode>();
        if (auto it = lets_.find(n); it != lets_.end()) return it->second;
        std::optional<int64_t> v = value_of_(n);
        if (!v) return std::nullopt;
        return arith::wrap(*v, t);
      }
      case ExprKind::Cast: {
        auto* n = e.as<CastNode>();
        auto v = eval(n->value);
        if (!v) return std::nullopt;
        return arith::wrap(*v, t);
      }
      case ExprKind::Binary: {
        auto* n = e.as<BinaryNode>();
        auto a = eval(n->a);
        if (!a) return std::nullopt;
        auto b = eval(n->b);
        if (!b) return std::nullopt;
        return arith::binary(n->op, *a, *b, n->a.dtype());
      }
      case ExprKind::Not: {
        auto a = eval(e.as<NotNode>()->a);
        if (!a) return std::nullopt;
        return int64_t{*a == 0};
      }
      case ExprKind::Select: {
        auto* n = e.as<SelectNode>();
        auto c = eval(n->cond), x = eval(n->true_value), y = eval(n->false_value);
        if (!c || !x || !y) return std::nullopt;
        return *c ? *x : *y;
      }
      case ExprKind::Call: {
        auto* n = e.as<CallNode>();
        if (n->op == Intrinsic::Likely) return eval(n->args[0]);
        if (n->op != Intrinsic::IfThenElse) return std::nullopt;
        auto c = eval(n->args[0]);
        if (!c) return std::nullopt;
        return eval(*c ? n->args[1] : n->args[2]);
      }
      case ExprKind::Let: {
        auto* n = e.as<LetNode>();
        auto v = eval(n->value);
        if (!v) return std::nullopt;
        lets_[n->var.get()] = *v;
        return eval(n->body);
      }
      default: return std::nullopt;
    }
  }

 private:
  const VarValue& value_of_;
  std::unordered_map<const VarNode*, int64_t> lets_;
};

}  // namespace

std::vector<Expr> conjuncts(const Expr& e) {
  const auto* b = e.as<BinaryNode>();
  if (b == nullptr || b->op != BinOp::And) return {e};
  std::vector<Expr> parts = conjuncts(b->a), right = conjuncts(b->b);
  parts.insert(parts.end(), right.begin(), right.end());
  return parts;
}

std::optional<LinearIn> linear_in(const Expr& e, const Var& v, const VarBounds& known) {
  const DataType t = v.dtype();
  Expr rest = simplify(substitute(e, {{v, make_zero(t)}}), known);
  const Expr slope = simplify(substitute(e, {{v, make_const(t, 1)}}) - rest, known);
  const int64_t* coef = as_const_int(slope);
  if (coef == nullptr || !is_zero(simplify(e - (v * make_const(t, *coef) + rest), known))) return std::nullopt;
  return LinearIn{*coef, rest};
}

std::optional<int64_t> evaluate_int(const Expr& e, const VarValue& value_of) { return IntEvaluator(value_of).eval(e); }

}  // namespace te
