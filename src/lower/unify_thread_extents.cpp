// Pass "unify_thread_extents": inside one device region (the subtree of an outermost
// thread-bound loop, one GPU kernel) a thread tag is one hardware index with one extent.
// Loops of a tag with fewer iterations than the region's largest (a shared copy fetched
// by 16 threads in a 32-thread block) run over the largest extent and guard their body;
// around a barrier in the body (a shared reduction's) the guard moves inside, so every
// thread still reaches it; a cross-thread reduction's marker takes the guard into its
// predicate instead (the extra threads add the identity). Extents that cannot be compared, and barriers under loop
// bounds or conditions that read memory, are left for the backend to report.
#include <map>

#include "lower/allreduce_marker.h"
#include "lower/passes.h"

namespace te::lowering {

namespace {

class ExtentCollector : public IRVisitor {
 public:
  std::map<std::string, std::vector<Expr>> extents;

 protected:
  void visit_for(const ForNode* n) override {
    if (n->for_kind == ForKind::ThreadBinding) extents[n->thread_tag].push_back(n->extent);
    IRVisitor::visit_for(n);
  }
};

bool has_barrier(const Stmt& s) {
  class Finder : public IRVisitor {
   public:
    bool found = false;

   protected:
    void visit_barrier(const BarrierNode*) override { found = true; }
    // Cross-thread reductions synchronise the threads too.
    void visit_call(const CallNode* n) override {
      found = found || n->op == Intrinsic::ThreadAllreduce || n->op == Intrinsic::WarpShuffleDown;
      IRVisitor::visit_call(n);
    }
  } f;
  f.visit(s);
  return f.found;
}

bool has_load(const Expr& e) {
  class Finder : public IRVisitor {
   public:
    bool found = false;

   protected:
    void visit_load(const LoadNode*) override { found = true; }
  } f;
  f.visit(e);
  return f.found;
}

class Widener : public IRMutator {
 public:
  explicit Widener(std::map<std::string, Expr> target) : target_(std::move(target)) {}

 protected:
  Stmt mutate_for(const Stmt& s, const ForNode* n) override {
    Stmt r = IRMutator::mutate_for(s, n);
    if (n->for_kind != ForKind::ThreadBinding) return r;
    auto it = target_.find(n->thread_tag);
    if (it == target_.end() || equal(it->second, n->extent)) return r;
    const auto* f = r.as<ForNode>();
    Stmt body = guard(f->body, f->var < f->min + f->extent);
    if (!body.defined()) return r;
    return for_loop(f->var, f->min, it->second, f->for_kind, body, f->thread_tag);
  }

  // s run only where cond holds, every barrier in s still reached by all the block's
  // threads: the condition moves inside the statements around each barrier, whose
  // loop bounds, lets and conditions (free of loads, so harmless to evaluate in the
  // extra threads) run everywhere. Undefined when s cannot be guarded so.
  static Stmt guard(const Stmt& s, const Expr& cond) {
    if (!has_barrier(s)) return if_then_else(cond, s);
    switch (s.kind()) {
      case StmtKind::Barrier: return s;
      case StmtKind::Evaluate: {
        std::optional<AllreduceMarker> m = as_allreduce_marker(s);
        if (!m) return Stmt();
        m->predicate = m->predicate && cond;
        return make_allreduce_marker(*m);
      }
      case StmtKind::Seq: {
        std::vector<Stmt> kids;
        for (const Stmt& c : s.as<SeqNode>()->seq) {
          kids.push_back(guard(c, cond));
          if (!kids.back().defined()) return Stmt();
        }
        return seq(kids);
      }
      case StmtKind::For: {
        const auto* n = s.as<ForNode>();
        Stmt body = guard(n->body, cond);
        if (!body.defined() || has_load(n->min) || has_load(n->extent)) return Stmt();
        return for_loop(n->var, n->min, n->extent, n->for_kind, body, n->thread_tag);
      }
      case StmtKind::LetStmt: {
        const auto* n = s.as<LetStmtNode>();
        Stmt body = guard(n->body, cond);
        if (!body.defined() || has_load(n->value)) return Stmt();
        return let_stmt(n->var, n->value, body);
      }
      case StmtKind::Allocate: {
        const auto* n = s.as<AllocateNode>();
        Stmt body = guard(n->body, cond);
        return body.defined() ? allocate(n->buffer, body) : Stmt();
      }
      case StmtKind::IfThenElse: {
        const auto* n = s.as<IfThenElseNode>();
        Stmt then_case = guard(n->then_case, cond);
        Stmt else_case = n->else_case.defined() ? guard(n->else_case, cond) : Stmt();
        if (!then_case.defined() || (n->else_case.defined() && !else_case.defined()) || has_load(n->cond))
          return Stmt();
        return if_then_else(n->cond, then_case, else_case);
      }
      default: return Stmt();
    }
  }

 private:
  std::map<std::string, Expr> target_;
};

class RegionFinder : public IRMutator {
 public:
  explicit RegionFinder(const VarBounds& known) : known_(known) {}

 protected:
  Stmt mutate_for(const Stmt& s, const ForNode* n) override {
    if (n->for_kind != ForKind::ThreadBinding) return IRMutator::mutate_for(s, n);
    ExtentCollector c;
    c.visit(s);
    std::map<std::string, Expr> target;
    for (const auto& [tag, extents] : c.extents) {
      Expr widest = extents[0];
      bool comparable = true;
      for (const Expr& e : extents) {
        if (can_prove(e <= widest, known_)) continue;
        if (can_prove(widest <= e, known_))
          widest = e;
        else
          comparable = false;
      }
      if (comparable) target[tag] = widest;
    }
    return Widener(target).mutate(s);
  }

 private:
  const VarBounds& known_;
};

}  // namespace

Stmt unify_thread_extents(const Stmt& s, const VarBounds& known) {
  RegionFinder r(known);
  return r.mutate(s);
}

}  // namespace te::lowering
