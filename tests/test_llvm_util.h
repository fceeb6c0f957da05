// Helpers for the LLVM backend's tests: hand-built loop IR, random arrays, and running a
// function both natively and through interpret() on copies of the same arguments.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "te/te.h"
#include "test_util.h"

namespace te::llvm_test {

inline Param buffer_param(const Buffer& b) {
  Param p;
  p.buffer = b;
  return p;
}
inline Param scalar_param(const Var& v) {
  Param p;
  p.var = v;
  return p;
}
inline LoweredFunc make_func(std::string name, std::vector<Param> params, Stmt body) {
  return LoweredFunc{std::move(name), std::move(params), std::move(body)};
}
inline Stmt serial(const Var& v, Expr min, Expr extent, Stmt body) {
  return for_loop(v, std::move(min), std::move(extent), ForKind::Serial, std::move(body));
}
inline Stmt parallel(const Var& v, Expr min, Expr extent, Stmt body) {
  return for_loop(v, std::move(min), std::move(extent), ForKind::Parallel, std::move(body));
}

// Exact comparisons with the interpreter need every float operation rounded on its own.
inline BuildOptions exact_options() {
  BuildOptions o;
  o.fma_contraction = false;
  o.fast_vector_math = false;
  return o;
}

// An array of shape with uniformly random values in [lo, hi] (integers: of the type).
template <typename T>
NDArray random_array(std::vector<int64_t> shape, uint32_t seed, double lo = -10, double hi = 10) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::mt19937 rng(seed);
  std::vector<T> v(static_cast<size_t>(n));
  for (size_t k = 0; k < v.size(); ++k) {
    T x{};
    if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
      x = T(static_cast<float>(std::uniform_real_distribution<double>(lo, hi)(rng)));
    } else if constexpr (std::is_floating_point_v<T>) {
      x = static_cast<T>(std::uniform_real_distribution<double>(lo, hi)(rng));
    } else if constexpr (std::is_same_v<T, bool>) {
      x = (rng() & 1) != 0;
    } else {
      x = static_cast<T>(rng());
    }
    v[k] = x;
  }
  return NDArray::from_vector(v, std::move(shape));
}

inline std::vector<Argument> copy_arguments(const std::vector<Argument>& args) {
  std::vector<Argument> out;
  for (const Argument& a : args) out.push_back(a.is_array() ? Argument(a.array().copy()) : a);
  return out;
}

// Element k of a as a double (floats), or its bits (integers), for comparisons.
inline double element(const NDArray& a, int64_t k) {
  const auto* p = static_cast<const uint8_t*>(a.data());
  DataType t = a.dtype();
  auto load = [&](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, p + k * static_cast<int64_t>(sizeof v), sizeof v);
    return v;
  };
  if (t.is_float()) {
    if (t.is_bfloat()) return bfloat16::bfloat16_bits_to_float(load(uint16_t{}));
    if (t.bits() == 16) return half::half_bits_to_float(load(uint16_t{}));
    if (t.bits() == 32) return load(float{});
    return load(double{});
  }
  if (t.is_bool()) return load(uint8_t{});
  switch (t.bits()) {
    case 8: return t.is_int() ? load(int8_t{}) : load(uint8_t{});
    case 16: return t.is_int() ? load(int16_t{}) : load(uint16_t{});
    case 32: return t.is_int() ? load(int32_t{}) : load(uint32_t{});
    default: return static_cast<double>(t.is_int() ? load(int64_t{}) : static_cast<int64_t>(load(uint64_t{})));
  }
}

// Expects equal arrays: integers exactly, floats within rel_tol (0: exactly; NaN == NaN).
inline void expect_arrays_equal(const NDArray& expected, const NDArray& got, double rel_tol, const std::string& what) {
  ASSERT_EQ(expected.dtype(), got.dtype()) << what;
  ASSERT_EQ(expected.shape(), got.shape()) << what;
  int failures = 0;
  for (int64_t k = 0; k < expected.size() && failures < 10; ++k) {
    double x = element(expected, k), y = element(got, k);
    bool same = (std::isnan(x) && std::isnan(y)) || x == y ||
                (rel_tol > 0 && std::fabs(x - y) <= rel_tol * std::max(1.0, std::fabs(x)));
    if (!same && expected.dtype().is_integer() && expected.dtype().bits() == 64) {
      // 64-bit integers do not all fit a double: compare the bits.
      same = std::memcmp(static_cast<const uint8_t*>(expected.data()) + 8 * k,
                         static_cast<const uint8_t*>(got.data()) + 8 * k, 8) == 0;
    }
    if (!same) {
      ++failures;
      ADD_FAILURE() << what << ": element " << k << " is " << y << ", expected " << x;
    }
  }
}

// Runs f through build() and through interpret() on separate copies of args and expects
// every array to end up the same. Returns the natively computed arguments.
inline std::vector<Argument> expect_matches_interpreter(const LoweredFunc& f, const std::vector<Argument>& args,
                                                        double rel_tol = 0, BuildOptions options = exact_options()) {
  std::vector<Argument> native = copy_arguments(args);
  std::vector<Argument> reference = copy_arguments(args);
  Module m = build(f, options);
  m(f.name).call(native);
  interpret(f, reference);
  for (size_t k = 0; k < args.size(); ++k) {
    if (!args[k].is_array()) continue;
    expect_arrays_equal(reference[k].array(), native[k].array(), rel_tol, f.name + " argument " + f.params[k].name());
  }
  return native;
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace te::llvm_test
