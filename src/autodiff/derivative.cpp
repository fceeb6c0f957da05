#include "autodiff/derivative.h"

#include <fmt/format.h>

#include <cmath>

#include "te/error.h"
#include "te/ir.h"

namespace te::autodiff {

Expr add(const Expr& a, const Expr& b) {
  if (is_zero(a)) return b;
  if (is_zero(b)) return a;
  return a + b;
}

Expr mul(const Expr& a, const Expr& b) {
  if (is_zero(a) || is_zero(b)) return make_zero(a.dtype().is_float() ? a.dtype() : b.dtype());
  if (is_one(a)) return b;
  if (is_one(b)) return a;
  return a * b;
}

namespace {

Expr sub(const Expr& a, const Expr& b) {
  if (is_zero(b)) return a;
  if (is_zero(a)) return -b;
  return a - b;
}

Expr div(const Expr& a, const Expr& b) { return is_zero(a) ? a : a / b; }

class Derivative {
 public:
  Derivative(const TensorReadNode* site, const std::string& where) : site_(site), where_(where) {}

  Expr of(const Expr& e) {
    const DataType t = e.dtype();
    if (!t.is_float()) return make_zero(Float(32));  // integers and bools (is_float: bfloat16 too)
    switch (e->kind) {
      case ExprKind::IntImm:
      case ExprKind::FloatImm:
      case ExprKind::Var: return make_zero(t);
      case ExprKind::TensorRead: return make_const(t, e.get() == site_ ? 1.0 : 0.0);
      case ExprKind::Cast: {
        const Expr& v = e.as<CastNode>()->value;
        Expr dv = of(v);
        return is_zero(dv) ? make_zero(t) : cast(t, dv);
      }
      case ExprKind::Binary: return binary(e.as<BinaryNode>(), t);
      case ExprKind::Select: {
        auto* n = e.as<SelectNode>();
        Expr dt = of(n->true_value), df = of(n->false_value);
        if (is_zero(dt) && is_zero(df)) return make_zero(t);
        return select(n->cond, dt, df);
      }
      case ExprKind::Call: return call(e.as<CallNode>(), e, t);
      case ExprKind::Let: {
        // The body with the value in place: the chain rule through the bound variable.
        auto* n = e.as<LetNode>();
        return of(substitute(n->body, {{n->var, n->value}}));
      }
      case ExprKind::Reduce: fail("a reduction inside an expression (a reduction must be a compute's whole body)");
      default: fail(fmt::format("'{}'", to_string(e)));
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("gradient: {}: {} has no derivative", where_, what));
  }

  Expr binary(const BinaryNode* n, DataType t) {
    const Expr &a = n->a, &b = n->b;
    switch (n->op) {
      case BinOp::Add: return add(of(a), of(b));
      case BinOp::Sub: return sub(of(a), of(b));
      case BinOp::Mul: return add(mul(of(a), b), mul(a, of(b)));
      case BinOp::Div: {
        Expr da = of(a), db = of(b);  // d(a / b) = da / b - a db / b^2
        return sub(div(da, b), div(mul(a, db), b * b));
      }
      case BinOp::Min:
      case BinOp::Max: {
        // The operand that is the result takes the gradient (the left one on a tie).
        Expr da = of(a), db = of(b);
        if (is_zero(da) && is_zero(db)) return make_zero(t);
        return select(n->op == BinOp::Min ? a <= b : a >= b, da, db);
      }
      case BinOp::Mod:
      case BinOp::TruncMod:
      case BinOp::TruncDiv: fail(fmt::format("float '{}'", binop_name(n->op)));
      default: return make_zero(t);  // comparisons and logic are bool
    }
  }

  Expr call(const CallNode* n, const Expr& e, DataType t) {
    auto arg = [&](size_t i) -> const Expr& { return n->args[i]; };
    auto chain = [&](const Expr& outer) {  // outer'(x) * dx for one-argument functions
      Expr dx = of(arg(0));
      return is_zero(dx) ? make_zero(t) : mul(outer, dx);
    };
    const Expr& x = n->args.empty() ? e : arg(0);
    switch (n->op) {
      case Intrinsic::Floor:
      case Intrinsic::Ceil:
      case Intrinsic::Round:
      case Intrinsic::NearbyInt:
      case Intrinsic::Trunc: return make_zero(t);  // piecewise constant
      case Intrinsic::Likely: return of(x);
      case Intrinsic::IfThenElse: {
        Expr dt = of(arg(1)), df = of(arg(2));
        if (is_zero(dt) && is_zero(df)) return make_zero(t);
        return if_then_else(arg(0), dt, df);
      }
      // |x|: the sign of x, 0 at 0 (PyTorch's choice).
      case Intrinsic::Abs: {
        Expr dx = of(x);
        if (is_zero(dx)) return make_zero(t);
        return select(x > make_zero(t), dx, select(x < make_zero(t), -dx, make_zero(t)));
      }
      case Intrinsic::Exp: return chain(e);
      case Intrinsic::Expm1: return chain(exp(x));
      case Intrinsic::Exp2: return chain(e * std::log(2.0));
      case Intrinsic::Log: return chain(1.0 / x);
      case Intrinsic::Log2: return chain(1.0 / (x * std::log(2.0)));
      case Intrinsic::Log10: return chain(1.0 / (x * std::log(10.0)));
      case Intrinsic::Log1p: return chain(1.0 / (x + 1.0));
      case Intrinsic::Sqrt: return chain(0.5 / e);
      case Intrinsic::Rsqrt: return chain(-0.5 * e / x);
      case Intrinsic::Tanh: return chain(1.0 - e * e);
      case Intrinsic::Sigmoid: return chain(e * (1.0 - e));
      case Intrinsic::Sin: return chain(cos(x));
      case Intrinsic::Cos: return chain(-sin(x));
      case Intrinsic::Tan: return chain(1.0 + e * e);
      case Intrinsic::Asin: return chain(rsqrt(1.0 - x * x));
      case Intrinsic::Acos: return chain(-rsqrt(1.0 - x * x));
      case Intrinsic::Atan: return chain(1.0 / (1.0 + x * x));
      case Intrinsic::Sinh: return chain(cosh(x));
      case Intrinsic::Cosh: return chain(sinh(x));
      case Intrinsic::Erf: return chain(2.0 / std::sqrt(M_PI) * exp(-(x * x)));
      case Intrinsic::Pow: {  // d(x^y) = y x^(y-1) dx + x^y log(x) dy
        Expr dx = of(arg(0)), dy = of(arg(1));
        return add(mul(arg(1) * pow(arg(0), arg(1) - 1.0), dx), mul(e * log(arg(0)), dy));
      }
      case Intrinsic::Atan2: {  // atan2(y, x): (x dy - y dx) / (x^2 + y^2)
        const Expr &y = arg(0), &xx = arg(1);
        Expr dy = of(y), dx = of(xx);
        return div(sub(mul(xx, dy), mul(y, dx)), xx * xx + y * y);
      }
      case Intrinsic::Fma: return add(add(mul(of(arg(0)), arg(1)), mul(arg(0), of(arg(1)))), of(arg(2)));
      case Intrinsic::IsNan:
      case Intrinsic::IsInf:
      case Intrinsic::IsFinite: return make_zero(t);
      case Intrinsic::Extern: fail(fmt::format("call_extern '{}'", n->extern_name));
      default: fail(fmt::format("'{}'", intrinsic_name(n->op)));
    }
  }

  const TensorReadNode* site_;
  const std::string& where_;
};

}  // namespace

Expr derivative(const Expr& e, const TensorReadNode* site, const std::string& where) {
  return Derivative(site, where).of(e);
}

}  // namespace te::autodiff
