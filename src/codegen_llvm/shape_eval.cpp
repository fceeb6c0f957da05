#include "codegen_llvm/shape_eval.h"

#include "expr/int_arith.h"

namespace te::codegen {

std::optional<int64_t> eval_shape_expr(const Expr& e, const IntBindings& env) {
  if (!e.defined() || !e.dtype().is_scalar() || !(e.dtype().is_integer() || e.dtype().is_bool()))
    return std::nullopt;
  DataType t = e.dtype();
  if (const auto* imm = e.as<IntImmNode>()) return imm->value;
  if (const auto* v = e.as<VarNode>()) {
    auto it = env.find(v);
    if (it == env.end()) return std::nullopt;
    return it->second;
  }
  if (const auto* c = e.as<CastNode>()) {
    auto x = eval_shape_expr(c->value, env);
    if (!x) return std::nullopt;
    return arith::wrap(*x, t);
  }
  const auto* b = e.as<BinaryNode>();
  if (b == nullptr) return std::nullopt;
  auto x = eval_shape_expr(b->a, env), y = eval_shape_expr(b->b, env);
  if (!x || !y) return std::nullopt;
  DataType ot = b->a.dtype();
  switch (b->op) {
    case BinOp::Add:
      return arith::add(*x, *y, ot);
    case BinOp::Sub:
      return arith::sub(*x, *y, ot);
    case BinOp::Mul:
      return arith::mul(*x, *y, ot);
    case BinOp::Div:
      return arith::floordiv(*x, *y, ot);
    case BinOp::Mod:
      return arith::floormod(*x, *y, ot);
    case BinOp::TruncDiv:
      return arith::truncdiv(*x, *y, ot);
    case BinOp::TruncMod:
      return arith::truncmod(*x, *y, ot);
    case BinOp::Min:
      return arith::less(*y, *x, ot) ? *y : *x;
    case BinOp::Max:
      return arith::less(*x, *y, ot) ? *y : *x;
    default:
      return std::nullopt;
  }
}

}  // namespace te::codegen
