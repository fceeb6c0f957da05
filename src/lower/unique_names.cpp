// Pass "unique_names": a loop or let variable named like a variable already in scope (a
// producer's "i" inside its consumer's "i") or like a parameter gets a fresh name ("i_1").
// Variables are told apart by identity, but printed IR and C-like code only see names.
#include <fmt/format.h>

#include <map>
#include <set>

#include "lower/passes.h"

namespace te::lowering {

namespace {

class NameCollector : public IRVisitor {
 public:
  std::set<std::string> names;
  void visit(const Expr& e) override {
    if (e.defined() && e.kind() == ExprKind::Var) names.insert(e.as<VarNode>()->name);
    IRVisitor::visit(e);
  }
  using IRVisitor::visit;

 protected:
  void visit_for(const ForNode* n) override {
    names.insert(n->var.name());
    IRVisitor::visit_for(n);
  }
  void visit_let_stmt(const LetStmtNode* n) override {
    names.insert(n->var.name());
    IRVisitor::visit_let_stmt(n);
  }
};

class Renamer : public IRMutator {
 public:
  Renamer(std::set<std::string> taken, const std::vector<Param>& params) : taken_(std::move(taken)) {
    for (const Param& p : params) {
      ++scope_count_[p.name()];
      taken_.insert(p.name());
    }
  }

 protected:
  Expr mutate_var(const Expr& e, const VarNode* n) override {
    auto it = renamed_.find(n);
    return it == renamed_.end() ? e : Expr(it->second);
  }
  Expr mutate_load(const Expr& e, const LoadNode* n) override {
    Expr r = IRMutator::mutate_load(e, n);
    auto it = buffers_.find(n->buffer.get());
    if (it == buffers_.end()) return r;
    const auto* ln = r.as<LoadNode>();
    return load(it->second, ln->indices, ln->predicate);
  }
  Expr mutate_let(const Expr& e, const LetNode* n) override {
    Expr value = mutate(n->value);
    Var v = bind(n->var);
    Expr body = mutate(n->body);
    unbind(n->var);
    if (v.same_as(n->var) && value.same_as(n->value) && body.same_as(n->body)) return e;
    return let(v, value, body);
  }
  Stmt mutate_store(const Stmt& s, const StoreNode* n) override {
    Stmt r = IRMutator::mutate_store(s, n);
    auto it = buffers_.find(n->buffer.get());
    if (it == buffers_.end()) return r;
    const auto* sn = r.as<StoreNode>();
    return store_like(*sn, it->second, sn->value, sn->indices, sn->predicate);
  }
  Stmt mutate_for(const Stmt& s, const ForNode* n) override {
    Expr mn = mutate(n->min), ext = mutate(n->extent);
    Var v = bind(n->var);
    Stmt body = mutate(n->body);
    unbind(n->var);
    if (v.same_as(n->var) && mn.same_as(n->min) && ext.same_as(n->extent) && body.same_as(n->body)) return s;
    return for_loop(v, mn, ext, n->for_kind, body, n->thread_tag);
  }
  Stmt mutate_let_stmt(const Stmt& s, const LetStmtNode* n) override {
    Expr value = mutate(n->value);
    Var v = bind(n->var);
    Stmt body = mutate(n->body);
    unbind(n->var);
    if (v.same_as(n->var) && value.same_as(n->value) && body.same_as(n->body)) return s;
    return let_stmt(v, value, body);
  }
  Stmt mutate_allocate(const Stmt& s, const AllocateNode* n) override {
    std::vector<Expr> shape;
    bool changed = mutate_all(n->buffer.shape(), &shape);
    Buffer b = n->buffer;
    if (changed) {
      b = Buffer(b.name(), b.dtype(), shape, b.scope(), b.swizzle_bytes(), b.swizzle_row());
      buffers_[n->buffer.get()] = b;
    }
    Stmt body = mutate(n->body);
    if (!changed && body.same_as(n->body)) return s;
    return allocate(b, body);
  }

 private:
  // Enters the scope of v: a fresh variable if its name is taken by one in scope.
  Var bind(const Var& v) {
    const std::string& name = v.name();
    Var out = v;
    if (scope_count_[name] > 0) {
      std::string fresh;
      for (int k = 1; fresh.empty() || taken_.count(fresh); ++k) fresh = fmt::format("{}_{}", name, k);
      taken_.insert(fresh);
      out = Var(fresh, v.dtype());
      renamed_[v.get()] = out;
    }
    ++scope_count_[out.name()];
    bound_.push_back(out);
    return out;
  }
  void unbind(const Var& v) {
    --scope_count_[bound_.back().name()];
    bound_.pop_back();
    renamed_.erase(v.get());
  }

  std::set<std::string> taken_;
  std::map<std::string, int> scope_count_;
  std::map<const VarNode*, Var> renamed_;
  std::map<const BufferNode*, Buffer> buffers_;
  std::vector<Var> bound_;
};

}  // namespace

Stmt unique_names(const Stmt& s, const std::vector<Param>& params) {
  NameCollector c;
  c.visit(s);
  Renamer r(c.names, params);
  return r.mutate(s);
}

}  // namespace te::lowering
