// Rounding a value to one of te's float types (float16, bfloat16, float32, float64), the
// same on every host: the one definition the simplifier, the interpreter and the CUDA
// literal printer share, so that a folded constant equals what a backend computes.
#pragma once
#include <cstdint>

#include "te/dtype.h"

namespace te {

// v rounded once to the nearest value of float type t (ties to even; beyond the range,
// infinity). For the 16-bit types a double first goes to float rounded to odd, which
// keeps the final rounding the only one that counts (float has >= 2 more digits).
double round_to_float_type(double v, DataType t);

// Integer v of type from -> float type to, rounded once to nearest even (what a cast does
// on every backend).
double int_to_float(int64_t v, DataType from, DataType to);

// double -> float, round to nearest even, defined beyond float's range (infinity from
// the midpoint between FLT_MAX and 2^128 on, where a plain conversion is undefined).
float double_to_float(double v);

// Significand digits of float type t, the implicit one included: 11 (float16),
// 8 (bfloat16), 24 (float32), 53 (float64).
int float_digits(DataType t);
// Whether every value of float type from is a value of float type to (float16 and
// bfloat16 hold neither one the other: bfloat16 has the range, float16 the digits).
bool float_type_holds(DataType to, DataType from);

}  // namespace te
