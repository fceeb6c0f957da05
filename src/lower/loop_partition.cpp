// Pass "loop_partition": a loop whose body is guarded by likely(cond) (an if, or a
// select's condition), with cond linear in the loop variable, splits into the part where
// cond provably holds for every iteration of the loops inside (the guard removed, the
// select's first value taken) and the rest (the guard kept).
// Conditions on threadIdx variables of enclosing loops are left alone: a split point
// that differs between threads would make their control flow diverge; a lane nest (a
// loop over "warp" and "warpgroup" fragments, spread over the lanes) is only narrowed.
#include <optional>

#include "expr/analysis.h"
#include "lower/int_set.h"
#include "lower/loop_bounds.h"
#include "lower/passes.h"

namespace te {

namespace lowering {

namespace {

struct Candidate {
  Expr guard;  // likely(cond), as it appears in the body
  Expr cond;
  RelaxMap inner;  // loops between the partitioned loop and the guard
};

class CandidateFinder : public IRVisitor {
 public:
  CandidateFinder(const Var& x, const RelaxMap& thread_vars, const std::vector<Expr>& frozen)
      : x_(x), thread_vars_(thread_vars), frozen_(frozen) {}
  std::vector<Candidate> found;

 protected:
  void visit_for(const ForNode* n) override {
    inner_[n->var.get()] = Range::from_min_extent(n->min, n->extent);
    IRVisitor::visit_for(n);
    inner_.erase(n->var.get());
  }
  void visit_let_stmt(const LetStmtNode* n) override {
    opaque_[n->var.get()] = Range();
    IRVisitor::visit_let_stmt(n);
    opaque_.erase(n->var.get());
  }
  // (A select inside a let may test the let's variable, which has no value out here.)
  void visit_let(const LetNode* n) override {
    opaque_[n->var.get()] = Range();
    IRVisitor::visit_let(n);
    opaque_.erase(n->var.get());
  }
  void visit_if_then_else(const IfThenElseNode* n) override {
    consider(n->cond);
    IRVisitor::visit_if_then_else(n);
  }
  // select(likely(c), a, b), as Halide's partitioning takes it too: a causal mask, whose
  // blocks below the diagonal need no mask.
  void visit_select(const SelectNode* n) override {
    consider(n->cond);
    IRVisitor::visit_select(n);
  }

 private:
  void consider(const Expr& cond) {
    const auto* call = cond.as<CallNode>();
    if (!call || call->op != Intrinsic::Likely) return;
    const Expr& c = call->args[0];
    RelaxMap xm{{x_.get(), Range()}};
    bool is_frozen = false;
    for (const Expr& f : frozen_) is_frozen = is_frozen || equal(f, cond);
    if (!is_frozen && uses_any(c, xm) && !uses_any(c, thread_vars_) && !uses_any(c, opaque_))
      found.push_back({cond, c, inner_});
  }

  const Var& x_;
  const RelaxMap& thread_vars_;
  const std::vector<Expr>& frozen_;
  RelaxMap inner_, opaque_;
};

// cond as g < 0.
Expr as_negative(const Expr& cond) {
  const auto* b = cond.as<BinaryNode>();
  if (!b || !b->a.dtype().is_integer() || !b->a.dtype().is_scalar()) return Expr();
  switch (b->op) {
    case BinOp::LT: return b->a - b->b;
    case BinOp::LE: return b->a - b->b - 1;
    case BinOp::GT: return b->b - b->a;
    case BinOp::GE: return b->b - b->a - 1;
    default: return Expr();
  }
}

// a <= b, also for floor divisions by the same positive constant.
bool prove_le(const Expr& a, const Expr& b, const VarBounds& known) {
  if (can_prove(a <= b, known)) return true;
  const auto* da = a.as<BinaryNode>();
  const auto* db = b.as<BinaryNode>();
  if (da && db && da->op == BinOp::Div && db->op == BinOp::Div && equal(da->b, db->b)) {
    const int64_t* c = as_const_int(da->b);
    return c && *c > 0 && can_prove(da->a <= db->a, known);
  }
  return false;
}

class GuardRemover : public IRMutator {
 public:
  explicit GuardRemover(const std::vector<Expr>& guards) : guards_(guards) {}

 protected:
  Stmt mutate_if_then_else(const Stmt& s, const IfThenElseNode* n) override {
    return removed(n->cond) ? mutate(n->then_case) : IRMutator::mutate_if_then_else(s, n);
  }
  Expr mutate_select(const Expr& e, const SelectNode* n) override {
    return removed(n->cond) ? mutate(n->true_value) : IRMutator::mutate_select(e, n);
  }

 private:
  bool removed(const Expr& cond) const {
    for (const Expr& g : guards_)
      if (equal(cond, g)) return true;
    return false;
  }
  const std::vector<Expr>& guards_;
};

// Whether s allocates shared memory: two copies of such a loop would declare it twice (a
// GPU block's shared memory is static), so it is not partitioned.
bool allocates_shared(const Stmt& s) {
  class Finder : public IRVisitor {
   public:
    bool found = false;

   protected:
    void visit_allocate(const AllocateNode* n) override {
      found = found || n->buffer.scope() == MemoryScope::Shared;
      IRVisitor::visit_allocate(n);
    }
  } f;
  f.visit(s);
  return f.found;
}

class Partitioner : public IRMutator {
 public:
  explicit Partitioner(VarBounds known) : known_(std::move(known)) {}

 protected:
  Stmt mutate_for(const Stmt& s, const ForNode* n) override {
    VarBounds saved = known_;
    add_range_bounds(known_, n->var, n->min, n->extent);
    Stmt out;
    bool thread = n->for_kind == ForKind::ThreadBinding && n->thread_tag.rfind("threadIdx", 0) == 0;
    if (thread) thread_vars_[n->var.get()] = Range();
    if (n->for_kind == ForKind::ThreadBinding || n->for_kind == ForKind::Vectorized || allocates_shared(n->body) ||
        !try_partition(n, &out))
      out = IRMutator::mutate_for(s, n);
    if (thread) thread_vars_.erase(n->var.get());
    known_ = saved;
    return out;
  }

 private:
  struct SplitPoint {
    Expr at;  // the guard holds for x < at (upper) or x >= at (lower)
    bool upper;
  };

  // Where the guard of c starts or stops holding for every inner iteration.
  std::optional<SplitPoint> split_point(const ForNode* n, const Candidate& c) {
    Expr g = as_negative(c.cond);
    if (!g.defined()) return std::nullopt;
    DataType t = n->var.dtype();
    g = simplify(g, known_);
    const std::optional<LinearIn> linear = linear_in(g, n->var, known_);
    if (!linear || linear->coef == 0) return std::nullopt;
    const int64_t* coef = &linear->coef;
    const Expr& g0 = linear->rest;
    // g = coef * x + g0 with g0 free of x: the guard holds for every inner iteration
    // when coef * x + max(g0) < 0.
    Expr rest_max = eval_set(g0, c.inner, known_).max;
    // (An inner loop whose extent uses x, a triangular nest, bounds the rest only in terms
    // of x itself: no split point.)
    if (!rest_max.defined() || uses_var(rest_max, n->var.get())) return std::nullopt;
    bool upper = *coef > 0;
    Expr a = make_const(rest_max.dtype(), upper ? *coef : -*coef);
    Expr at = upper ? simplify((a - rest_max - 1) / a, known_) : simplify(rest_max / a + 1, known_);
    if (at.dtype() != t) at = simplify(cast(t, at), known_);
    return SplitPoint{at, upper};
  }

  bool try_partition(const ForNode* n, Stmt* out) {
    CandidateFinder finder(n->var, thread_vars_, frozen_);
    finder.visit(n->body);
    Expr end = simplify(n->min + n->extent, known_);
    std::vector<std::optional<SplitPoint>> points;
    for (const Candidate& c : finder.found) points.push_back(split_point(n, c));
    for (size_t ci = 0; ci < points.size(); ++ci) {
      if (!points[ci]) continue;
      Expr split = points[ci]->at;
      bool upper = points[ci]->upper;
      bool before_start = prove_le(split, n->min, known_);
      bool after_end = prove_le(end, split, known_);
      // The guard never holds on a whole iteration of this loop: nothing to gain.
      if ((upper && before_start) || (!upper && after_end)) continue;
      // Every guard that also holds wherever this one does leaves the guard-free part.
      std::vector<Expr> removed, all;
      for (size_t k = 0; k < points.size(); ++k) {
        all.push_back(finder.found[k].guard);
        const auto& p = points[k];
        if (k == ci ||
            (p && p->upper == upper && (upper ? prove_le(split, p->at, known_) : prove_le(p->at, split, known_))))
          removed.push_back(finder.found[k].guard);
      }
      GuardRemover remover(removed);
      Stmt free_body = simplify(remover.mutate(n->body), known_);
      if ((upper && after_end) || (!upper && before_start)) {
        *out = mutate(for_loop(n->var, n->min, n->extent, n->for_kind, free_body, n->thread_tag));
        return true;
      }
      // A split point that might fall outside the loop would need clamping; the two loops
      // that gives are seldom worth their bounds arithmetic, so keep the guard instead.
      if (!prove_le(n->min, split, known_) || !prove_le(split, end, known_)) continue;
      Expr first_extent = simplify(split - n->min, known_);
      Expr second_extent = simplify(end - split, known_);
      Stmt first_body = upper ? free_body : n->body;
      Stmt second_body = upper ? n->body : free_body;
      Stmt first = for_loop(n->var, n->min, first_extent, n->for_kind, first_body, n->thread_tag);
      Stmt second = for_loop(n->var, split, second_extent, n->for_kind, second_body, n->thread_tag);
      // Partition the guard-free part further; only look inside the guarded part.
      Stmt guarded = mutate_body_only(upper ? second : first, all);
      // A lane nest's steps are spread over the fragments' lanes, each running those on
      // the elements it holds: it stays one loop, whose range a split may only narrow (the
      // guarded part doing nothing, as for rows past a tile's end). Two loops would give
      // a lane a row in each (a causal mask's diagonal).
      if (is_fragment_nest(n) && !is_no_op(guarded)) continue;
      *out = upper ? seq({mutate(first), guarded}) : seq({guarded, mutate(second)});
      return true;
    }
    return false;
  }

  // The part that keeps the guards: its inner loops are not partitioned on them again.
  Stmt mutate_body_only(const Stmt& loop, const std::vector<Expr>& guards) {
    const auto* f = loop.as<ForNode>();
    VarBounds saved = known_;
    add_range_bounds(known_, f->var, f->min, f->extent);
    size_t depth = frozen_.size();
    frozen_.insert(frozen_.end(), guards.begin(), guards.end());
    // (Over its range a guard may never hold: a whole tile's points past the extent.)
    Stmt body = simplify(mutate(f->body), known_);
    frozen_.resize(depth);
    known_ = saved;
    return remove_no_ops(for_loop(f->var, f->min, f->extent, f->for_kind, body, f->thread_tag));
  }

  VarBounds known_;
  RelaxMap thread_vars_;
  std::vector<Expr> frozen_;
};

// A select's likely() has done its work once the loops are partitioned: the later passes
// (vectorization, common subexpressions, the CUDA printer) see the plain condition, as in
// code that never had it.
class LikelySelectStripper : public IRMutator {
 protected:
  Expr mutate_select(const Expr& e, const SelectNode* n) override {
    const auto* call = n->cond.as<CallNode>();
    if (!call || call->op != Intrinsic::Likely) return IRMutator::mutate_select(e, n);
    return select(call->args[0], mutate(n->true_value), mutate(n->false_value));
  }
};

}  // namespace

Stmt partition_loops(const Stmt& s, const VarBounds& known) {
  Partitioner p(known);
  return LikelySelectStripper().mutate(p.mutate(s));
}

}  // namespace lowering

Stmt partition_loops(const Stmt& s) { return lowering::partition_loops(s, {}); }

}  // namespace te
