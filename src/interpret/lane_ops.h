// The numeric semantics of one lane: arithmetic, comparisons, casts and intrinsics for
// every scalar type. This file is the definition every backend must match.
//
//  - Integers (int/uint, any width) follow src/expr/int_arith.h: wrapping + - *,
//    floor / and %, C truncdiv/truncmod, x / 0 == 0, x % 0 == 0, INT_MIN / -1 == INT_MIN.
//  - float64 arithmetic is done in double, float32 in float (each operation rounds to
//    float), float16 and bfloat16 in float with the result rounded to the type (to
//    nearest even) after every operation.
//  - Float Div and TruncDiv are IEEE division; Mod is a - b * floor(a / b) (Halide's),
//    TruncMod is C's fmod; each is one operation (float16 rounds once at the end).
//  - Float min(a, b) is `a < b ? a : b` and max(a, b) is `a > b ? a : b` (so a NaN in a
//    gives b, a NaN in b gives the NaN).
//  - Casts: int -> int wraps; int -> float and float -> float round to nearest even;
//    float -> int truncates toward zero and saturates: NaN -> 0, values below the
//    type's range -> its minimum, above -> its maximum (LLVM's fpto[su]i.sat); anything
//    -> bool is `value != 0` (NaN -> true); bool -> anything is 0 or 1.
//  - Intrinsics on floats: floor, ceil, trunc, round (half away from zero), nearbyint
//    (half to even), abs, exp, log, sqrt, pow, tanh, fma (fused, one rounding), and
//    sin ... expm1 (libm's functions of the type's precision: float16 through float,
//    rounded once), sigmoid as 1 / (1 + exp(-x)) and rsqrt as 1 / sqrt(x) (each
//    operation rounded in the type, float16 once at the end); isnan/isinf/isfinite give
//    bool lanes (constant answers for integers).
//  - Bitwise on integers: & | ^ ~ popcount on the type's bits; << and >> as
//    arith::shift_left/shift_right (int_arith.h): a * 2^b wrapped and floor(a / 2^b)
//    for every amount b, a negative amount shifting the other way. On integers: floor/ceil/round/nearbyint/trunc are
//    the identity, abs wraps (abs(INT_MIN) == INT_MIN), fma is a * b + c wrapping; the transcendental ones need floats.
#pragma once
#include "expr/float_round.h"
#include "expr/int_arith.h"
#include "interpret/value.h"
#include "te/dtype.h"
#include "te/expr.h"

namespace te::interp {

// op on two integer (or bool) lanes of type t.
inline int64_t int_binary_lane(BinOp op, DataType t, int64_t a, int64_t b) { return arith::binary(op, a, b, t); }

// op on two float lanes of type t.
Scalar float_binary_lane(BinOp op, DataType t, Scalar a, Scalar b);

// op on two lanes of element type t (the operands' type). Comparisons and && || give
// a bool lane (in `i`); the others a lane of type t.
inline Scalar binary_lane(BinOp op, DataType t, Scalar a, Scalar b) {
  if (!t.is_float()) return int_scalar(int_binary_lane(op, t, a.i, b.i));
  return float_binary_lane(op, t, a, b);
}

// Converts a lane of element type from to element type to.
Scalar cast_lane(DataType from, DataType to, Scalar v);

// A one-argument intrinsic (floor ... tanh, likely) on a lane of element type t.
// Throws te::Error for a transcendental intrinsic on a non-float type.
// isnan/isinf/isfinite give a bool lane; ~ and popcount need integers.
Scalar unary_intrinsic_lane(Intrinsic op, DataType t, Scalar x);
// pow and atan2 (floats), & | ^ << >> (integers) on lanes of element type t.
Scalar binary_intrinsic_lane(Intrinsic op, DataType t, Scalar x, Scalar y);
Scalar fma_lane(DataType t, Scalar a, Scalar b, Scalar c);

}  // namespace te::interp
