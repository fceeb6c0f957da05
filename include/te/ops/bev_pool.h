/// \file
/// BEV pooling (BEVDet's bev_pool_v2, as in mmdet3d / BEVDet) as a TE compute
/// (header-only): a reduction whose extent is read from memory, scattered to positions
/// read from memory. Its schedules are in te/ops/bev_pool_cpu.h (schedule_bev_pool_cpu)
/// and te/ops/bev_pool_cuda.h (schedule_bev_pool_cuda).
///
///   Tensor out = te::ops::bev_pool_v2(depth, feat, ranks_depth, ranks_feat, ranks_bev,
///                                     interval_starts, interval_lengths, {B, Dz, Dy, Dx});
///
/// depth (B, N, D, fH, fW) and feat (B, N, fH, fW, C) float; int32 ranks_depth, ranks_feat,
/// ranks_bev (one per kept frustum point, sorted by ranks_bev); int32 interval_starts,
/// interval_lengths (one per occupied BEV cell). Output (B, Dz, Dy, Dx, C): for interval i
/// with s = interval_starts[i], L = interval_lengths[i] and every channel c,
///   out.flat[ranks_bev[s] * C + c] = sum_{j < L} depth.flat[ranks_depth[s + j]]
///                                               * feat.flat[ranks_feat[s + j] * C + c],
/// zero where no interval lands. Stages: `<name>` (the scatter over (interval, channel),
/// reducing over the interval's points) and `<name>.zero` (its base, the zero fill: the
/// schedules reach it as the scatter's base, `out.op()->scatter_base`, not by name).
/// The kernel trusts the intervals as BEVDet's CUDA kernel does: a rank or interval
/// outside its tensor is a te::Error from the JIT's index checks (a trap in CUDA), but
/// overlapping or unsorted intervals silently give what the formula says (the last
/// interval of a cell wins); check_bev_pool_inputs() checks everything on the host.
#pragma once
#include <string>
#include <vector>

#include "te/ndarray.h"
#include "te/schedule.h"
#include "te/tensor.h"

namespace te::ops {

namespace bev_detail {

[[noreturn]] inline void fail(const std::string& msg) { throw Error("bev_pool_v2: " + msg); }

inline std::string shape_text(const Tensor& t) {
  std::string s = "(";
  for (int d = 0; d < t.ndim(); ++d) s += (d ? ", " : "") + to_string(t.shape()[d]);
  return s + ")";
}

inline void check_tensor(const Tensor& t, const char* what, int ndim, bool is_float) {
  if (!t.defined()) fail(std::string(what) + " is undefined");
  if (t.ndim() != ndim)
    fail(std::string(what) + " '" + t.name() + "' must have " + std::to_string(ndim) + " dimensions, got " +
         shape_text(t));
  if (is_float && !t.dtype().is_float())
    fail(std::string(what) + " '" + t.name() + "' must be float, got " + t.dtype().to_string());
  if (!is_float && t.dtype() != Int(32))
    fail(std::string(what) + " '" + t.name() + "' must be int32, got " + t.dtype().to_string());
}

// Two extents that are different constants.
inline bool differ(const Expr& a, const Expr& b) {
  const int64_t* x = as_const_int(a);
  const int64_t* y = as_const_int(b);
  return x && y && *x != *y;
}

// The row-major indices of element `flat` of a tensor of `shape` (the first index not
// wrapped, so flattening them gives `flat` back and an out-of-range flat index stays out
// of range for the bounds checks).
inline std::vector<Expr> unravel(const Expr& flat, const std::vector<Expr>& shape) {
  std::vector<Expr> idx(shape.size());
  Expr rest = flat;  // flat over the product of the extents after d
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = d == 0 ? rest : rest % shape[d];
    rest = rest / shape[d];
  }
  return idx;
}

// The zero fill under bev_pool_v2's output out (the scatter's base), for schedule.
inline Tensor zero_of(const Tensor& out, const char* schedule) {
  if (!out.defined() || !out.op()->is_scatter() || out.op()->reduce_axis.size() != 1 || out.op()->axis.size() != 2)
    throw Error(std::string(schedule) + ": '" + (out.defined() ? out.name() : std::string("?")) +
                "' is not an output of te::ops::bev_pool_v2");
  return Tensor(out.op()->scatter_base);
}

}  // namespace bev_detail

/// BEVDet's bev_pool_v2 (see the file comment). bev_shape is (B, Dz, Dy, Dx).
inline Tensor bev_pool_v2(const Tensor& depth, const Tensor& feat, const Tensor& ranks_depth, const Tensor& ranks_feat,
                          const Tensor& ranks_bev, const Tensor& interval_starts, const Tensor& interval_lengths,
                          std::vector<Expr> bev_shape, const std::string& name = "bev_pool") {
  using namespace bev_detail;
  check_tensor(depth, "depth", 5, true);
  check_tensor(feat, "feat", 5, true);
  check_tensor(ranks_depth, "ranks_depth", 1, false);
  check_tensor(ranks_feat, "ranks_feat", 1, false);
  check_tensor(ranks_bev, "ranks_bev", 1, false);
  check_tensor(interval_starts, "interval_starts", 1, false);
  check_tensor(interval_lengths, "interval_lengths", 1, false);
  if (depth.dtype() != feat.dtype())
    fail("depth is " + depth.dtype().to_string() + " but feat is " + feat.dtype().to_string() + ": give both one type");
  const char* dims[] = {"B", "N", "fH", "fW"};
  const int depth_dim[] = {0, 1, 3, 4}, feat_dim[] = {0, 1, 2, 3};
  for (int k = 0; k < 4; ++k)
    if (differ(depth.shape()[depth_dim[k]], feat.shape()[feat_dim[k]]))
      fail(std::string("depth ") + shape_text(depth) + " and feat " + shape_text(feat) + " disagree on " + dims[k]);
  if (differ(ranks_depth.shape()[0], ranks_feat.shape()[0]) || differ(ranks_depth.shape()[0], ranks_bev.shape()[0]))
    fail("ranks_depth, ranks_feat and ranks_bev must have one entry per point, got " + shape_text(ranks_depth) + ", " +
         shape_text(ranks_feat) + " and " + shape_text(ranks_bev));
  if (differ(interval_starts.shape()[0], interval_lengths.shape()[0]))
    fail("interval_starts " + shape_text(interval_starts) + " and interval_lengths " + shape_text(interval_lengths) +
         " must have one entry per interval");
  if (bev_shape.size() != 4)
    fail("bev_shape must be (B, Dz, Dy, Dx), got " + std::to_string(bev_shape.size()) + " extents");
  if (differ(bev_shape[0], depth.shape()[0]))
    fail("bev_shape's B (" + to_string(bev_shape[0]) + ") is not depth's (" + to_string(depth.shape()[0]) + ")");

  const Expr C = feat.shape()[4];
  std::vector<Expr> out_shape = bev_shape;
  out_shape.push_back(C);
  std::vector<Expr> cells(bev_shape.begin(), bev_shape.end());
  std::vector<Expr> feat_rows(feat.shape().begin(), feat.shape().end() - 1);
  Tensor zero = compute(
      out_shape, [&](const std::vector<Var>&) { return make_zero(feat.dtype()); }, name + ".zero");
  return scatter(zero, {interval_starts.shape()[0], C},
                 [&](Expr i, Expr c) {
                   Expr s = interval_starts(i);
                   IterVar j = reduce_axis({s, s + interval_lengths(i)}, "p");
                   std::vector<Expr> f = unravel(ranks_feat(j.var()), feat_rows);
                   f.push_back(c);
                   Expr value = sum(depth(unravel(ranks_depth(j.var()), depth.shape())) * feat(f), {j});
                   std::vector<Expr> at = unravel(ranks_bev(s), cells);
                   at.push_back(c);
                   return ScatterTo{at, value};
                 },
                 name, {"interval", "c"});
}

/// Checks bev_pool_v2's index inputs on the host, as BEVDet's preprocessing makes them:
/// ranks within depth (depth_size elements), feat (feat_rows rows) and the BEV grid
/// (cells cells); ranks_bev sorted; the intervals, in order, exactly the runs of equal
/// ranks_bev. Throws a te::Error naming the first violation.
inline void check_bev_pool_inputs(const NDArray& ranks_depth, const NDArray& ranks_feat, const NDArray& ranks_bev,
                                  const NDArray& interval_starts, const NDArray& interval_lengths, int64_t depth_size,
                                  int64_t feat_rows, int64_t cells) {
  using bev_detail::fail;
  for (const NDArray* a : {&ranks_depth, &ranks_feat, &ranks_bev, &interval_starts, &interval_lengths})
    if (a->dtype() != Int(32) || a->shape().size() != 1) fail("the rank and interval arrays must be 1-D int32");
  const std::vector<int32_t> rd = ranks_depth.to_vector<int32_t>(), rf = ranks_feat.to_vector<int32_t>(),
                             rb = ranks_bev.to_vector<int32_t>(), st = interval_starts.to_vector<int32_t>(),
                             len = interval_lengths.to_vector<int32_t>();
  const size_t n = rd.size();
  if (rf.size() != n || rb.size() != n)
    fail("ranks_depth, ranks_feat and ranks_bev have " + std::to_string(n) + ", " + std::to_string(rf.size()) +
         " and " + std::to_string(rb.size()) + " entries; give one per point");
  if (st.size() != len.size())
    fail("interval_starts has " + std::to_string(st.size()) + " entries but interval_lengths " +
         std::to_string(len.size()));
  auto check_rank = [&](const char* what, size_t k, int32_t v, int64_t size) {
    if (v < 0 || v >= size)
      fail(std::string(what) + "[" + std::to_string(k) + "] = " + std::to_string(v) + " is outside [0, " +
           std::to_string(size) + ")");
  };
  for (size_t k = 0; k < n; ++k) {
    check_rank("ranks_depth", k, rd[k], depth_size);
    check_rank("ranks_feat", k, rf[k], feat_rows);
    check_rank("ranks_bev", k, rb[k], cells);
    if (k > 0 && rb[k] < rb[k - 1])
      fail("ranks_bev is not sorted: ranks_bev[" + std::to_string(k) + "] = " + std::to_string(rb[k]) +
           " < ranks_bev[" + std::to_string(k - 1) + "] = " + std::to_string(rb[k - 1]));
  }
  size_t next = 0;
  for (size_t i = 0; i < st.size(); ++i) {
    const std::string at = "interval " + std::to_string(i) + " (start " + std::to_string(st[i]) + ", length " +
                           std::to_string(len[i]) + ")";
    if (st[i] < 0 || static_cast<size_t>(st[i]) != next)
      fail(at + " does not start where the previous one ends (" + std::to_string(next) + ")");
    if (len[i] <= 0) fail(at + " is empty or negative");
    if (static_cast<size_t>(st[i]) + static_cast<size_t>(len[i]) > n)
      fail(at + " runs past the last point (" + std::to_string(n) + " points)");
    size_t end = static_cast<size_t>(st[i]) + static_cast<size_t>(len[i]);
    if (rb[end - 1] != rb[st[i]]) fail(at + " holds points of different BEV cells");
    if (end < n && rb[end] == rb[st[i]])
      fail(at + " ends before the run of BEV cell " + std::to_string(rb[end]) + " does");
    next = end;
  }
  if (next != n) fail("the intervals cover " + std::to_string(next) + " of " + std::to_string(n) + " points");
}

}  // namespace te::ops

// Deprecated, kept for one release: this header still includes the schedules, as it did
// when it held them. Include te/ops/bev_pool_cpu.h or te/ops/bev_pool_cuda.h for a
// schedule; define TE_OPS_COMPUTE_ONLY to get the compute alone now.
#ifndef TE_OPS_COMPUTE_ONLY
#include "te/ops/bev_pool_cpu.h"
#include "te/ops/bev_pool_cuda.h"
#endif
