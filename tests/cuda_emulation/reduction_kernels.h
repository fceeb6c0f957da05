// Cross-thread reductions scheduled from TE computes: every form the lowering has (warp
// shuffles only, shuffles and shared memory across warps, a shared-memory tree), each
// reducer and several dtypes. Used by the lowering tests (interpret() against C++), the
// CUDA emulation (bit for bit against interpret()) and the nvcc checks.
#pragma once
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "te/ops/normalization.h"
#include "te/ops/normalization_cuda.h"
#include "te/te.h"

namespace te::cuda_test {

// B[i] = reducer over k of A[i, k] (where the condition holds), A rows x cols.
struct RowReduceCase {
  std::string name;
  Reducer reducer = Reducer::Sum;
  DataType dtype = Float(32);
  int threads = 32;  // reduction threads per row
  enum class Form {
    Split,       // k split by `threads`, the inner part on threadIdx.x; a row per block
    Whole,       // k itself on threadIdx.x (cols is `threads`)
    Rfactor,     // k split, rfactor of the inner part, the new reduce axis on threadIdx.x
    RowsOnY,     // as Split, with `rows_per_block` rows on threadIdx.y
    ReduceOnY,   // k on threadIdx.y, `rows_per_block` rows on threadIdx.x
    SerialRows,  // as Split, with `rows_per_block` rows in a serial loop around the threads
  } form = Form::Split;
  int rows_per_block = 1;
  bool where = false;  // count only the elements with k % 3 != 1
};

inline Expr row_reduce_where(const Expr& k) { return k % 3 != 1; }

inline LoweredFunc row_reduce_func(const RowReduceCase& c, Expr rows = Var("rows"), Expr cols = Var("cols")) {
  using Form = RowReduceCase::Form;
  if (c.form == Form::Whole) cols = c.threads;  // the block's threads are a constant
  Tensor A = placeholder({rows, cols}, c.dtype, "A");
  IterVar k = reduce_axis({0, cols}, "k");
  Tensor B = compute(
      {rows}, [&](Expr i) { return reduce(c.reducer, A(i, k), {k}, c.where ? row_reduce_where(k) : Expr()); }, "B");
  Schedule s = create_schedule({B});
  IterVar tx = thread_axis("threadIdx.x"), ty = thread_axis("threadIdx.y"), bx = thread_axis("blockIdx.x");
  switch (c.form) {
    case Form::Whole:
      s[B].bind(B.axis(0), bx);
      s[B].bind(k, tx);
      break;
    case Form::Split: {
      auto [ko, ki] = s[B].split(k, c.threads);
      s[B].bind(B.axis(0), bx);
      s[B].bind(ki, tx);
      (void)ko;
      break;
    }
    case Form::Rfactor: {
      auto [ko, ki] = s[B].split(k, c.threads);
      Tensor BF = s.rfactor(B, ki);
      s[B].bind(s[B].op()->axis[0], bx);
      IterVar kt = s[B].op()->reduce_axis[0];
      s[B].bind(kt, tx);
      s[BF].compute_at(s[B], kt);
      (void)ko;
      break;
    }
    case Form::RowsOnY:
    case Form::SerialRows: {
      auto [io, ii] = s[B].split(B.axis(0), c.rows_per_block);
      auto [ko, ki] = s[B].split(k, c.threads);
      s[B].bind(io, bx);
      if (c.form == Form::RowsOnY) s[B].bind(ii, ty);
      s[B].bind(ki, tx);
      (void)ko;
      break;
    }
    case Form::ReduceOnY: {
      auto [io, ii] = s[B].split(B.axis(0), c.rows_per_block);
      auto [ko, ki] = s[B].split(k, c.threads);
      s[B].bind(io, bx);
      s[B].bind(ii, tx);
      s[B].bind(ki, ty);
      (void)ko;
      break;
    }
  }
  return lower(s, {A, B}, c.name);
}

// The cases the emulation and nvcc run (the lowering tests run many more).
inline std::vector<RowReduceCase> emulated_row_reduce_cases() {
  using Form = RowReduceCase::Form;
  return {
      {"rowsum_warp", Reducer::Sum, Float(32), 32, Form::Split},
      {"rowmax_blocks", Reducer::Max, Float(32), 128, Form::Split},
      {"rowprod_odd", Reducer::Prod, Float(64), 48, Form::Split},
      {"rowmin_rows", Reducer::Min, Int(32), 16, Form::RowsOnY, 4},
      {"rowsum_straddle", Reducer::Sum, Int(64), 24, Form::RowsOnY, 3, true},
      {"rowsum_rfactor", Reducer::Sum, Float(32), 64, Form::Rfactor},
      {"rowmax_on_y", Reducer::Max, Float(32), 8, Form::ReduceOnY, 16},
      {"rowsum_half", Reducer::Sum, Float(16), 64, Form::Split, 1, true},
      {"rowsum_serial_rows", Reducer::Sum, Float(32), 256, Form::SerialRows, 3},
      {"rowmin_u8", Reducer::Min, UInt(8), 8, Form::Whole},
  };
}

// An element of an array of any of te's dtypes, as a double (64-bit integers up to 2^53).
inline double element(const NDArray& a, int64_t i) {
  const DataType t = a.dtype();
  const char* p = static_cast<const char*>(a.data()) + i * t.bytes();
  auto get = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return static_cast<double>(v);
  };
  if (t == Float(16)) {
    half h;
    std::memcpy(&h.bits, p, sizeof h.bits);
    return static_cast<double>(static_cast<float>(h));
  }
  if (t == BFloat(16)) {
    bfloat16 h;
    std::memcpy(&h.bits, p, sizeof h.bits);
    return static_cast<double>(static_cast<float>(h));
  }
  if (t == Float(32)) return get(0.0f);
  if (t == Float(64)) return get(0.0);
  if (t == Int(8)) return get(int8_t{});
  if (t == Int(16)) return get(int16_t{});
  if (t == Int(32)) return get(int32_t{});
  if (t == Int(64)) return get(int64_t{});
  if (t == UInt(8)) return get(uint8_t{});
  if (t == UInt(16)) return get(uint16_t{});
  if (t == UInt(32)) return get(uint32_t{});
  return get(uint64_t{});
}

inline void set_element(NDArray& a, int64_t i, double v) {
  const DataType t = a.dtype();
  char* p = static_cast<char*>(a.data()) + i * t.bytes();
  auto put = [&](auto x) { std::memcpy(p, &x, sizeof x); };
  if (t == Float(16))
    put(half(static_cast<float>(v)));
  else if (t == BFloat(16))
    put(bfloat16(static_cast<float>(v)));
  else if (t == Float(32))
    put(static_cast<float>(v));
  else if (t == Float(64))
    put(v);
  else if (t == Int(8))
    put(static_cast<int8_t>(v));
  else if (t == Int(16))
    put(static_cast<int16_t>(v));
  else if (t == Int(32))
    put(static_cast<int32_t>(v));
  else if (t == Int(64))
    put(static_cast<int64_t>(v));
  else if (t == UInt(8))
    put(static_cast<uint8_t>(v));
  else if (t == UInt(16))
    put(static_cast<uint16_t>(v));
  else if (t == UInt(32))
    put(static_cast<uint32_t>(v));
  else
    put(static_cast<uint64_t>(v));
}

// Inputs whose reduction is exact in every dtype: small integers (for prod: mostly 1,
// a few -1 and 2, so products stay representable), quarters for floats.
inline NDArray row_reduce_input(DataType t, Reducer r, int64_t rows, int64_t cols, int seed) {
  NDArray a = NDArray::empty({rows, cols}, t);
  for (int64_t i = 0; i < rows * cols; ++i) {
    int64_t h = (i * 2654435761LL + seed * 40503LL) % 1000003;
    double v = r == Reducer::Prod ? (h % 61 == 0 ? 2.0 : h % 13 == 0 ? -1.0 : 1.0) : static_cast<double>(h % 41) - 20.0;
    if (t.is_float() && r != Reducer::Prod) v /= 4.0;
    if (t.is_uint()) v = std::fabs(v);
    set_element(a, i, v);
  }
  return a;
}

// v as the dtype holds it: integers wrap around (two's complement), as te's do.
inline double wrap_to(DataType t, double v) {
  if (!t.is_integer() || t.bits() == 64) return v;
  const int64_t m = int64_t{1} << t.bits();
  int64_t x = static_cast<int64_t>(v) % m;
  if (x < 0) x += m;
  if (t.is_int() && x >= m / 2) x -= m;
  return static_cast<double>(x);
}

// The reduction of each row in double (exact for the inputs above while it fits).
inline std::vector<double> row_reduce_reference(const NDArray& a, Reducer r, bool where) {
  const int64_t rows = a.shape()[0], cols = a.shape()[1];
  std::vector<double> out;
  for (int64_t i = 0; i < rows; ++i) {
    double acc = r == Reducer::Sum ? 0.0 : r == Reducer::Prod ? 1.0 : r == Reducer::Min ? INFINITY : -INFINITY;
    for (int64_t k = 0; k < cols; ++k) {
      if (where && k % 3 == 1) continue;
      double x = element(a, i * cols + k);
      acc = r == Reducer::Sum    ? acc + x
            : r == Reducer::Prod ? acc * x
            : r == Reducer::Min  ? std::min(acc, x)
                                 : std::max(acc, x);
    }
    out.push_back(wrap_to(a.dtype(), acc));
  }
  return out;
}

// softmax over rows in one kernel, one block of `threads` per row: the row's maximum and
// its sum of exponentials are cross-thread reductions in shared memory, then every thread
// writes its columns.
inline LoweredFunc softmax_rows_func(int threads, const std::string& name = "softmax_rows") {
  Var rows("rows"), cols("cols");
  Tensor X = placeholder({rows, cols}, Float(32), "X");
  IterVar k1 = reduce_axis({0, cols}, "k1"), k2 = reduce_axis({0, cols}, "k2");
  Tensor M = compute(
      {rows}, [&](Expr i) { return max(X(i, k1), {k1}); }, "M");
  Tensor E = compute(
      {rows}, [&](Expr i) { return sum(exp(X(i, k2) - M(i)), {k2}); }, "E");
  Tensor Y = compute(
      {rows, cols}, [&](Expr i, Expr j) { return exp(X(i, j) - M(i)) / E(i); }, "Y");
  Schedule s = create_schedule({Y});
  IterVar tx = thread_axis("threadIdx.x");
  auto [jo, ji] = s[Y].split(Y.axis(1), threads);
  s[Y].bind(Y.axis(0), thread_axis("blockIdx.x"));
  s[Y].bind(ji, tx);
  for (const Tensor& R : {M, E}) {
    auto [ko, ki] = s[R].split(s[R].op()->reduce_axis[0], threads);
    s[R].bind(ki, tx);
    s[R].compute_at(s[Y], Y.axis(0));
    (void)ko;
  }
  (void)jo;
  return lower(s, {X, Y}, name);
}

// te::ops::softmax and layer_norm with their CUDA schedules (rows of `cols` columns, read
// once into shared memory).
inline LoweredFunc softmax_op_func(int cols, int threads) {
  Tensor x = placeholder({Var("rows"), cols}, Float(32), "x");
  Tensor y = ops::softmax(x);
  Schedule s = create_schedule({y});
  ops::schedule_softmax_cuda(s, y, threads);
  return lower(s, {x, y}, "softmax_op" + std::to_string(cols));
}

inline LoweredFunc layer_norm_op_func(int cols, int threads) {
  Tensor x = placeholder({Var("rows"), cols}, Float(32), "x");
  Tensor g = placeholder({cols}, Float(32), "gamma"), b = placeholder({cols}, Float(32), "beta");
  Tensor y = ops::layer_norm(x, g, b, 1e-5);
  Schedule s = create_schedule({y});
  ops::schedule_layer_norm_cuda(s, y, threads);
  return lower(s, {x, g, b, y}, "layer_norm_op" + std::to_string(cols));
}

// te::ops::reduce_rows (a row sum) with its CUDA schedule.
inline LoweredFunc reduce_rows_op_func(int cols, int threads) {
  Tensor x = placeholder({Var("rows"), cols}, Float(32), "x");
  Schedule s = create_schedule({ops::reduce_rows(x)});
  Tensor y = s.outputs()[0];
  ops::schedule_reduce_rows_cuda(s, y, threads);
  return lower(s, {x, y}, "reduce_rows_op" + std::to_string(cols));
}

}  // namespace te::cuda_test
