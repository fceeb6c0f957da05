/// \file
/// softmax's and layer_norm's backward over the last axis as TE computes (header-only),
/// written by hand in the closed forms PyTorch's kernels use, with te::gradient of the
/// forward as their test oracle (tests/test_normalization_backward.cpp). te::gradient of
/// softmax differentiates its max stage too, whose contributions cancel; the closed form
/// does two passes over a row instead of five.
///
///   Tensor dx = te::ops::softmax_backward(y, dy);            // y = softmax(x)
///   LayerNormBackward g = te::ops::layer_norm_backward(x, gamma, dy);
///
/// float16 and bfloat16 inputs are computed in float32 and the gradients returned in the
/// inputs' types. Schedule them with te::auto_schedule, or by hand through the stage handles.
#pragma once
#include <string>
#include <vector>

#include "te/ops/normalization.h"

namespace te::ops {

/// softmax_backward's tensors.
struct SoftmaxBackwardStages {
  Tensor dot;  ///< per row: sum over the row of dy * y (stage `<name>.dot`)
  Tensor dx;   ///< y * (dy - dot): the gradient of softmax's input
};

/// The gradient of x for y = softmax(x) given dy, from y alone: dx = y * (dy - sum(dy * y)).
/// te::Error unless y and dy have one shape and type.
inline SoftmaxBackwardStages softmax_backward_stages(const Tensor& y, const Tensor& dy,
                                                     const std::string& name = "softmax_backward") {
  norm_detail::check_input(y, "softmax_backward");
  bool same = dy.defined() && dy.dtype() == y.dtype() && dy.ndim() == y.ndim();
  for (int d = 0; same && d < y.ndim(); ++d) same = equal(dy.shape()[d], y.shape()[d]);
  if (!same) throw Error("softmax_backward: dy must have y's shape and type");
  using norm_detail::as_float;
  using norm_detail::at;
  using norm_detail::row_of;
  std::vector<Expr> rows(y.shape().begin(), y.shape().end() - 1);
  IterVar k = norm_detail::column_axis(y.shape().back());
  Tensor dot = compute_from_vars(
      rows, [&](const std::vector<Var>& r) { return sum(as_float(dy(at(r, k))) * as_float(y(at(r, k))), {k}); },
      name + ".dot");
  Tensor dx = compute(
      y.shape(),
      [&](const std::vector<Var>& v) {
        std::vector<Expr> i(v.begin(), v.end());
        Expr g = as_float(y(i)) * (as_float(dy(i)) - dot(norm_detail::leading(v)));
        return y.dtype().bits() == 16 ? cast(y.dtype(), g) : g;
      },
      name);
  return {dot, dx};
}

/// softmax_backward_stages(y, dy).dx.
inline Tensor softmax_backward(const Tensor& y, const Tensor& dy, const std::string& name = "softmax_backward") {
  return softmax_backward_stages(y, dy, name).dx;
}

/// layer_norm_backward's tensors: the recomputed statistics and the three gradients.
struct LayerNormBackward {
  Tensor mean;       ///< per row: the mean, recomputed from x
  Tensor rstd;       ///< per row: 1 / sqrt(var + eps), recomputed from x
  Tensor sum_g;      ///< per row: the sum of g = dy * gamma
  Tensor sum_gxhat;  ///< per row: the sum of g * xhat
  Tensor dx;         ///< the gradient of x
  Tensor dgamma;     ///< the gradient of gamma (undefined without gamma)
  Tensor dbeta;      ///< the gradient of beta (undefined without gamma)
};

/// The gradients of layer_norm(x, gamma, beta, eps) given dy, with xhat = (x - mean) * rstd
/// and g = dy * gamma: dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), dgamma = the
/// column sums of dy * xhat, dbeta = the column sums of dy. gamma may be undefined (1;
/// dgamma and dbeta are then undefined). te::Error for mismatched shapes or types.
inline LayerNormBackward layer_norm_backward(const Tensor& x, const Tensor& gamma, const Tensor& dy, double eps = 1e-5,
                                             const std::string& name = "layer_norm_backward") {
  norm_detail::check_input(x, "layer_norm_backward");
  norm_detail::check_affine(x, gamma, Tensor(), "layer_norm_backward");
  bool same = dy.defined() && dy.dtype() == x.dtype() && dy.ndim() == x.ndim();
  for (int d = 0; same && d < x.ndim(); ++d) same = equal(dy.shape()[d], x.shape()[d]);
  if (!same) throw Error("layer_norm_backward: dy must have x's shape and type");
  using norm_detail::as_float;
  using norm_detail::at;
  using norm_detail::row_of;
  const Expr cols = x.shape().back();
  const DataType ct = norm_detail::compute_type(x);
  const Expr n = cast(ct, cols);
  std::vector<Expr> rows(x.shape().begin(), x.shape().end() - 1);
  LayerNormBackward b;
  IterVar k1 = norm_detail::column_axis(cols), k2 = norm_detail::column_axis(cols), k3 = norm_detail::column_axis(cols);
  b.mean = compute_from_vars(
      rows, [&](const std::vector<Var>& r) { return sum(as_float(x(at(r, k1))) / n, {k1}); }, name + ".mean");
  Tensor var = compute_from_vars(
      rows,
      [&](const std::vector<Var>& r) {
        Expr d = as_float(x(at(r, k2))) - b.mean(row_of(r));
        return sum(d * d / n, {k2});
      },
      name + ".var");
  b.rstd = compute_from_vars(
      rows, [&](const std::vector<Var>& r) { return rsqrt(var(row_of(r)) + make_const(ct, eps)); }, name + ".rstd");
  auto g_at = [&](const std::vector<Expr>& i) {
    Expr g = as_float(dy(i));
    return gamma.defined() ? g * as_float(gamma({i.back()})) : g;
  };
  auto xhat_at = [&](const std::vector<Expr>& i, const std::vector<Expr>& r) {
    return (as_float(x(i)) - b.mean(r)) * b.rstd(r);
  };
  b.sum_g = compute_from_vars(
      rows, [&](const std::vector<Var>& r) { return sum(g_at(at(r, k3)), {k3}); }, name + ".sum_g");
  IterVar k4 = norm_detail::column_axis(cols);
  b.sum_gxhat = compute_from_vars(
      rows,
      [&](const std::vector<Var>& r) {
        std::vector<Expr> i = at(r, k4);
        return sum(g_at(i) * xhat_at(i, row_of(r)), {k4});
      },
      name + ".sum_gxhat");
  b.dx = compute(
      x.shape(),
      [&](const std::vector<Var>& v) {
        std::vector<Expr> i(v.begin(), v.end()), r = norm_detail::leading(v);
        Expr d = b.rstd(r) * (g_at(i) - b.sum_g(r) / n - xhat_at(i, r) * (b.sum_gxhat(r) / n));
        return x.dtype().bits() == 16 ? cast(x.dtype(), d) : d;
      },
      name + ".dx");
  if (!gamma.defined()) return b;
  // Column sums over every leading index.
  auto column_sum = [&](bool with_xhat, const std::string& what) {
    std::vector<IterVar> over_rows;
    for (size_t d = 0; d < rows.size(); ++d)
      over_rows.push_back(reduce_axis({make_zero(rows[d].dtype()), rows[d]}, "r" + std::to_string(d)));
    return compute(
        {cols},
        [&](const std::vector<Var>& c) {
          std::vector<Expr> r, i;
          for (const IterVar& iv : over_rows) r.push_back(iv.var());
          i = r;
          i.push_back(c[0]);
          Expr t = as_float(dy(i));
          if (with_xhat) t = t * xhat_at(i, r);
          return sum(t, over_rows);
        },
        name + what);
  };
  b.dgamma = column_sum(true, ".dgamma");
  b.dbeta = column_sum(false, ".dbeta");
  if (gamma.dtype() != b.dgamma.dtype()) {
    Tensor dg = b.dgamma, db = b.dbeta;
    b.dgamma = compute(
        {cols}, [&](const std::vector<Var>& c) { return cast(gamma.dtype(), dg({Expr(c[0])})); },
        name + ".dgamma_cast");
    b.dbeta = compute(
        {cols}, [&](const std::vector<Var>& c) { return cast(gamma.dtype(), db({Expr(c[0])})); }, name + ".dbeta_cast");
  }
  return b;
}

}  // namespace te::ops
