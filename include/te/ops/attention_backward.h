/// \file
/// The gradients of te::ops::attention (header-only TE computes): dq, dk, dv (and dbias
/// when a bias is given) from q, k, v and the output's gradient dout, the probabilities
/// recomputed from q and k (as FlashAttention's backward recomputes them rather than
/// storing them):
///
///   P = softmax(q kᵀ · scale + bias)      (masked keys 0; a query with no key: all 0)
///   dv = Pᵀ dout                          (summed over the query heads sharing a k/v head)
///   dP = dout vᵀ,  dS = P ∘ (dP − rowsum(P ∘ dP))
///   dq = dS k · scale,  dk = dSᵀ q · scale,  dbias = dS (summed where the bias broadcasts)
///
/// A query that sees no key (its output defined as zeros) has zero gradients; PyTorch's
/// are NaN there. te::gradient does not differentiate the row reduction of the forward;
/// these are its closed forms.
#pragma once
#include <string>
#include <vector>

#include "te/ops/attention.h"

namespace te::ops {

/// attention_backward()'s results.
struct AttentionBackward {
  Tensor dq;     ///< (batch, heads, seq_q, dim), q's type
  Tensor dk;     ///< (batch, kv_heads, seq_k, dim), k's type
  Tensor dv;     ///< (batch, kv_heads, seq_k, dim_v), v's type
  Tensor dbias;  ///< the bias's shape, float32 (summed over its broadcast dimensions), when given
  Tensor probs;  ///< the recomputed probabilities (batch, heads, seq_q, seq_k), float32
};

/// The gradients of attention(q, k, v, o) given dout (the output's shape and type).
inline AttentionBackward attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& dout,
                                            const AttentionOptions& o = {}) {
  using attention_detail::as_float;
  attention_detail::check_inputs(q, k, v, o);
  const Expr batch = q.shape()[0], heads = q.shape()[1], seq_q = q.shape()[2], dim = q.shape()[3];
  const Expr kv_heads = k.shape()[1], seq_k = k.shape()[2], dim_v = v.shape()[3];
  if (!dout.defined() || dout.ndim() != 4 || dout.dtype() != q.dtype())
    throw Error("attention_backward: dout must be the output's shape (batch, heads, seq_q, dim_v) and type " +
                q.dtype().to_string() + ", got " + (dout.defined() ? attention_detail::dims(dout) : "undefined"));
  const Expr want[] = {batch, heads, seq_q, dim_v};
  for (size_t d = 0; d < 4; ++d)
    if (!can_prove(dout.shape()[d] == want[d]))
      throw Error("attention_backward: dout " + attention_detail::dims(dout) + " is not the output's shape (" +
                  to_string(batch) + ", " + to_string(heads) + ", " + to_string(seq_q) + ", " + to_string(dim_v) + ")");
  const bool grouped = !can_prove(heads == kv_heads);
  const Expr group = grouped ? heads / kv_heads : Expr(make_const(heads.dtype(), 1));
  auto kv_head = [&](const Expr& h) { return grouped ? h / group : h; };
  const Expr scale = attention_detail::scale_of(q, o);
  const std::string name = o.name + "_backward";

  // The forward's probabilities, recomputed.
  IterVar c = reduce_axis({make_zero(dim.dtype()), dim}, "c");
  Tensor score = compute(
      {batch, heads, seq_q, seq_k},
      [&](Expr b, Expr h, Expr i, Expr j) {
        return sum(as_float(q(b, h, i, c)) * as_float(k(b, kv_head(h), j, c)), {c});
      },
      name + ".scores");
  auto masked = [&](const Expr& b, const Expr& h, const Expr& i, const Expr& j) {
    return attention_detail::masked_score(score(b, h, i, j), {b, h, i, j}, q, k, o);
  };
  IterVar j1 = reduce_axis({make_zero(seq_k.dtype()), seq_k}, "j");
  Tensor row_max = compute(
      {batch, heads, seq_q}, [&](Expr b, Expr h, Expr i) { return max(masked(b, h, i, j1), {j1}); }, name + ".max");
  auto unnormalized = [&](const Expr& b, const Expr& h, const Expr& i, const Expr& j) {
    Expr m = row_max(b, h, i);
    return attention_detail::exp_from_max(masked(b, h, i, j), m);
  };
  IterVar j2 = reduce_axis({make_zero(seq_k.dtype()), seq_k}, "j");
  Tensor row_sum = compute(
      {batch, heads, seq_q}, [&](Expr b, Expr h, Expr i) { return sum(unnormalized(b, h, i, j2), {j2}); },
      name + ".sum");
  AttentionBackward g;
  g.probs = compute(
      {batch, heads, seq_q, seq_k},
      [&](Expr b, Expr h, Expr i, Expr j) {
        Expr total = row_sum(b, h, i);
        return select(total > 0.0f, unnormalized(b, h, i, j) / total, make_zero(Float(32)));
      },
      name + ".probs");
  const Tensor& P = g.probs;

  // dP = dout vᵀ, the softmax's backward, then the two products with q and k.
  IterVar e1 = reduce_axis({make_zero(dim_v.dtype()), dim_v}, "e");
  Tensor dP = compute(
      {batch, heads, seq_q, seq_k},
      [&](Expr b, Expr h, Expr i, Expr j) {
        return sum(as_float(dout(b, h, i, e1)) * as_float(v(b, kv_head(h), j, e1)), {e1});
      },
      name + ".dprobs");
  IterVar j3 = reduce_axis({make_zero(seq_k.dtype()), seq_k}, "j");
  Tensor dot = compute(
      {batch, heads, seq_q}, [&](Expr b, Expr h, Expr i) { return sum(P(b, h, i, j3) * dP(b, h, i, j3), {j3}); },
      name + ".dot");
  Tensor dS = compute(
      {batch, heads, seq_q, seq_k},
      [&](Expr b, Expr h, Expr i, Expr j) { return P(b, h, i, j) * (dP(b, h, i, j) - dot(b, h, i)); },
      name + ".dscores");
  // A gradient summed in float32, rounded to its input's type by a stage of its own.
  auto in_type = [&](const Tensor& f32, DataType t, const std::string& n) {
    if (t == Float(32)) return f32;
    return compute(
        f32.shape(), [&](const std::vector<Var>& at) { return cast(t, f32(std::vector<Expr>(at.begin(), at.end()))); },
        n);
  };
  const bool f32 = q.dtype() == Float(32);
  IterVar j4 = reduce_axis({make_zero(seq_k.dtype()), seq_k}, "j");
  g.dq = in_type(compute(
                     {batch, heads, seq_q, dim},
                     [&](Expr b, Expr h, Expr i, Expr cc) {
                       return sum(dS(b, h, i, j4) * as_float(k(b, kv_head(h), j4, cc)) * scale, {j4});
                     },
                     name + (f32 ? ".dq" : ".dq_f32")),
                 q.dtype(), name + ".dq");
  // dk and dv sum over the query heads of the group and their queries.
  IterVar hg1 = reduce_axis({make_zero(heads.dtype()), group}, "g"),
          i1 = reduce_axis({make_zero(seq_q.dtype()), seq_q}, "i");
  g.dk = in_type(compute(
                     {batch, kv_heads, seq_k, dim},
                     [&](Expr b, Expr hk, Expr j, Expr cc) {
                       Expr h = hk * group + hg1;
                       return sum(dS(b, h, i1, j) * as_float(q(b, h, i1, cc)) * scale, {hg1, i1});
                     },
                     name + (f32 ? ".dk" : ".dk_f32")),
                 k.dtype(), name + ".dk");
  IterVar hg2 = reduce_axis({make_zero(heads.dtype()), group}, "g"),
          i2 = reduce_axis({make_zero(seq_q.dtype()), seq_q}, "i");
  g.dv = in_type(compute(
                     {batch, kv_heads, seq_k, dim_v},
                     [&](Expr b, Expr hk, Expr j, Expr e) {
                       Expr h = hk * group + hg2;
                       return sum(P(b, h, i2, j) * as_float(dout(b, h, i2, e)), {hg2, i2});
                     },
                     name + (f32 ? ".dv" : ".dv_f32")),
                 v.dtype(), name + ".dv");
  if (o.bias.defined()) {
    // dS summed over the dimensions the bias broadcasts (extent 1 where the scores' is not).
    const Expr full[] = {batch, heads, seq_q, seq_k};
    std::vector<IterVar> over;
    std::vector<int> broadcast;
    for (int d = 0; d < 4; ++d)
      if (is_const_int(o.bias.shape()[static_cast<size_t>(d)], 1) && !is_const_int(full[d], 1)) {
        over.push_back(reduce_axis({make_zero(full[d].dtype()), full[d]}, "r" + std::to_string(d)));
        broadcast.push_back(d);
      }
    g.dbias = over.empty() ? dS
                           : compute(
                                 o.bias.shape(),
                                 [&](const std::vector<Var>& at) {
                                   std::vector<Expr> idx(at.begin(), at.end());
                                   for (size_t r = 0; r < over.size(); ++r)
                                     idx[static_cast<size_t>(broadcast[r])] = over[r].var();
                                   return sum(dS(idx), over);
                                 },
                                 name + ".dbias");
  }
  return g;
}

}  // namespace te::ops
