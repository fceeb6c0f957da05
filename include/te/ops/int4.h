/// \file
/// int4 weights: unpacking with shifts and masks, and dequantization with per-group scales
/// and zero points, as TE computes or as an expression to fuse into a consumer (header-only).
///
///   Tensor P = placeholder({n, k / 2}, UInt(8), "P");    // two int4 per byte
///   Tensor S = placeholder({n, k / 32}, Float(32), "S"); // a scale per group of 32
///   Tensor Z = placeholder({n, k / 32}, Int(8), "Z");    // a zero point per group
///   Tensor W = te::ops::dequantize_int4(P, S, Z, 32);    // (n, k) float32: (q - z) * s
///
/// Packing, along the last axis, low nibble first:
///   uint8 or int8 (..., k/2):  element e is in byte e/2, bits 4(e%2) .. 4(e%2)+3;
///   int32 (..., k/8):          element e is in word e/8, bits 4(e%8) .. 4(e%8)+3.
/// Signed values (the default) are 4-bit two's complement, [-8, 7]: the nibble is shifted
/// to the top of an int32 and arithmetically shifted back, (w << (28 - 4j)) >> 28, so the
/// sign bit fills; unsigned values are (w >> 4j) & 15, [0, 15] (GPTQ / AWQ style, usually
/// with zero points near 8). Dequantization: (q - zero) in int32, exact, converted to the
/// scales' float type and multiplied by the scale: one rounding, so every backend and
/// PyTorch's `(q - zero).float() * scale` agree bit for bit.
#pragma once
#include <string>
#include <vector>

#include "te/te.h"

namespace te::ops {

/// The options of unpack_int4() and dequantize_int4().
struct Int4Options {
  bool signed_values = true;  ///< true: two's complement [-8, 7]; false: [0, 15]
  std::string name;           ///< the output's name (empty: "unpack_int4" / "dequantize_int4")
};

namespace detail {

// Values per element of the packed type; te::Error for an unsupported type or a 0-d tensor.
inline int int4_per_element(const Tensor& packed, const char* op) {
  if (!packed.defined()) throw Error(std::string(op) + ": the packed tensor is undefined");
  if (packed.ndim() < 1) throw Error(std::string(op) + ": the packed tensor needs at least one axis");
  const DataType t = packed.dtype();
  if (t == UInt(8) || t == Int(8)) return 2;
  if (t == Int(32)) return 8;
  throw Error(std::string(op) + ": packed int4 must be uint8 or int8 (two per byte) or int32 (eight per word), got " +
              t.to_string());
}

inline std::vector<Expr> int4_unpacked_shape(const Tensor& packed, int per) {
  std::vector<Expr> shape = packed.shape();
  shape.back() = shape.back() * per;
  return shape;
}

}  // namespace detail

/// The int4 value (an int32 expression) at logical index `index` (the last index counts
/// int4 elements) of `packed` (uint8, int8 or int32; see the top of this file).
inline Expr int4_at(const Tensor& packed, std::vector<Expr> index, bool signed_values = true) {
  const int per = detail::int4_per_element(packed, "int4_at");
  if (static_cast<int>(index.size()) != packed.ndim())
    throw Error("int4_at: " + std::to_string(index.size()) + " indices for a tensor of " +
                std::to_string(packed.ndim()) + " axes");
  const Expr e = index.back();
  index.back() = e / per;
  const Expr word = cast(Int(32), packed(index));  // int8 sign-extends, uint8 zero-extends: the low 8 bits are kept
  // In [0, 28] (plain machine shifts), and int32 whatever the index type: an int64 amount
  // would widen the shift to 64 bits, where << 28 no longer pushes bits out.
  const Expr shift = cast(Int(32), 4 * (e % per));
  if (signed_values) return (word << (28 - shift)) >> 28;
  return (word >> shift) & 15;
}

/// The int4 values of `packed` as int8, shape (..., k) for packed (..., k/2) or (..., k/8);
/// named o.name or "unpack_int4". te::Error for another packed type.
inline Tensor unpack_int4(const Tensor& packed, const Int4Options& o = {}) {
  const int per = detail::int4_per_element(packed, "unpack_int4");
  return compute(
      detail::int4_unpacked_shape(packed, per),
      [&](const std::vector<Var>& v) {
        return cast(Int(8), int4_at(packed, std::vector<Expr>(v.begin(), v.end()), o.signed_values));
      },
      o.name.empty() ? "unpack_int4" : o.name);
}

/// (q - zero) * scale for every int4 value q of `packed`, with the scale and zero point of
/// its group of `group_size` consecutive elements along the last axis: scales (..., k /
/// group_size) float, zeros the same shape, any integer type, or undefined (no zero
/// point). The result has the scales' dtype (float16 and bfloat16 compute in float32 and
/// round once)
/// and shape (..., k). te::Error for a bad packed type, group size, rank or dtype, or
/// constant extents that do not match.
inline Tensor dequantize_int4(const Tensor& packed, const Tensor& scales, const Tensor& zeros, int group_size,
                              const Int4Options& o = {}) {
  const char* op = "dequantize_int4";
  const int per = detail::int4_per_element(packed, op);
  if (group_size <= 0) throw Error("dequantize_int4: group_size must be > 0, got " + std::to_string(group_size));
  if (!scales.defined() || !scales.dtype().is_float())
    throw Error("dequantize_int4: scales must be a float tensor" +
                (scales.defined() ? ", got " + scales.dtype().to_string() : std::string(", got an undefined one")));
  if (zeros.defined() && !zeros.dtype().is_integer())
    throw Error("dequantize_int4: zeros must be integers (or undefined), got " + zeros.dtype().to_string());
  const std::vector<Expr> shape = detail::int4_unpacked_shape(packed, per);
  if (const int64_t* k = as_const_int(simplify(shape.back())); k && *k % group_size != 0)
    throw Error("dequantize_int4: " + std::to_string(*k) + " values per row are not a whole number of groups of " +
                std::to_string(group_size));
  for (const Tensor* g : {&scales, &zeros}) {
    if (!g->defined()) continue;
    if (g->ndim() != packed.ndim())
      throw Error("dequantize_int4: " + g->name() + " has " + std::to_string(g->ndim()) + " axes, packed has " +
                  std::to_string(packed.ndim()));
    for (int d = 0; d < packed.ndim(); ++d) {
      const Expr want = d + 1 == packed.ndim() ? shape.back() / group_size : shape[static_cast<size_t>(d)];
      const int64_t* a = as_const_int(simplify(want));
      const int64_t* b = as_const_int(g->shape()[static_cast<size_t>(d)]);
      if (a && b && *a != *b)
        throw Error("dequantize_int4: " + g->name() + " has extent " + std::to_string(*b) + " on axis " +
                    std::to_string(d) + ", expected " + std::to_string(*a) + " (group_size " +
                    std::to_string(group_size) + ")");
    }
  }
  const DataType out = scales.dtype(), t = out.bits() == 16 ? Float(32) : out;
  return compute(
      shape,
      [&](const std::vector<Var>& v) {
        std::vector<Expr> idx(v.begin(), v.end()), group = idx;
        group.back() = idx.back() / group_size;
        Expr q = int4_at(packed, idx, o.signed_values);
        if (zeros.defined()) q = q - cast(Int(32), zeros(group));
        const Expr scale = scales.dtype() == t ? scales(group) : cast(t, scales(group));
        const Expr w = cast(t, q) * scale;
        return out == t ? w : cast(out, w);
      },
      o.name.empty() ? "dequantize_int4" : o.name);
}

}  // namespace te::ops
