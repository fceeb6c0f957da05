/// \file
/// GELU as a TE compute and as an expression to fuse into other computes (header-only).
///
///   Tensor y = te::ops::gelu(x);                         // exact: x * Phi(x), through erf
///   Tensor t = te::ops::gelu(x, "tanh");                 // the tanh approximation
///   compute({m, n}, [&](Expr i, Expr j) { return te::ops::gelu(acc(i, j) + bias(j)); }, "y");
///
/// The formulas and their order of operations are PyTorch's (torch.nn.functional.gelu on
/// the CPU), so that float32 results agree with it to a few ulp:
///   "none": x * 0.5 * (1 + erf(x * sqrt(1/2)))
///   "tanh": 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
/// Both lose relative accuracy where the result is tiny (x below about -3): 1 + erf(...)
/// cancels, so the absolute error there is about |x| times erf's error near -1. Both give
/// NaN at x = -inf (-inf * 0), as PyTorch does. float16 and bfloat16 are computed in float32
/// and rounded once; float64 computes in float64.
#pragma once
#include <string>
#include <vector>

#include "te/te.h"

namespace te::ops {

/// GELU of a float expression: approximate "none" (exact, through erf) or "tanh"; see the
/// top of this file. te::Error for a non-float x or another approximate.
inline Expr gelu(const Expr& x, const std::string& approximate = "none") {
  if (!x.defined() || !x.dtype().is_float())
    throw Error("gelu: expects a floating-point argument, got " +
                (x.defined() ? x.dtype().to_string() : std::string("an undefined expression")));
  if (approximate != "none" && approximate != "tanh")
    throw Error("gelu: approximate must be \"none\" or \"tanh\", got \"" + approximate + "\"");
  const bool half = x.dtype().bits() == 16;  // float16 or bfloat16
  const Expr v = half ? cast(Float(32, x.dtype().lanes()), x) : x;
  const DataType t = v.dtype();
  auto c = [&](double value) { return make_const(t, value); };
  Expr y;
  if (approximate == "none") {
    y = v * c(0.5) * (c(1) + erf(v * c(0.70710678118654752440)));
  } else {
    const Expr inner = c(0.79788456080286535588) * (v + c(0.044715) * (v * v * v));
    y = c(0.5) * v * (c(1) + tanh(inner));
  }
  return half ? cast(x.dtype(), y) : y;
}

/// GELU of every element of a float tensor (same shape and dtype), named `name`.
inline Tensor gelu(const Tensor& x, const std::string& approximate = "none", const std::string& name = "gelu") {
  if (!x.defined()) throw Error("gelu: the input tensor is undefined");
  if (!x.dtype().is_float())
    throw Error("gelu: the input must be float16, bfloat16, float32 or float64, got " + x.dtype().to_string());
  (void)gelu(make_zero(x.dtype()), approximate);  // reject a bad `approximate` before building
  return compute(
      x.shape(), [&](const std::vector<Var>& v) { return gelu(x(std::vector<Expr>(v.begin(), v.end())), approximate); },
      name);
}

}  // namespace te::ops
