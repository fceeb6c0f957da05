// Random typed expression trees over every scalar type te has: int8..64, uint8..64,
// float16/32/64 and bool, with casts between any two, select, if_then_else, min/max,
// floor and truncating division and modulo (divisors 0 and -1 included), the math
// intrinsics on floats, and lets. Leaves are caller-given expressions (tensor reads, loop
// variables) and constants, often edge values (INT_MIN, -1, NaN, inf, -0.0, ...).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fuzz_rng.h"
#include "te/te.h"

namespace te::fuzz {

// What a generated tree may contain.
struct ExprGenOptions {
  bool floats = true;          // float types anywhere in the tree
  bool float_division = true;  // float / (NaN and inf appear)
  bool transcendental = true;  // exp, log, sqrt, pow, tanh on floats
  bool int_division = true;    // / % truncdiv truncmod on integers
  // Signed 32/64-bit + - * unary-minus abs and fma may wrap; CUDA (like C) does not
  // define that, so trees for the CUDA backend leave them out.
  bool signed_wrap = true;
  bool lets = true;
  // Only + - * min max select abs and exact constants on float values (the graph
  // fuzzer: float sums stay exact in any order).
  bool exact_floats_only = false;
  // Constants are small integers (-4..4, or 0..4 unsigned): values stay small.
  bool small_constants = false;
  // Floats only through + and * of leaves and constants in [0.5, 2]: every rounding
  // error is relative (the FMA-contraction graphs).
  bool positive_only = false;
  // bfloat16 among the types (opt-in: the default pool keeps every seed's case as it was).
  bool bfloat16 = false;
};

// The types a tree can have.
const std::vector<DataType>& all_scalar_types();     // ints, uints, floats and bool
const std::vector<DataType>& types_with_bfloat16();  // the same and bfloat16
const std::vector<DataType>& integer_types();        // int8..64, uint8..64

class ExprGen {
 public:
  // make_constant(t, value) turns a chosen constant into an expression; by default an
  // immediate (make_const). The expression fuzzer also passes one that reads the value
  // from an input array, to check constant folding against run-time evaluation; the
  // random draws do not depend on it.
  using ConstantMaker = std::function<Expr(DataType, const Expr& immediate)>;

  ExprGen(Rng& rng, ExprGenOptions options, ConstantMaker make_constant = nullptr);

  // Adds a leaf the trees may use (any type; casts reach other types).
  void add_leaf(const Expr& e) { leaves_.push_back(e); }
  // Removes the leaf added last (a loop or let variable going out of scope).
  void pop_leaf() { leaves_.pop_back(); }

  Expr gen(DataType t, int depth);
  Expr gen_bool(int depth);

  // A random constant of t (edge values often).
  Expr constant(DataType t);

 private:
  Expr leaf(DataType t);
  std::pair<Expr, Expr> two(DataType t, int depth);  // two operands, drawn in order
  Expr gen_int(DataType t, int depth);
  Expr gen_float(DataType t, int depth);
  Expr divisor(DataType t, int depth);
  DataType any_type(bool allow_bool);
  Expr immediate(DataType t);
  Expr wrap_constant(DataType t, const Expr& imm);

  Rng& rng_;
  ExprGenOptions opt_;
  ConstantMaker make_constant_;
  std::vector<Expr> leaves_;
  int lets_ = 0;
};

}  // namespace te::fuzz
