// The math library and the bitwise operators as GPU loop IR, and the operation tables
// the JIT and interpreter tests share with it (tests/test_math_bitwise.cpp).
#pragma once
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cuda_emulation/loop_builders.h"
#include "te/te.h"

namespace te::cuda_test {

struct MathOp {
  const char* name;
  std::function<Expr(Expr)> apply;  // on a float expression of any precision
};

// Every float function of the math library, each of one input (atan2 pairs x with a
// second value made from it).
inline const std::vector<MathOp>& math_ops() {
  static const std::vector<MathOp> ops = {
      {"sin", [](Expr x) { return sin(x); }},
      {"cos", [](Expr x) { return cos(x); }},
      {"tan", [](Expr x) { return tan(x); }},
      {"asin", [](Expr x) { return asin(x); }},
      {"acos", [](Expr x) { return acos(x); }},
      {"atan", [](Expr x) { return atan(x); }},
      {"atan2", [](Expr x) { return atan2(x, 1.5f - x); }},
      {"sinh", [](Expr x) { return sinh(x); }},
      {"cosh", [](Expr x) { return cosh(x); }},
      {"erf", [](Expr x) { return erf(x); }},
      {"sigmoid", [](Expr x) { return sigmoid(x); }},
      {"exp2", [](Expr x) { return exp2(x); }},
      {"log2", [](Expr x) { return log2(x); }},
      {"log10", [](Expr x) { return log10(x); }},
      {"log1p", [](Expr x) { return log1p(x); }},
      {"expm1", [](Expr x) { return expm1(x); }},
      {"rsqrt", [](Expr x) { return rsqrt(x); }},
  };
  return ops;
}

// isnan, isinf, isfinite.
inline std::vector<std::function<Expr(Expr)>> classify_ops() {
  return {[](Expr x) { return isnan(x); }, [](Expr x) { return isinf(x); }, [](Expr x) { return isfinite(x); }};
}

struct BitwiseOp {
  const char* name;
  std::function<Expr(Expr, Expr)> apply;
};

// The bitwise operators on two integers of one type; the last two shift by amounts the
// backends can prove in range (plain C shifts on the GPU).
inline const std::vector<BitwiseOp>& bitwise_ops() {
  static const std::vector<BitwiseOp> ops = {
      {"and", [](Expr x, Expr y) { return x & y; }},
      {"or", [](Expr x, Expr y) { return x | y; }},
      {"xor", [](Expr x, Expr y) { return x ^ y; }},
      {"not", [](Expr x, Expr) { return ~x; }},
      {"shl", [](Expr x, Expr y) { return x << y; }},
      {"shr", [](Expr x, Expr y) { return x >> y; }},
      {"popcount", [](Expr x, Expr) { return popcount(x); }},
      {"shl_in_range", [](Expr x, Expr y) { return x << (y & 7); }},
      {"shr_in_range", [](Expr x, Expr y) { return x >> (y & 7); }},
  };
  return ops;
}

inline std::vector<DataType> bitwise_types() {
  return {Int(8), UInt(8), Int(16), Int(32), UInt(32), Int(64), UInt(64)};
}

// O32/O64/O16[k * n + i] = math_ops()[k](F/D/H[i]); C[j * n + i] the classification of
// F, D and H (j = 3 * type + op).
inline LoweredFunc math_library_func(const std::string& name = "math_library") {
  Var n("n");
  Buffer F("F", Float(32), {n}), D("D", Float(64), {n}), H("H", Float(16), {n});
  const int k_ops = static_cast<int>(math_ops().size());
  Buffer O32("O32", Float(32), {n * k_ops}), O64("O64", Float(64), {n * k_ops}), O16("O16", Float(16), {n * k_ops});
  Buffer C("C", Bool(), {n * 9});
  Stmt body = grid_1d(n, 32, [&](Expr i) {
    std::vector<Stmt> stores;
    Buffer ins[] = {F, D, H}, outs[] = {O32, O64, O16};
    for (int t = 0; t < 3; ++t) {
      Expr x = load(ins[t], {i});
      for (int k = 0; k < k_ops; ++k) stores.push_back(store(outs[t], math_ops()[k].apply(x), {k * n + i}));
      for (int j = 0; j < 3; ++j) stores.push_back(store(C, classify_ops()[j](x), {(3 * t + j) * n + i}));
    }
    return seq(stores);
  });
  return LoweredFunc{name,
                     {buffer_param(F), buffer_param(D), buffer_param(H), buffer_param(O32), buffer_param(O64),
                      buffer_param(O16), buffer_param(C)},
                     body};
}

// For each type of bitwise_types(): X, Y inputs and O[k * n + i] = bitwise_ops()[k](X[i], Y[i]).
inline LoweredFunc bitwise_func(const std::string& name = "bitwise") {
  Var n("n");
  const int k_ops = static_cast<int>(bitwise_ops().size());
  std::vector<Buffer> xs, ys, outs;
  for (DataType t : bitwise_types()) {
    std::string s = t.to_string();
    xs.emplace_back("X_" + s, t, std::vector<Expr>{n});
    ys.emplace_back("Y_" + s, t, std::vector<Expr>{n});
    outs.emplace_back("O_" + s, t, std::vector<Expr>{n * k_ops});
  }
  Stmt body = grid_1d(n, 32, [&](Expr i) {
    std::vector<Stmt> stores;
    for (size_t t = 0; t < xs.size(); ++t) {
      Expr x = load(xs[t], {i}), y = load(ys[t], {i});
      for (int k = 0; k < k_ops; ++k) stores.push_back(store(outs[t], bitwise_ops()[k].apply(x, y), {k * n + i}));
    }
    return seq(stores);
  });
  std::vector<Param> params;
  for (size_t t = 0; t < xs.size(); ++t) {
    params.push_back(buffer_param(xs[t]));
    params.push_back(buffer_param(ys[t]));
  }
  for (const Buffer& b : outs) params.push_back(buffer_param(b));
  return LoweredFunc{name, params, body};
}

// Inputs for math_library_func: special values (NaN, infinities, signed zeros, the edges
// of asin's domain, large arguments) then a spread over [-12, 12]; outputs left empty.
inline std::vector<Argument> math_library_args(int64_t n, const LoweredFunc& f) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> v = {nan, inf, -inf, 0.0, -0.0, 1.0, -1.0, 0.5, 1e-7, -1e-7, 1e30, 100.0, -100.0, 1.5, 88.5};
  std::vector<float> f32;
  std::vector<double> f64;
  std::vector<half> f16;
  for (int64_t i = 0; i < n; ++i) {
    double x = i < static_cast<int64_t>(v.size()) ? v[static_cast<size_t>(i)] : (i * 0.7371) - 12.0 * ((i * 7) % 3 - 1);
    f32.push_back(static_cast<float>(x));
    f64.push_back(x * 1.0000001);
    f16.push_back(half(static_cast<float>(x)));
  }
  std::vector<Argument> args = {NDArray::from_vector(f32, {n}), NDArray::from_vector(f64, {n}),
                                NDArray::from_vector(f16, {n})};
  for (size_t k = 3; k < f.params.size(); ++k) {
    std::vector<int64_t> shape = {n * static_cast<int64_t>(k == 6 ? 9 : math_ops().size())};
    args.push_back(NDArray::empty(shape, f.params[k].buffer.dtype()));
  }
  return args;
}

// Inputs for bitwise_func: random bit patterns, and shift amounts that cover negative,
// in-range, width-sized and far-out values; outputs left empty.
inline std::vector<Argument> bitwise_args(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Argument> args, outs;
  const int64_t amounts[] = {0, 1, 3, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 200, -1, -3, -8, -31, -32, -64, -65, -128};
  for (DataType t : bitwise_types()) {
    NDArray x = NDArray::empty({n}, t), y = NDArray::empty({n}, t);
    const size_t bytes = static_cast<size_t>(t.bytes());
    for (int64_t i = 0; i < n; ++i) {
      uint64_t bits = rng();
      if (i % 5 == 0) bits = i % 2 ? ~uint64_t{0} : uint64_t{1} << (rng() % 64);  // all ones, one bit
      int64_t amount = i % 3 == 2 ? static_cast<int64_t>(rng()) : amounts[static_cast<size_t>(i) % std::size(amounts)];
      std::memcpy(static_cast<char*>(x.data()) + i * static_cast<int64_t>(bytes), &bits, bytes);  // little-endian
      std::memcpy(static_cast<char*>(y.data()) + i * static_cast<int64_t>(bytes), &amount, bytes);
    }
    args.emplace_back(x);
    args.emplace_back(y);
    outs.emplace_back(NDArray::empty({n * static_cast<int64_t>(bitwise_ops().size())}, t));
  }
  args.insert(args.end(), outs.begin(), outs.end());
  return args;
}

}  // namespace te::cuda_test
