/// \file
/// Rotary position embedding (RoPE) as a TE compute, in the rotate_half form of GPT-NeoX
/// and Hugging Face's LLaMA (header-only).
///
///   Tensor q = placeholder({seq, heads, 64}, Float(32), "q");
///   Tensor r = te::ops::rotary_embedding(q);             // positions 0 .. seq-1 on axis 0
///
/// With D the last axis' extent (the rotary dimension, even) and p the position of the
/// element (its index on `position_axis` plus `position_offset`):
///   theta_i = 1 / base^(2i / D)            for i in [0, D/2)
///   angle_d = p * theta_(d mod D/2)
///   out_d   = x_d * cos(angle_d) + rotate_half(x)_d * sin(angle_d)
///   rotate_half(x)_d = -x_(d + D/2) for d < D/2, x_(d - D/2) otherwise
/// The angles are computed in the kernel from the position (nothing is read but x), in the
/// same order of operations as the Python reference (theta in the compute type, one
/// rounded product p * theta), so float32 results agree with PyTorch's to a few ulp of the
/// sines and cosines; with large positions the angle itself is only as exact as float32
/// (an ulp of 8191 is 2^-11), in te and in PyTorch alike. float16 and bfloat16 are computed
/// in float32 and rounded once; float64 computes in float64. The interleaved (GPT-J) pairing is not
/// this one.
#pragma once
#include <string>
#include <vector>

#include "te/te.h"

namespace te::ops {

/// The options of rotary_embedding().
struct RotaryOptions {
  double base = 10000.0;        ///< theta_i = base^(-2i / D)
  int position_axis = 0;        ///< the axis of x that indexes positions (2 for (batch, heads, seq, D))
  Expr position_offset;         ///< the position of index 0 on that axis (undefined: 0), e.g. a Var
  std::string name = "rotary";  ///< the output's name
};

/// RoPE of x (any rank >= 2, float) over its last axis; see the top of this file. The
/// result has x's shape and dtype. te::Error for a non-float x, a position axis out of
/// range or equal to the last, an odd constant last extent, a non-integer offset or a
/// base <= 0.
inline Tensor rotary_embedding(const Tensor& x, const RotaryOptions& o = {}) {
  if (!x.defined()) throw Error("rotary_embedding: the input tensor is undefined");
  if (!x.dtype().is_float())
    throw Error("rotary_embedding: the input must be float16, bfloat16, float32 or float64, got " +
                x.dtype().to_string());
  const int nd = x.ndim();
  if (nd < 2) throw Error("rotary_embedding: the input needs a position axis and a last (rotary) axis, got 1 axis");
  if (o.position_axis < 0 || o.position_axis >= nd - 1)
    throw Error("rotary_embedding: position_axis " + std::to_string(o.position_axis) + " must be in [0, " +
                std::to_string(nd - 1) + ") (not the last axis, which is rotated)");
  if (!(o.base > 0)) throw Error("rotary_embedding: base must be > 0, got " + std::to_string(o.base));
  if (o.position_offset.defined() && !o.position_offset.dtype().is_integer())
    throw Error("rotary_embedding: position_offset must be an integer, got " + o.position_offset.dtype().to_string());
  const Expr dim = x.shape().back();
  if (const int64_t* d = as_const_int(dim); d && *d % 2 != 0)
    throw Error("rotary_embedding: the last axis must have an even extent, got " + std::to_string(*d));
  const DataType t = x.dtype().bits() == 16 ? Float(32) : x.dtype();
  return compute(
      x.shape(),
      [&](const std::vector<Var>& v) {
        std::vector<Expr> idx(v.begin(), v.end());
        const Expr d = v.back(), half = dim / 2;
        // The partner element, always in bounds so that both select() arms may be loaded.
        std::vector<Expr> partner = idx;
        partner.back() = (d + half) % dim;
        auto value = [&](const std::vector<Expr>& at) { return x.dtype() == t ? x(at) : cast(t, x(at)); };
        const Expr xv = value(idx), xp = value(partner);
        const Expr rotated = select(d < half, -xp, xp);
        Expr position = v[static_cast<size_t>(o.position_axis)];
        if (o.position_offset.defined()) position = position + cast(position.dtype(), o.position_offset);
        const Expr theta = make_const(t, 1.0) / pow(make_const(t, o.base), cast(t, 2 * (d % half)) / cast(t, dim));
        const Expr angle = cast(t, position) * theta;
        const Expr y = xv * cos(angle) + rotated * sin(angle);
        return x.dtype() == t ? y : cast(x.dtype(), y);
      },
      o.name);
}

}  // namespace te::ops
