// CudaKernel::launch_dims: evaluates the grid and block extents for given variable values.
#include <fmt/format.h>

#include "expr/int_arith.h"
#include "te/cuda.h"

namespace te {

namespace {

class LaunchEval {
 public:
  LaunchEval(const std::string& kernel, const std::map<std::string, int64_t>& values)
      : kernel_(kernel), values_(values) {}

  int64_t eval(const Expr& e) {
    DataType t = e.dtype();
    if (auto* n = e.as<IntImmNode>()) return n->value;
    if (auto* n = e.as<VarNode>()) {
      if (auto it = lets_.find(n); it != lets_.end()) return it->second;
      auto it = values_.find(n->name);
      if (it == values_.end())
        throw Error(fmt::format("CudaKernel::launch_dims: kernel '{}' needs a value for '{}' (its launch sizes "
                                "depend on it)",
                                kernel_, n->name));
      return arith::wrap(it->second, t);
    }
    if (auto* n = e.as<CastNode>()) {
      if (!n->value.dtype().is_integer() && !n->value.dtype().is_bool()) unsupported(e);
      return arith::wrap(eval(n->value), t);
    }
    if (e.as<BinaryNode>()) return binary(e);
    if (auto* n = e.as<NotNode>()) return eval(n->a) == 0;
    if (auto* n = e.as<SelectNode>()) {
      int64_t c = eval(n->cond), x = eval(n->true_value), y = eval(n->false_value);
      return c ? x : y;
    }
    if (auto* n = e.as<CallNode>()) {
      if (n->op == Intrinsic::IfThenElse) return eval(n->args[0]) ? eval(n->args[1]) : eval(n->args[2]);
      if (n->op == Intrinsic::Likely) return eval(n->args[0]);
      unsupported(e);
    }
    if (auto* n = e.as<LetNode>()) {
      lets_[n->var.get()] = eval(n->value);
      return eval(n->body);
    }
    unsupported(e);
  }

 private:
  [[noreturn]] void unsupported(const Expr& e) {
    throw Error(fmt::format("CudaKernel::launch_dims: cannot evaluate {} of kernel '{}' on the host (only integer "
                            "arithmetic on the launch arguments)",
                            to_string(e), kernel_));
  }

  int64_t binary(const Expr& e) {
    auto* n = e.as<BinaryNode>();
    DataType t = n->a.dtype();
    if (!t.is_integer() && !t.is_bool()) unsupported(e);
    int64_t a = eval(n->a), b = eval(n->b);
    switch (n->op) {
      case BinOp::Add: return arith::add(a, b, t);
      case BinOp::Sub: return arith::sub(a, b, t);
      case BinOp::Mul: return arith::mul(a, b, t);
      case BinOp::Div: return arith::floordiv(a, b, t);
      case BinOp::Mod: return arith::floormod(a, b, t);
      case BinOp::TruncDiv: return arith::truncdiv(a, b, t);
      case BinOp::TruncMod: return arith::truncmod(a, b, t);
      case BinOp::Min: return arith::less(b, a, t) ? b : a;
      case BinOp::Max: return arith::less(a, b, t) ? b : a;
      case BinOp::EQ: return a == b;
      case BinOp::NE: return a != b;
      case BinOp::LT: return arith::less(a, b, t);
      case BinOp::LE: return !arith::less(b, a, t);
      case BinOp::GT: return arith::less(b, a, t);
      case BinOp::GE: return !arith::less(a, b, t);
      case BinOp::And: return a && b;
      case BinOp::Or: return a || b;
    }
    return 0;
  }

  const std::string& kernel_;
  const std::map<std::string, int64_t>& values_;
  std::map<const VarNode*, int64_t> lets_;
};

}  // namespace

CudaLaunchDims CudaKernel::launch_dims(const std::map<std::string, int64_t>& values) const {
  LaunchEval ev(name, values);
  CudaLaunchDims d;
  for (int i = 0; i < 3; ++i) {
    d.grid[i] = grid[i].defined() ? ev.eval(grid[i]) : 1;
    d.block[i] = block[i].defined() ? ev.eval(block[i]) : 1;
  }
  return d;
}

}  // namespace te
