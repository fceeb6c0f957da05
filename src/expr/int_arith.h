// Integer semantics shared by constant folding, the simplifier and the interpreter.
// Values are held in int64_t; results are wrapped to the type's width (two's complement
// for Int, zero-extension for UInt). No function here has undefined behaviour.
#pragma once
#include <cstdint>

#include "te/dtype.h"
#include "te/expr.h"

namespace te::arith {

// Wraps v to `bits` bits: sign-extends for signed types, zero-extends for unsigned.
inline int64_t wrap(int64_t v, int bits, bool is_signed) {
  if (bits >= 64) return v;
  uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (is_signed && (u >> (bits - 1)) & 1) u |= ~mask;
  return static_cast<int64_t>(u);
}
inline int64_t wrap(int64_t v, DataType t) {
  if (t.is_bool()) return v != 0;
  return wrap(v, t.bits(), !t.is_uint());
}

inline int64_t add(int64_t a, int64_t b, DataType t) {
  return wrap(static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)), t);
}
inline int64_t sub(int64_t a, int64_t b, DataType t) {
  return wrap(static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)), t);
}
inline int64_t mul(int64_t a, int64_t b, DataType t) {
  return wrap(static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)), t);
}

// Unsigned values of the type's width (uint64 bit patterns live in int64_t).
inline uint64_t as_unsigned(int64_t v, DataType t) {
  if (t.bits() >= 64) return static_cast<uint64_t>(v);
  return static_cast<uint64_t>(v) & ((uint64_t{1} << t.bits()) - 1);
}

// C division: x / 0 == 0, INT_MIN / -1 == INT_MIN (wrapped).
inline int64_t truncdiv(int64_t a, int64_t b, DataType t) {
  if (b == 0) return 0;
  if (t.is_uint()) return wrap(static_cast<int64_t>(as_unsigned(a, t) / as_unsigned(b, t)), t);
  if (b == -1) return sub(0, a, t);
  return wrap(a / b, t);
}
// C remainder: x % 0 == 0, INT_MIN % -1 == 0.
inline int64_t truncmod(int64_t a, int64_t b, DataType t) {
  if (b == 0) return 0;
  if (t.is_uint()) return wrap(static_cast<int64_t>(as_unsigned(a, t) % as_unsigned(b, t)), t);
  if (b == -1) return 0;
  return wrap(a % b, t);
}
// Floor division (rounds toward -inf): x / 0 == 0, INT_MIN / -1 == INT_MIN.
inline int64_t floordiv(int64_t a, int64_t b, DataType t) {
  if (b == 0) return 0;
  if (t.is_uint()) return truncdiv(a, b, t);
  if (b == -1) return sub(0, a, t);
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
  return wrap(q, t);
}
// Floor modulo (result has the divisor's sign): x % 0 == 0, INT_MIN % -1 == 0.
inline int64_t floormod(int64_t a, int64_t b, DataType t) {
  if (b == 0) return 0;
  if (t.is_uint()) return truncmod(a, b, t);
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return wrap(r, t);
}

// Ordered comparison honouring signedness.
inline bool less(int64_t a, int64_t b, DataType t) {
  return t.is_uint() ? as_unsigned(a, t) < as_unsigned(b, t) : a < b;
}

// Bitwise operations on the type's bits (results wrapped, so uint patterns stay canonical).
inline int64_t bit_and(int64_t a, int64_t b, DataType t) { return wrap(a & b, t); }
inline int64_t bit_or(int64_t a, int64_t b, DataType t) { return wrap(a | b, t); }
inline int64_t bit_xor(int64_t a, int64_t b, DataType t) { return wrap(a ^ b, t); }
inline int64_t bit_not(int64_t a, DataType t) { return wrap(~a, t); }
inline int64_t popcount(int64_t a, DataType t) { return __builtin_popcountll(as_unsigned(a, t)); }

// The shift amount b as a direction and a magnitude (b may be INT64_MIN).
inline bool shift_is_negative(int64_t b, DataType t) { return !t.is_uint() && b < 0; }
inline uint64_t shift_magnitude(int64_t b, DataType t) {
  return shift_is_negative(b, t) ? uint64_t{0} - static_cast<uint64_t>(b) : as_unsigned(b, t);
}
// a * 2^k wrapped: 0 once k >= the width.
inline int64_t shift_left_by(int64_t a, uint64_t k, DataType t) {
  if (k >= static_cast<uint64_t>(t.bits())) return 0;
  return wrap(static_cast<int64_t>(static_cast<uint64_t>(a) << k), t);
}
// floor(a / 2^k): sign-filling on int, zero-filling on uint.
inline int64_t shift_right_by(int64_t a, uint64_t k, DataType t) {
  uint64_t limit = static_cast<uint64_t>(t.bits());
  if (t.is_uint()) return k >= limit ? 0 : static_cast<int64_t>(as_unsigned(a, t) >> k);
  return a >> (k >= limit ? limit - 1 : k);  // a is sign-extended in int64_t
}
// te's << and >> (expr.h): defined for every amount; a negative one shifts the other way.
inline int64_t shift_left(int64_t a, int64_t b, DataType t) {
  uint64_t k = shift_magnitude(b, t);
  return shift_is_negative(b, t) ? shift_right_by(a, k, t) : shift_left_by(a, k, t);
}
inline int64_t shift_right(int64_t a, int64_t b, DataType t) {
  uint64_t k = shift_magnitude(b, t);
  return shift_is_negative(b, t) ? shift_left_by(a, k, t) : shift_right_by(a, k, t);
}

// op on two integer (or bool) values of type t: te's rules for every binary operator.
// Comparisons and && || give 0 or 1.
inline int64_t binary(BinOp op, int64_t a, int64_t b, DataType t) {
  switch (op) {
    case BinOp::Add: return add(a, b, t);
    case BinOp::Sub: return sub(a, b, t);
    case BinOp::Mul: return mul(a, b, t);
    case BinOp::Div: return floordiv(a, b, t);
    case BinOp::Mod: return floormod(a, b, t);
    case BinOp::TruncDiv: return truncdiv(a, b, t);
    case BinOp::TruncMod: return truncmod(a, b, t);
    case BinOp::Min: return less(b, a, t) ? b : a;
    case BinOp::Max: return less(a, b, t) ? b : a;
    case BinOp::EQ: return a == b;
    case BinOp::NE: return a != b;
    case BinOp::LT: return less(a, b, t);
    case BinOp::LE: return !less(b, a, t);
    case BinOp::GT: return less(b, a, t);
    case BinOp::GE: return !less(a, b, t);
    case BinOp::And: return a != 0 && b != 0;
    case BinOp::Or: return a != 0 || b != 0;
  }
  return 0;
}

}  // namespace te::arith
