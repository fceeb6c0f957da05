#include "codegen_cuda_src/value_range.h"

#include <algorithm>
#include <initializer_list>

#include "expr/analysis.h"

namespace te::cuda {

namespace {

constexpr int64_t kInf = ValueRange::kUnbounded;

int64_t clamp(int64_t v) { return std::max(-kInf, std::min(kInf, v)); }
// Inputs are within +-kInf = 2^61, so sums stay within int64.
int64_t add(int64_t a, int64_t b) { return clamp(a + b); }
int64_t mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  bool negative = (a < 0) != (b < 0);
  int64_t ua = a < 0 ? -a : a, ub = b < 0 ? -b : b;
  if (ua > kInf / ub) return negative ? -kInf : kInf;
  return negative ? -(ua * ub) : ua * ub;
}
int64_t floor_div(int64_t a, int64_t c) {
  int64_t q = a / c;
  return (a % c != 0 && (a < 0) != (c < 0)) ? q - 1 : q;
}

ValueRange make(int64_t lo, int64_t hi) { return ValueRange{clamp(lo), clamp(hi)}; }
ValueRange unite(const ValueRange& a, const ValueRange& b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

class RangeEval {
 public:
  RangeEval(const VarRanges& known, bool wrap, bool wide) : known_(known), wrap_(wrap), wide_(wide) {}

  // The range of e's values as stored in its type: the mathematical range when it fits
  // the type, else the whole type (the value wrapped: int16 32765 + 7 is negative).
  ValueRange eval(const Expr& e) {
    ValueRange r = eval_unwrapped(e);
    DataType t = e.dtype().element_of();
    if (!wrap_ || !t.is_integer()) return r;
    // Wide code computes int32 arithmetic in int64; a cast to int32 still truncates.
    if (wide_ && t == Int(32) && !e.as<CastNode>()) t = Int(64);
    return fits(r, t) ? r : type_range(t);
  }

 private:
  static bool fits(const ValueRange& r, DataType t) {
    ValueRange limits = type_range(t);
    // 64-bit types: only a bounded range (within +-2^61) is known not to have wrapped.
    if (t.bits() >= 62) return r.lo > -kInf && r.hi < kInf && r.lo >= limits.lo;
    return r.lo >= limits.lo && r.hi <= limits.hi;
  }

  ValueRange eval_unwrapped(const Expr& e) {
    DataType t = e.dtype();
    if (!t.is_integer() && !t.is_bool()) return ValueRange{};
    if (auto* n = e.as<IntImmNode>()) {
      if (t.is_uint() && n->value < 0) return make(0, kInf);  // a uint64 beyond int64
      return make(n->value, n->value);
    }
    if (auto* n = e.as<VarNode>()) {
      if (auto it = lets_.find(n); it != lets_.end()) return it->second;
      auto it = known_.find(n);
      return it != known_.end() ? it->second : type_range(t);
    }
    if (auto* n = e.as<CastNode>()) {
      if (!n->value.dtype().is_integer() && !n->value.dtype().is_bool()) return type_range(t);
      ValueRange v = eval(n->value);
      return wrap_ || fits(v, t.element_of()) ? v : type_range(t);  // eval() widens it when wrapping
    }
    if (auto* n = e.as<BinaryNode>()) return binary(n);
    if (auto* n = e.as<SelectNode>()) return unite(eval(n->true_value), eval(n->false_value));
    if (auto* n = e.as<CallNode>()) {
      if (n->op == Intrinsic::IfThenElse) return unite(eval(n->args[1]), eval(n->args[2]));
      return bitwise(n);
    }
    if (auto* n = e.as<LetNode>()) {
      // A variable is bound once in well-formed IR, so the overlay needs no restoring.
      lets_[n->var.get()] = eval(n->value);
      return eval(n->body);
    }
    if (auto* n = e.as<BroadcastNode>()) return eval(n->value);
    if (auto* n = e.as<RampNode>()) {
      ValueRange b = eval(n->base), s = eval(n->stride);
      ValueRange last = {add(b.lo, mul(s.lo, n->lanes - 1)), add(b.hi, mul(s.hi, n->lanes - 1))};
      return unite(b, {std::min(last.lo, last.hi), std::max(last.lo, last.hi)});
    }
    return type_range(t);
  }

  // Masks with a non-negative operand, right shifts by a constant, popcount; the type's
  // range otherwise (as the simplifier's bounds).
  ValueRange bitwise(const CallNode* n) {
    DataType t = n->dtype.element_of();
    if (n->op == Intrinsic::Popcount) return make(0, t.bits());
    if (n->args.size() != 2 || !t.is_integer()) return type_range(n->dtype);
    ValueRange a = eval(n->args[0]), b = eval(n->args[1]);
    if (n->op == Intrinsic::BitAnd) {
      if (a.lo >= 0 && b.lo >= 0) return make(0, std::min(a.hi, b.hi));
      if (a.lo >= 0 || b.lo >= 0) return make(0, a.lo >= 0 ? a.hi : b.hi);
    }
    if (n->op == Intrinsic::ShiftRight && b.lo == b.hi && b.lo >= 0 && b.lo < t.bits() && a.lo > -kInf && a.hi < kInf)
      return make(a.lo >> b.lo, a.hi >> b.lo);
    return type_range(n->dtype);
  }

  ValueRange binary(const BinaryNode* n) {
    if (is_comparison(n->op) || is_logical(n->op)) return make(0, 1);
    ValueRange a = eval(n->a), b = eval(n->b);
    switch (n->op) {
      case BinOp::Add: return make(add(a.lo, b.lo), add(a.hi, b.hi));
      case BinOp::Sub: return make(add(a.lo, -b.hi), add(a.hi, -b.lo));
      case BinOp::Mul: {
        int64_t p[] = {mul(a.lo, b.lo), mul(a.lo, b.hi), mul(a.hi, b.lo), mul(a.hi, b.hi)};
        return make(*std::min_element(p, p + 4), *std::max_element(p, p + 4));
      }
      case BinOp::Min: return make(std::min(a.lo, b.lo), std::min(a.hi, b.hi));
      case BinOp::Max: return make(std::max(a.lo, b.lo), std::max(a.hi, b.hi));
      case BinOp::Div:
      case BinOp::TruncDiv: {
        if (b.lo == b.hi && b.lo > 0 && b.lo < kInf) {
          if (n->op == BinOp::Div || a.lo >= 0) return make(floor_div(a.lo, b.lo), floor_div(a.hi, b.lo));
        }
        // |a / b| <= |a| for every b (and x / 0 == 0).
        int64_t m = std::max(-a.lo, a.hi);
        return make(a.lo >= 0 && b.lo >= 0 ? 0 : -m, m);
      }
      case BinOp::Mod:
      case BinOp::TruncMod: {
        if (b.lo > 0 && b.hi < kInf) {
          if (a.lo >= 0 && a.hi < b.lo) return a;
          if (n->op == BinOp::Mod || a.lo >= 0) return make(0, b.hi - 1);
        }
        int64_t m = std::max({-b.lo, b.hi, -a.lo, a.hi});
        return make(-m, m);
      }
      default: break;
    }
    return type_range(n->dtype);
  }

  const VarRanges& known_;
  bool wrap_, wide_;
  VarRanges lets_;  // variables bound by Let inside the expression
};

}  // namespace

ValueRange type_range(DataType t) {
  t = t.element_of();
  if (t.is_bool()) return {0, 1};
  if (!t.is_integer() || t.bits() >= 62) return t.is_uint() ? ValueRange{0, kInf} : ValueRange{};
  if (t.is_uint()) return {0, (int64_t{1} << t.bits()) - 1};
  return {-(int64_t{1} << (t.bits() - 1)), (int64_t{1} << (t.bits() - 1)) - 1};
}

ValueRange value_range(const Expr& e, const VarRanges& known, bool wide) {
  return RangeEval(known, true, wide).eval(e);
}

ValueRange math_range(const Expr& e, const VarRanges& known) { return RangeEval(known, false, false).eval(e); }

ValueRange loop_var_range(const Expr& min, const Expr& extent, const VarRanges& known) {
  ValueRange m = value_range(min, known), x = value_range(extent, known);
  // An empty loop never binds its variable, so hi may assume extent >= 1.
  return make(m.lo, add(m.hi, std::max<int64_t>(x.hi, 1) - 1));
}

VarBounds var_bounds_of(const Expr& e, const VarRanges& known) {
  VarBounds bounds;
  for (const Var& v : free_vars(e)) {
    auto it = known.find(v.get());
    if (it != known.end() && it->second.lo > -kInf && it->second.hi < kInf)
      bounds[v.get()] = Interval{it->second.lo, it->second.hi};
  }
  return bounds;
}

}  // namespace te::cuda
