// What each Intrinsic takes: its argument count and the element types it is defined on.
// One table for the builders' checks, the interpreter and both backends.
#pragma once
#include <cstddef>

#include "te/expr.h"

namespace te {

// The number of arguments of op (not Extern: an extern call takes what its C function does).
inline size_t intrinsic_arity(Intrinsic op) {
  switch (op) {
    case Intrinsic::Pow:
    case Intrinsic::Atan2:
    case Intrinsic::BitAnd:
    case Intrinsic::BitOr:
    case Intrinsic::BitXor:
    case Intrinsic::ShiftLeft:
    case Intrinsic::ShiftRight: return 2;
    case Intrinsic::Fma:
    case Intrinsic::IfThenElse:
    case Intrinsic::WarpShuffleDown: return 3;
    default: return 1;
  }
}

// & | ^ ~ << >> popcount: integers only.
inline bool is_bitwise(Intrinsic op) {
  switch (op) {
    case Intrinsic::BitAnd:
    case Intrinsic::BitOr:
    case Intrinsic::BitXor:
    case Intrinsic::BitNot:
    case Intrinsic::ShiftLeft:
    case Intrinsic::ShiftRight:
    case Intrinsic::Popcount: return true;
    default: return false;
  }
}

// The math functions defined on floats only (floor ... abs also take integers, and
// isnan/isinf/isfinite answer for integers too).
inline bool is_float_only(Intrinsic op) {
  switch (op) {
    case Intrinsic::Exp:
    case Intrinsic::Log:
    case Intrinsic::Sqrt:
    case Intrinsic::Tanh:
    case Intrinsic::Pow:
    case Intrinsic::Sin:
    case Intrinsic::Cos:
    case Intrinsic::Tan:
    case Intrinsic::Asin:
    case Intrinsic::Acos:
    case Intrinsic::Atan:
    case Intrinsic::Atan2:
    case Intrinsic::Sinh:
    case Intrinsic::Cosh:
    case Intrinsic::Erf:
    case Intrinsic::Sigmoid:
    case Intrinsic::Exp2:
    case Intrinsic::Log2:
    case Intrinsic::Log10:
    case Intrinsic::Log1p:
    case Intrinsic::Expm1:
    case Intrinsic::Rsqrt: return true;
    default: return false;
  }
}

}  // namespace te
