#include "lower/int_set.h"

#include "expr/analysis.h"

#include <array>

namespace te::lowering {

namespace {

IntSet unbounded() { return {}; }

class SetEvaluator {
 public:
  SetEvaluator(const RelaxMap& relax, const VarBounds& known) : relax_(relax), known_(known) {}

  IntSet eval(const Expr& e) {
    if (!e.dtype().is_integer() || !e.dtype().is_scalar()) return unbounded();
    if (!uses_any(e, relax_)) return IntSet::point(e);
    switch (e.kind()) {
      case ExprKind::Var: {
        const Range& r = relax_.at(e.as<VarNode>());
        IntSet lo = eval(r.min);
        IntSet hi = eval(simp(r.min + r.extent - 1));
        return {lo.min, hi.max};
      }
      case ExprKind::Cast: {
        const auto* n = e.as<CastNode>();
        if (!n->value.dtype().is_integer()) return unbounded();
        IntSet v = eval(n->value);
        return {v.min.defined() ? simp(cast(e.dtype(), v.min)) : Expr(),
                v.max.defined() ? simp(cast(e.dtype(), v.max)) : Expr()};
      }
      case ExprKind::Binary: return eval_binary(e.as<BinaryNode>());
      case ExprKind::Select: {
        const auto* n = e.as<SelectNode>();
        return union_set(eval(n->true_value), eval(n->false_value), known_);
      }
      case ExprKind::Call: {
        const auto* n = e.as<CallNode>();
        if (n->op == Intrinsic::IfThenElse) return union_set(eval(n->args[1]), eval(n->args[2]), known_);
        return unbounded();
      }
      case ExprKind::Let: {
        const auto* n = e.as<LetNode>();
        return eval(substitute(n->body, {{n->var, n->value}}));
      }
      default: return unbounded();
    }
  }

 private:
  Expr simp(const Expr& e) { return simplify(e, known_); }

  static const int64_t* const_of(const IntSet& s) {
    return s.min.defined() && s.max.defined() && s.min.same_as(s.max) ? as_const_int(s.min) : nullptr;
  }
  static bool is_point(const IntSet& s) { return s.min.defined() && s.min.same_as(s.max); }

  IntSet scale(const IntSet& a, const Expr& c, bool negative) {
    Expr lo = a.min.defined() ? simp(a.min * c) : Expr();
    Expr hi = a.max.defined() ? simp(a.max * c) : Expr();
    return negative ? IntSet{hi, lo} : IntSet{lo, hi};
  }

  IntSet eval_binary(const BinaryNode* n) {
    IntSet a = eval(n->a), b = eval(n->b);
    auto both = [](const Expr& x, const Expr& y) { return x.defined() && y.defined(); };
    switch (n->op) {
      case BinOp::Add:
        return {both(a.min, b.min) ? simp(a.min + b.min) : Expr(), both(a.max, b.max) ? simp(a.max + b.max) : Expr()};
      case BinOp::Sub:
        return {both(a.min, b.max) ? simp(a.min - b.max) : Expr(), both(a.max, b.min) ? simp(a.max - b.min) : Expr()};
      case BinOp::Mul: {
        if (const int64_t* c = const_of(b)) return scale(a, b.min, *c < 0);
        if (const int64_t* c = const_of(a)) return scale(b, a.min, *c < 0);
        if (!a.bounded() || !b.bounded()) return unbounded();
        std::array<Expr, 4> p = {simp(a.min * b.min), simp(a.min * b.max), simp(a.max * b.min), simp(a.max * b.max)};
        Expr lo = p[0], hi = p[0];
        for (size_t i = 1; i < p.size(); ++i) {
          lo = pick_min(lo, p[i], known_);
          hi = pick_max(hi, p[i], known_);
        }
        return {lo, hi};
      }
      case BinOp::Div: {
        if (!is_point(b)) return unbounded();
        const int64_t* c = as_const_int(b.min);
        if (c && *c == 0) return IntSet::point(make_zero(n->dtype));
        IntSet out{a.min.defined() ? simp(a.min / b.min) : Expr(), a.max.defined() ? simp(a.max / b.min) : Expr()};
        if (c && *c < 0) std::swap(out.min, out.max);
        return out;
      }
      case BinOp::Mod: {
        if (!is_point(b)) return unbounded();
        const int64_t* c = as_const_int(b.min);
        if (c && *c == 0) return IntSet::point(make_zero(n->dtype));
        if (is_point(a)) return IntSet::point(simp(a.min % b.min));
        if (a.bounded() && equal(simp(a.min / b.min), simp(a.max / b.min)))
          return {simp(a.min % b.min), simp(a.max % b.min)};
        if (c && *c < 0) return {make_const(n->dtype, *c + 1), make_zero(n->dtype)};
        return {make_zero(n->dtype), simp(b.min - 1)};
      }
      case BinOp::Min:
        return {both(a.min, b.min) ? pick_min(a.min, b.min, known_) : Expr(), !a.max.defined() ? b.max
                                                                              : !b.max.defined()
                                                                                  ? a.max
                                                                                  : pick_min(a.max, b.max, known_)};
      case BinOp::Max:
        return {!a.min.defined()   ? b.min
                : !b.min.defined() ? a.min
                                   : pick_max(a.min, b.min, known_),
                both(a.max, b.max) ? pick_max(a.max, b.max, known_) : Expr()};
      default: return unbounded();
    }
  }

  const RelaxMap& relax_;
  const VarBounds& known_;
};

}  // namespace

bool uses_any(const Expr& e, const RelaxMap& relax) {
  if (relax.empty() || !e.defined()) return false;
  return uses_any_var(e, [&](const VarNode* v) { return relax.count(v) != 0; });
}

IntSet eval_set(const Expr& e, const RelaxMap& relax, const VarBounds& known) {
  SetEvaluator ev(relax, known);
  return ev.eval(e);
}

Expr pick_min(const Expr& a, const Expr& b, const VarBounds& known) {
  if (equal(a, b)) return a;
  if (can_prove(a <= b, known)) return a;
  if (can_prove(b <= a, known)) return b;
  return simplify(min(a, b), known);
}

Expr pick_max(const Expr& a, const Expr& b, const VarBounds& known) {
  if (equal(a, b)) return a;
  if (can_prove(a >= b, known)) return a;
  if (can_prove(b >= a, known)) return b;
  return simplify(max(a, b), known);
}

IntSet union_set(const IntSet& a, const IntSet& b, const VarBounds& known) {
  IntSet out;
  if (a.min.defined() && b.min.defined()) out.min = pick_min(a.min, b.min, known);
  if (a.max.defined() && b.max.defined()) out.max = pick_max(a.max, b.max, known);
  return out;
}

}  // namespace te::lowering
