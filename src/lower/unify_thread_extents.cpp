// Pass "unify_thread_extents": inside one device region (the subtree of an outermost
// thread-bound loop, one GPU kernel) a thread tag is one hardware index with one extent.
// Loops of a tag with fewer iterations than the region's largest (a shared copy fetched
// by 16 threads in a 32-thread block) run over the largest extent and guard their body.
// Extents that cannot be compared, and loops whose body holds a barrier (a guard would
// split the block at it), are left for the backend to report.
#include <map>

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
  } f;
  f.visit(s);
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
    if (has_barrier(f->body)) return r;
    Stmt body = if_then_else(f->var < f->min + f->extent, f->body);
    return for_loop(f->var, f->min, it->second, f->for_kind, body, f->thread_tag);
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
        if (can_prove(widest <= e, known_)) widest = e;
        else comparable = false;
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
