/// \file
/// Row reductions, softmax and layer norm over the last axis as TE computes, with CUDA
/// schedules that reduce each row across the threads of a block (header-only).
///
///   Tensor y = te::ops::softmax(x);                  // x: (..., C), float
///   Schedule s = create_schedule({y});
///   te::ops::schedule_softmax_cuda(s, y);            // one block per row
///
/// Stages: softmax has `<name>.max` and `<name>.expsum` (per row); layer_norm has
/// `<name>.mean` and `<name>.var` (per row, two passes: the variance of x - mean, so no
/// cancellation); layer_norm_welford has one stage `<name>.mean` with the outputs mean,
/// m2 and count (per row, one pass: Welford's update); reduce_rows is one stage,
/// argmax_rows / argmin_rows one stage with two outputs. float16 and bfloat16 inputs are
/// computed in float32.
/// The CUDA schedules put a row in one block of `threads` threads (a multiple of 32, at
/// most 1024): each thread reads the row's columns tx, tx + threads, ... (coalesced),
/// the per-row statistics are cross-thread reductions (warp shuffles, then shared memory
/// across warps), and with `cache_row` the row is read from global memory once into
/// shared memory when C is a constant (C elements must fit in 48 KB).
#pragma once
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
      throw Error(std::string(op) + ": gamma and beta must be 1-D with x's dtype " + x.dtype().to_string() +
                  ", got " + p->dtype().to_string() + " with " + std::to_string(p->ndim()) + " axes");
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

// The stage of the graph under out whose name is out's name + suffix (undefined if none).
inline Tensor find_input(const Tensor& out, const std::string& suffix) {
  std::vector<Tensor> todo{out};
  while (!todo.empty()) {
    Tensor t = todo.back();
    todo.pop_back();
    if (t.op()->name == out.op()->name + suffix) return t;
    for (const Operation& in : t.op()->inputs) todo.push_back(Tensor(in));
  }
  return Tensor();
}

inline Tensor require_stage(const Tensor& out, const std::string& suffix, const char* schedule) {
  Tensor t = find_input(out, suffix);
  if (!t.defined())
    throw Error(std::string(schedule) + ": '" + out.op()->name + "' has no stage '" + out.op()->name + suffix +
                "'; pass the output of the matching te::ops function");
  return t;
}

inline void check_threads(int threads, const char* schedule) {
  if (threads < 32 || threads > 1024 || threads % 32 != 0)
    throw Error(std::string(schedule) + ": threads must be a multiple of 32 in [32, 1024], got " +
                std::to_string(threads));
}

// out's leading axes fused onto blockIdx.x, its last axis split over threadIdx.x.
inline IterVar block_per_row(Schedule& s, const Tensor& out, int threads) {
  Stage st = s[out];
  std::vector<IterVar> rows;
  for (int d = 0; d + 1 < out.ndim(); ++d) rows.push_back(out.axis(d));
  IterVar row = st.fuse(rows);
  auto [co, ci] = st.split(out.axis(out.ndim() - 1), threads);
  st.bind(row, thread_axis("blockIdx.x"));
  st.bind(ci, thread_axis("threadIdx.x"));
  (void)co;
  return row;
}

// A per-row reduction computed at the output's row loop, its columns over the threads.
inline void reduce_at_row(Schedule& s, const Tensor& r, const Tensor& out, const IterVar& row, int threads) {
  Stage st = s[r];
  auto [ko, ki] = st.split(r.op()->reduce_axis[0], threads);
  st.bind(ki, thread_axis("threadIdx.x"));
  st.compute_at(s[out], row);
  (void)ko;
}

// x's row in shared memory, fetched once by the block's threads for every reader (when
// the row has a constant length: shared memory has a fixed size).
inline void cache_row(Schedule& s, const Tensor& x, const std::vector<Tensor>& readers, const Tensor& out,
                      const IterVar& row, int threads) {
  if (!as_const_int(x.shape().back())) return;
  Tensor xs = s.cache_read(x, "shared", readers);
  s[xs].compute_at(s[out], row);
  auto [co, ci] = s[xs].split(xs.axis(xs.ndim() - 1), threads);
  s[xs].bind(ci, thread_axis("threadIdx.x"));
  (void)co;
}

// softmax and layer_norm: two per-row statistics (stages out + suffix) reduced across the
// threads of the row's block, then the output; x is the first statistic's input.
inline void schedule_two_statistics(Schedule& s, const Tensor& out, const std::vector<std::string>& suffixes,
                                    int threads, bool cache, const char* schedule) {
  check_threads(threads, schedule);
  std::vector<Tensor> readers;
  for (const std::string& suffix : suffixes) readers.push_back(require_stage(out, suffix, schedule));
  IterVar row = block_per_row(s, out, threads);
  for (const Tensor& r : readers) reduce_at_row(s, r, out, row, threads);
  Tensor x(readers[0].op()->inputs[0]);
  readers.push_back(out);
  if (cache) cache_row(s, x, readers, out, row, threads);
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
  return compute_tuple(
      shape,
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

/// exp(x - max) / sum(exp(x - max)) over the last axis.
inline Tensor softmax(const Tensor& x, const std::string& name = "softmax") {
  norm_detail::check_input(x, "softmax");
  const Expr cols = x.shape().back();
  std::vector<Expr> rows(x.shape().begin(), x.shape().end() - 1);
  using norm_detail::as_float;
  IterVar k1 = norm_detail::column_axis(cols), k2 = norm_detail::column_axis(cols);
  using norm_detail::at;
  using norm_detail::row_of;
  Tensor m = compute_from_vars(rows, [&](const std::vector<Var>& r) { return max(as_float(x(at(r, k1))), {k1}); },
                               name + ".max");
  Tensor e = compute_from_vars(
      rows, [&](const std::vector<Var>& r) { return sum(exp(as_float(x(at(r, k2))) - m(row_of(r))), {k2}); },
      name + ".expsum");
  return compute(
      x.shape(),
      [&](const std::vector<Var>& v) {
        std::vector<Expr> r = norm_detail::leading(v);
        Expr y = exp(as_float(x(std::vector<Expr>(v.begin(), v.end()))) - m(r)) / e(r);
        return x.dtype().bits() == 16 ? cast(x.dtype(), y) : y;
      },
      name);
}

/// (x - mean) / sqrt(var + eps) * gamma + beta over the last axis; gamma and beta have
/// shape (C,) (undefined tensors: 1 and 0).
inline Tensor layer_norm(const Tensor& x, const Tensor& gamma = Tensor(), const Tensor& beta = Tensor(),
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
  Tensor mean = compute_from_vars(rows, [&](const std::vector<Var>& r) { return sum(as_float(x(at(r, k1))) / n, {k1}); },
                                  name + ".mean");
  Tensor var = compute_from_vars(
      rows,
      [&](const std::vector<Var>& r) {
        Expr d = as_float(x(at(r, k2))) - mean(row_of(r));
        return sum(d * d / n, {k2});
      },
      name + ".var");
  return norm_detail::affine_output(x, gamma, beta, name, [&](const Expr& xv, const std::vector<Expr>& r) {
    return (xv - mean(r)) / sqrt(var(r) + make_const(ct, eps));
  });
}

/// layer_norm with the mean and variance from one pass over the row (Welford's update,
/// partial results combined as Chan et al.): one statistics stage `<name>.mean` with
/// outputs mean, m2 and count, then the output.
inline Tensor layer_norm_welford(const Tensor& x, const Tensor& gamma = Tensor(), const Tensor& beta = Tensor(),
                                 double eps = 1e-5, const std::string& name = "layer_norm") {
  norm_detail::check_input(x, "layer_norm_welford");
  norm_detail::check_affine(x, gamma, beta, "layer_norm_welford");
  const DataType ct = norm_detail::compute_type(x);
  std::vector<Expr> rows(x.shape().begin(), x.shape().end() - 1);
  IterVar k = norm_detail::column_axis(x.shape().back());
  std::vector<Tensor> stats = compute_tuple(
      rows,
      [&](const std::vector<Var>& r) { return welford(norm_detail::as_float(x(norm_detail::at(r, k))), {k}); },
      {name + ".mean", name + ".m2", name + ".count"});
  return norm_detail::affine_output(x, gamma, beta, name, [&](const Expr& xv, const std::vector<Expr>& r) {
    return (xv - stats[0](r)) * rsqrt(stats[1](r) / stats[2](r) + make_const(ct, eps));
  });
}

/// One block of `threads` per row of reduce_rows' output; the row's columns split over
/// the threads and combined by a cross-thread reduction.
inline void schedule_reduce_rows_cuda(Schedule& s, const Tensor& out, int threads = 256) {
  norm_detail::check_threads(threads, "schedule_reduce_rows_cuda");
  Stage st = s[out];
  std::vector<IterVar> rows;
  for (int d = 0; d < out.ndim(); ++d) rows.push_back(out.axis(d));
  IterVar row = st.fuse(rows);
  auto [ko, ki] = st.split(out.op()->reduce_axis[0], threads);
  st.bind(row, thread_axis("blockIdx.x"));
  st.bind(ki, thread_axis("threadIdx.x"));
  (void)ko;
}

/// One block of `threads` per row: the max and the sum of exponentials are cross-thread
/// reductions, then each thread writes its columns. cache_row: x's row is read once into
/// shared memory (when the number of columns is a constant).
inline void schedule_softmax_cuda(Schedule& s, const Tensor& out, int threads = 256, bool cache_row = true) {
  norm_detail::schedule_two_statistics(s, out, {".max", ".expsum"}, threads, cache_row, "schedule_softmax_cuda");
}

/// As schedule_softmax_cuda, for layer_norm's mean, variance and output.
inline void schedule_layer_norm_cuda(Schedule& s, const Tensor& out, int threads = 256, bool cache_row = true) {
  norm_detail::schedule_two_statistics(s, out, {".mean", ".var"}, threads, cache_row, "schedule_layer_norm_cuda");
}

/// As schedule_layer_norm_cuda, for layer_norm_welford: the one statistics stage (mean,
/// m2, count) is a cross-thread tuple reduction.
inline void schedule_layer_norm_welford_cuda(Schedule& s, const Tensor& out, int threads = 256, bool cache_row = true) {
  norm_detail::schedule_two_statistics(s, out, {".mean"}, threads, cache_row, "schedule_layer_norm_welford_cuda");
}

/// One block of `threads` per row of argmax_rows / argmin_rows (either output): the
/// row's columns split over the threads and combined by a cross-thread tuple reduction.
inline void schedule_arg_rows_cuda(Schedule& s, const Tensor& out, int threads = 256) {
  norm_detail::check_threads(threads, "schedule_arg_rows_cuda");
  if (out.op()->num_outputs() != 2 || out.op()->reduce_axis.size() != 1)
    throw Error("schedule_arg_rows_cuda: '" + out.name() + "' is not an output of argmax_rows or argmin_rows");
  Stage st = s[out];
  IterVar row = st.fuse(out.op()->axis);
  auto [ko, ki] = st.split(out.op()->reduce_axis[0], threads);
  st.bind(row, thread_axis("blockIdx.x"));
  st.bind(ki, thread_axis("threadIdx.x"));
  (void)ko;
}

}  // namespace te::ops
