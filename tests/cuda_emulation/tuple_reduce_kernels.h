// Tuple reductions across threads (argmax/argmin over rows, Welford statistics, layer
// norm through Welford): the allreduce forms (shuffles, shuffles and shared memory, the
// shared-memory tree) with several values per thread. Used by the lowering tests
// (interpret() against C++), the CUDA emulation (against interpret()) and the nvcc checks.
#pragma once
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cuda_emulation/reduction_kernels.h"
#include "te/ops/normalization.h"
#include "te/ops/normalization_cuda.h"
#include "te/te.h"

namespace te::cuda_test {

// idx[i], val[i] = argmax (or argmin) over k of A[i, k], A rows x cols.
struct ArgRowsCase {
  std::string name;
  bool largest = true;
  DataType dtype = Float(32);
  int threads = 32;
  RowReduceCase::Form form = RowReduceCase::Form::Split;  // Split, Rfactor or RowsOnY
  int rows_per_block = 1;
  bool where = false;  // count only the elements with k % 3 != 1
};

inline LoweredFunc arg_rows_func(const ArgRowsCase& c) {
  using Form = RowReduceCase::Form;
  Var rows("rows"), cols("cols");
  Tensor A = placeholder({rows, cols}, c.dtype, "A");
  IterVar k = reduce_axis({0, cols}, "k");
  Expr where = c.where ? row_reduce_where(k) : Expr();
  std::vector<Tensor> out = compute_tuple(
      {rows}, [&](Expr i) { return c.largest ? argmax(A(i, k), {k}, where) : argmin(A(i, k), {k}, where); },
      {"idx", "val"});
  Schedule s = create_schedule({out[0]});
  IterVar tx = thread_axis("threadIdx.x"), bx = thread_axis("blockIdx.x");
  Stage st = s[out[0]];
  if (c.form == Form::Rfactor) {
    auto [ko, ki] = st.split(k, c.threads);
    Tensor rf = s.rfactor(out[0], ki);
    s[out[0]].bind(s[out[0]].op()->axis[0], bx);
    IterVar kt = s[out[0]].op()->reduce_axis[0];
    s[out[0]].bind(kt, tx);
    s[rf].compute_at(s[out[0]], kt);
    (void)ko;
  } else if (c.form == Form::RowsOnY) {
    auto [io, ii] = st.split(out[0].axis(0), c.rows_per_block);
    auto [ko, ki] = st.split(k, c.threads);
    st.bind(io, bx);
    st.bind(ii, thread_axis("threadIdx.y"));
    st.bind(ki, tx);
    (void)ko;
  } else {
    auto [ko, ki] = st.split(k, c.threads);
    st.bind(out[0].axis(0), bx);
    st.bind(ki, tx);
    (void)ko;
  }
  return lower(s, {A, out[0], out[1]}, c.name);
}

inline std::vector<ArgRowsCase> emulated_arg_rows_cases() {
  using Form = RowReduceCase::Form;
  return {
      {"argmax_warp", true, Float(32), 32, Form::Split},
      {"argmax_blocks", true, Float(32), 128, Form::Split},
      {"argmin_tree", false, Float(32), 24, Form::RowsOnY, 3, true},
      {"argmax_rfactor", true, Float(64), 64, Form::Rfactor},
      {"argmax_int_odd", true, Int(32), 48, Form::Split},
  };
}

// Rows with ties (small integers); for floats, a row of -inf and rows with NaNs.
inline NDArray arg_rows_input(DataType t, int64_t rows, int64_t cols, int seed) {
  NDArray a = NDArray::empty({rows, cols}, t);
  for (int64_t i = 0; i < rows * cols; ++i) set_element(a, i, static_cast<double>((i * 7919 + seed * 31) % 9) - 4.0);
  if (t.is_float()) {
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    if (rows > 1)
      for (int64_t k = 0; k < cols; ++k) set_element(a, cols + k, -inf);
    if (rows > 2) set_element(a, 2 * cols + cols / 2, nan);
    if (rows > 3) {
      set_element(a, 3 * cols + cols - 1, nan);
      set_element(a, 3 * cols + cols / 3, nan);
    }
  }
  return a;
}

// PyTorch's rule: the first extreme, NaN the most extreme. An empty row (every element
// left out by `where`) gives the identity (INT32_MAX, -inf or +inf).
inline std::vector<std::pair<int64_t, double>> arg_rows_reference(const NDArray& a, bool largest, bool where) {
  const int64_t rows = a.shape()[0], cols = a.shape()[1];
  std::vector<std::pair<int64_t, double>> out;
  for (int64_t i = 0; i < rows; ++i) {
    int64_t best = -1;
    double bv = 0;
    for (int64_t k = 0; k < cols; ++k) {
      if (where && k % 3 == 1) continue;
      const double v = element(a, i * cols + k);
      if (best < 0) {
        best = k;
        bv = v;
        continue;
      }
      if (std::isnan(bv)) break;
      if (std::isnan(v) || (largest ? v > bv : v < bv)) {
        best = k;
        bv = v;
      }
    }
    if (best < 0)
      out.emplace_back(std::numeric_limits<int32_t>::max(), largest ? -INFINITY : INFINITY);
    else
      out.emplace_back(best, bv);
  }
  return out;
}

// mean, m2 and count of each row through Welford, one block of `threads` per row.
inline LoweredFunc welford_rows_func(int threads, const std::string& name = "welford_rows") {
  Var rows("rows"), cols("cols");
  Tensor X = placeholder({rows, cols}, Float(32), "X");
  IterVar k = reduce_axis({0, cols}, "k");
  std::vector<Tensor> w = compute_tuple({rows}, [&](Expr i) { return welford(X(i, k), {k}); }, {"mean", "m2", "n"});
  Schedule s = create_schedule({w[0]});
  auto [ko, ki] = s[w[0]].split(k, threads);
  s[w[0]].bind(w[0].axis(0), thread_axis("blockIdx.x"));
  s[w[0]].bind(ki, thread_axis("threadIdx.x"));
  (void)ko;
  return lower(s, {X, w[0], w[1], w[2]}, name);
}

// te::ops::layer_norm_welford and argmax_rows with their CUDA schedules.
inline LoweredFunc layer_norm_welford_op_func(int cols, int threads) {
  Tensor x = placeholder({Var("rows"), cols}, Float(32), "x");
  Tensor g = placeholder({cols}, Float(32), "gamma"), b = placeholder({cols}, Float(32), "beta");
  Tensor y = ops::layer_norm_welford(x, g, b, 1e-5);
  Schedule s = create_schedule({y});
  ops::schedule_layer_norm_welford_cuda(s, y, threads);
  return lower(s, {x, g, b, y}, "layer_norm_welford" + std::to_string(cols));
}

inline LoweredFunc argmax_rows_op_func(int threads) {
  Tensor x = placeholder({Var("rows"), Var("cols")}, Float(32), "x");
  std::vector<Tensor> am = ops::argmax_rows(x);
  Schedule s = create_schedule({am[0]});
  ops::schedule_arg_rows_cuda(s, am[1], threads);
  return lower(s, {x, am[0], am[1]}, "argmax_rows_op");
}

}  // namespace te::cuda_test
