/// \file
/// Row reductions, softmax and layer norm over the last axis as TE computes
/// (header-only); their CUDA schedules, which reduce each row across the threads of a
/// block, are in te/ops/normalization_cuda.h.
///
///   Tensor y = te::ops::softmax(x);                  // x: (..., C), float
///   Schedule s = create_schedule({y});
///   te::ops::schedule_softmax_cuda(s, y);            // one block per row
///
/// Stages: softmax has `<name>.max` and `<name>.expsum` (per row); layer_norm has
/// `<name>.mean` and `<name>.var` (per row, two passes: the variance of x - mean, so no
/// cancellation); layer_norm_welford has one stage `<name>.mean` with the outputs mean,
/// m2 and count (per row, one pass: Welford's update); reduce_rows is one stage,
/// argmax_rows / argmin_rows one stage with two outputs. softmax_stages(),
/// layer_norm_stages() and layer_norm_welford_stages() return them as handles, and
/// *_stages_of(out) finds them from the output through the graph (never by name).
/// float16 and bfloat16 inputs are computed in float32.
#pragma once
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "te/te.h"

namespace te::ops {

namespace norm_detail {

inline std::vector<Expr> leading(const std::vector<Var>& v) { return {v.begin(), v.end() - 1}; }

// The element (row..., c) and the row's index.
inline std::vector<Expr> at(const std::vector<Var>& row, const Expr& c) {
  std::vector<Expr> idx(row.begin(), row.end());
  idx.push_back(c);
  return idx;
}
inline std::vector<Expr> row_of(const std::vector<Var>& r) { return std::vector<Expr>(r.begin(), r.end()); }
// A reduction over the columns.
inline IterVar column_axis(const Expr& cols) { return reduce_axis({make_zero(cols.dtype()), cols}, "k"); }

// float16 and bfloat16 compute in float32.
inline Expr as_float(const Expr& e) { return e.dtype().bits() == 16 ? cast(Float(32), e) : e; }

inline void check_input(const Tensor& x, const char* op) {
  if (x.ndim() < 1) throw Error(std::string(op) + ": the input must have at least one axis");
  if (!x.dtype().is_float())
    throw Error(std::string(op) + ": the input must be float16, bfloat16, float32 or float64, got " +
                x.dtype().to_string());
}

inline DataType compute_type(const Tensor& x) { return x.dtype().bits() == 16 ? Float(32) : x.dtype(); }

inline void check_affine(const Tensor& x, const Tensor& gamma, const Tensor& beta, const char* op) {
  for (const Tensor* p : {&gamma, &beta})
    if (p->defined() && (p->ndim() != 1 || p->dtype() != x.dtype()))
      throw Error(std::string(op) + ": gamma and beta must be 1-D with x's dtype " + x.dtype().to_string() + ", got " +
                  p->dtype().to_string() + " with " + std::to_string(p->ndim()) + " axes");
}

// normalize(x at a point, the point's row) * gamma + beta, in x's dtype: the output of
// layer_norm and layer_norm_welford.
inline Tensor affine_output(const Tensor& x, const Tensor& gamma, const Tensor& beta, const std::string& name,
                            const std::function<Expr(const Expr&, const std::vector<Expr>&)>& normalize) {
  return compute(
      x.shape(),
      [&](const std::vector<Var>& v) {
        const Expr c = v.back();
        Expr y = normalize(as_float(x(std::vector<Expr>(v.begin(), v.end()))), leading(v));
        if (gamma.defined()) y = y * as_float(gamma(c));
        if (beta.defined()) y = y + as_float(beta(c));
        return x.dtype().bits() == 16 ? cast(x.dtype(), y) : y;
      },
      name);
}

}  // namespace norm_detail

/// reducer over the last axis of x: shape x.shape[:-1] (a 1-D x gives shape {1}).
inline Tensor reduce_rows(const Tensor& x, Reducer reducer = Reducer::Sum, const std::string& name = "reduce_rows") {
  if (x.ndim() < 1) throw Error("reduce_rows: the input must have at least one axis");
  std::vector<Expr> shape(x.shape().begin(), x.shape().end() - 1);
  if (shape.empty()) shape.push_back(make_const(Int(32), 1));
  IterVar k = reduce_axis({make_zero(x.shape().back().dtype()), x.shape().back()}, "k");
  const bool one_d = x.ndim() == 1;
  return compute(
      shape,
      [&](const std::vector<Var>& v) {
        std::vector<Expr> idx = one_d ? std::vector<Expr>{} : std::vector<Expr>(v.begin(), v.end());
        idx.push_back(k);
        return reduce(reducer, x(idx), {k});
      },
      name);
}

/// {index, value} of the largest (argmax_rows) or smallest element of each row of x (the
/// last axis): two tensors of shape x.shape[:-1] (int32 indices), one stage; the first
/// position on ties, NaN as PyTorch counts it (see te::argmax).
inline std::vector<Tensor> arg_rows(const Tensor& x, bool largest, const std::string& name) {
  if (x.ndim() < 2) throw Error(name + ": the input must have at least two axes (rows, columns)");
  std::vector<Expr> shape(x.shape().begin(), x.shape().end() - 1);
  IterVar k = reduce_axis({make_const(Int(32), 0), cast(Int(32), x.shape().back())}, "k");
  return compute_tuple(shape,
                       [&](const std::vector<Var>& v) {
                         std::vector<Expr> idx(v.begin(), v.end());
                         idx.push_back(k);
                         return largest ? argmax(x(idx), {k}) : argmin(x(idx), {k});
                       },
                       {name + ".index", name + ".value"});
}
/// See arg_rows.
inline std::vector<Tensor> argmax_rows(const Tensor& x, const std::string& name = "argmax") {
  return arg_rows(x, true, name);
}
/// See arg_rows.
inline std::vector<Tensor> argmin_rows(const Tensor& x, const std::string& name = "argmin") {
  return arg_rows(x, false, name);
}

/// softmax's tensors: its input, its two per-row statistics and its output (handles for
/// its schedules).
struct SoftmaxStages {
  Tensor x;       ///< the input
  Tensor max;     ///< per row: the largest element (stage `<name>.max`)
  Tensor expsum;  ///< per row: the sum of exp(x - max) (stage `<name>.expsum`)
  Tensor out;     ///< the output, what softmax() returns
};

/// softmax() with every stage it makes: `softmax(x, name)` is `softmax_stages(x, name).out`.
inline SoftmaxStages softmax_stages(const Tensor& x, const std::string& name = "softmax") {
  norm_detail::check_input(x, "softmax");
  const Expr cols = x.shape().back();
  std::vector<Expr> rows(x.shape().begin(), x.shape().end() - 1);
  using norm_detail::as_float;
  IterVar k1 = norm_detail::column_axis(cols), k2 = norm_detail::column_axis(cols);
  using norm_detail::at;
  using norm_detail::row_of;
  Tensor m = compute_from_vars(
      rows, [&](const std::vector<Var>& r) { return max(as_float(x(at(r, k1))), {k1}); }, name + ".max");
  Tensor e = compute_from_vars(
      rows, [&](const std::vector<Var>& r) { return sum(exp(as_float(x(at(r, k2))) - m(row_of(r))), {k2}); },
      name + ".expsum");
  Tensor out = compute(
      x.shape(),
      [&](const std::vector<Var>& v) {
        std::vector<Expr> r = norm_detail::leading(v);
        Expr y = exp(as_float(x(std::vector<Expr>(v.begin(), v.end()))) - m(r)) / e(r);
        return x.dtype().bits() == 16 ? cast(x.dtype(), y) : y;
      },
      name);
  return {x, m, e, out};
}

/// exp(x - max) / sum(exp(x - max)) over the last axis.
inline Tensor softmax(const Tensor& x, const std::string& name = "softmax") { return softmax_stages(x, name).out; }

/// layer_norm's tensors: its input, its two per-row statistics and its output (handles
/// for its schedules).
struct LayerNormStages {
  Tensor x;     ///< the input
  Tensor mean;  ///< per row: the mean (stage `<name>.mean`)
  Tensor var;   ///< per row: the variance of x - mean (stage `<name>.var`)
  Tensor out;   ///< the output, what layer_norm() returns
};

/// layer_norm() with every stage it makes: `layer_norm(x, ...)` is
/// `layer_norm_stages(x, ...).out`.
inline LayerNormStages layer_norm_stages(const Tensor& x, const Tensor& gamma = Tensor(), const Tensor& beta = Tensor(),
                                         double eps = 1e-5, const std::string& name = "layer_norm") {
  norm_detail::check_input(x, "layer_norm");
  norm_detail::check_affine(x, gamma, beta, "layer_norm");
  const Expr cols = x.shape().back();
  const DataType ct = norm_detail::compute_type(x);
  std::vector<Expr> rows(x.shape().begin(), x.shape().end() - 1);
  using norm_detail::as_float;
  IterVar k1 = norm_detail::column_axis(cols), k2 = norm_detail::column_axis(cols);
  using norm_detail::at;
  using norm_detail::row_of;
  const Expr n = cast(ct, cols);
  Tensor mean = compute_from_vars(
      rows, [&](const std::vector<Var>& r) { return sum(as_float(x(at(r, k1))) / n, {k1}); }, name + ".mean");
  Tensor var = compute_from_vars(
      rows,
      [&](const std::vector<Var>& r) {
        Expr d = as_float(x(at(r, k2))) - mean(row_of(r));
        return sum(d * d / n, {k2});
      },
      name + ".var");
  Tensor out = norm_detail::affine_output(x, gamma, beta, name, [&](const Expr& xv, const std::vector<Expr>& r) {
    return (xv - mean(r)) / sqrt(var(r) + make_const(ct, eps));
  });
  return {x, mean, var, out};
}

/// (x - mean) / sqrt(var + eps) * gamma + beta over the last axis; gamma and beta have
/// shape (C,) (undefined tensors: 1 and 0).
inline Tensor layer_norm(const Tensor& x, const Tensor& gamma = Tensor(), const Tensor& beta = Tensor(),
                         double eps = 1e-5, const std::string& name = "layer_norm") {
  return layer_norm_stages(x, gamma, beta, eps, name).out;
}

/// layer_norm_welford's tensors: its input, the three outputs of its one statistics stage
/// and its output (handles for its schedules).
struct LayerNormWelfordStages {
  Tensor x;      ///< the input
  Tensor mean;   ///< per row: the mean (output 0 of the statistics stage `<name>.mean`)
  Tensor m2;     ///< per row: the sum of squared deviations (output 1)
  Tensor count;  ///< per row: the number of elements (output 2)
  Tensor out;    ///< the output, what layer_norm_welford() returns
};

/// layer_norm_welford() with every stage it makes.
inline LayerNormWelfordStages layer_norm_welford_stages(const Tensor& x, const Tensor& gamma = Tensor(),
                                                        const Tensor& beta = Tensor(), double eps = 1e-5,
                                                        const std::string& name = "layer_norm") {
  norm_detail::check_input(x, "layer_norm_welford");
  norm_detail::check_affine(x, gamma, beta, "layer_norm_welford");
  const DataType ct = norm_detail::compute_type(x);
  std::vector<Expr> rows(x.shape().begin(), x.shape().end() - 1);
  IterVar k = norm_detail::column_axis(x.shape().back());
  std::vector<Tensor> stats = compute_tuple(
      rows, [&](const std::vector<Var>& r) { return welford(norm_detail::as_float(x(norm_detail::at(r, k))), {k}); },
      {name + ".mean", name + ".m2", name + ".count"});
  Tensor out = norm_detail::affine_output(x, gamma, beta, name, [&](const Expr& xv, const std::vector<Expr>& r) {
    return (xv - stats[0](r)) * rsqrt(stats[1](r) / stats[2](r) + make_const(ct, eps));
  });
  return {x, stats[0], stats[1], stats[2], out};
}

/// layer_norm with the mean and variance from one pass over the row (Welford's update,
/// partial results combined as Chan et al.): one statistics stage `<name>.mean` with
/// outputs mean, m2 and count, then the output.
inline Tensor layer_norm_welford(const Tensor& x, const Tensor& gamma = Tensor(), const Tensor& beta = Tensor(),
                                 double eps = 1e-5, const std::string& name = "layer_norm") {
  return layer_norm_welford_stages(x, gamma, beta, eps, name).out;
}

namespace norm_detail {

// The per-row statistics out reads, found through the graph (names play no part): the
// reductions among out's inputs with one element per row, `count` distinct operations,
// ordered so that one reading another comes after it; the first reads only x, which out
// reads too. te::Error naming `what` (the schedule, and the te::ops function that makes
// such outputs) otherwise.
inline std::vector<Tensor> row_statistics(const Tensor& out, size_t count, const std::string& what,
                                          const std::string& op_name, Tensor* x) {
  auto not_ours = [&]() {
    throw Error(what + ": '" + (out.defined() ? out.name() : std::string("?")) + "' is not an output of te::ops::" +
                op_name + "; pass the output of the matching te::ops function (or its stages)");
  };
  if (!out.defined() || out.op()->kind != OpKind::Compute || out.ndim() < 1) not_ours();
  std::vector<Operation> stats;
  for (const Operation& in : out.op()->inputs)
    if (in->kind == OpKind::Compute && !in->is_scatter() && !in->reduce_axis.empty() &&
        in->shape.size() + 1 == out.op()->shape.size())
      stats.push_back(in);
  if (stats.size() != count) not_ours();
  auto reads = [](const Operation& a, const Operation& b) {
    return std::find(a->inputs.begin(), a->inputs.end(), b) != a->inputs.end();
  };
  if (count == 2 && reads(stats[0], stats[1])) std::swap(stats[0], stats[1]);
  if (stats[0]->inputs.size() != 1 || (count == 2 && !reads(stats[1], stats[0]))) not_ours();
  *x = Tensor(stats[0]->inputs[0]);
  if (!reads(out.op(), x->op()) || (count == 2 && !reads(stats[1], x->op()))) not_ours();
  std::vector<Tensor> result;
  for (const Operation& op : stats) result.push_back(Tensor(op));
  return result;
}

}  // namespace norm_detail

/// The stages of the softmax whose output is out, found through the graph (whatever
/// their names); te::Error when out is not a softmax output.
/// `api` names the caller in the message.
inline SoftmaxStages softmax_stages_of(const Tensor& out, const char* api = "softmax_stages_of") {
  SoftmaxStages st;
  std::vector<Tensor> r = norm_detail::row_statistics(out, 2, api, "softmax", &st.x);
  st.max = r[0];
  st.expsum = r[1];
  st.out = out;
  return st;
}

/// The stages of the layer_norm whose output is out, found through the graph (whatever
/// their names); te::Error when out is not a layer_norm output.
/// `api` names the caller in the message.
inline LayerNormStages layer_norm_stages_of(const Tensor& out, const char* api = "layer_norm_stages_of") {
  LayerNormStages st;
  std::vector<Tensor> r = norm_detail::row_statistics(out, 2, api, "layer_norm", &st.x);
  st.mean = r[0];
  st.var = r[1];
  st.out = out;
  return st;
}

/// The stages of the layer_norm_welford whose output is out, found through the graph
/// (whatever their names); te::Error when out is not a layer_norm_welford output.
inline LayerNormWelfordStages layer_norm_welford_stages_of(const Tensor& out) {
  LayerNormWelfordStages st;
  std::vector<Tensor> r =
      norm_detail::row_statistics(out, 1, "layer_norm_welford_stages_of", "layer_norm_welford", &st.x);
  if (r[0].op()->num_outputs() != 3)
    throw Error("layer_norm_welford_stages_of: '" + out.name() + "' is not an output of te::ops::layer_norm_welford");
  st.mean = Tensor(r[0].op(), 0);
  st.m2 = Tensor(r[0].op(), 1);
  st.count = Tensor(r[0].op(), 2);
  st.out = out;
  return st;
}

}  // namespace te::ops

// Deprecated, kept for one release: this header still includes the CUDA schedules, as it
// did when it held them. Include te/ops/normalization_cuda.h for them; define
// TE_OPS_COMPUTE_ONLY to get the computes alone now.
#ifndef TE_OPS_COMPUTE_ONLY
#include "te/ops/normalization_cuda.h"
#endif
