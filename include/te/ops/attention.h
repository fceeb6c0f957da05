/// \file
/// Scaled dot-product attention as TE computes (header-only): softmax(q kᵀ · scale +
/// bias) v for q (batch, heads, seq_q, dim) and k, v (batch, kv_heads, seq_k, dim), with
/// the softmax over the keys an online softmax (te::online_softmax, one pass: FlashAttention's
/// running maximum and sum), so the scores need never reach memory. The schedules are in
/// te/ops/attention_cpu.h.
///
///   Tensor o = te::ops::attention(q, k, v, {.causal = true});
///   Schedule s = create_schedule({o});
///   te::ops::schedule_attention_cpu(s, o);
///
/// Stages (AttentionStages): `<name>.queries` (q over whole tiles of queries, when
/// AttentionOptions::query_block asks for more queries than seq_q), `<name>.key_t` (k transposed to (batch, kv_heads,
/// dim, seq_k): the CUDA schedule reads a row of keys as a vector), `<name>.scores` (q · k per
/// query and key), per block of `key_block` keys `<name>.block_max`, `<name>.probs`
/// (exp(score - block max)), `<name>.block_sum` and `<name>.block_pv` (probs · v), then
/// `<name>.max` / `<name>.sum` / `<name>.acc` (one row reduction over the blocks, the
/// heart of it: per query the running max and sum, per (query, dim) the rescaled
/// weighted sum of v, each block folded in with te::online_softmax_merge) and the output
/// `<name>` = acc / sum.
/// float16 and bfloat16 inputs are computed in float32 and the output rounded back; their
/// probabilities are rounded to the input type before they weigh v (and are summed), as
/// FlashAttention and PyTorch's flash backend do: tensor cores multiply 16-bit values.
/// A query whose every key is masked (causal, or -inf bias) gives zeros (PyTorch's
/// softmax would give NaN).
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "te/te.h"

namespace te::ops {

/// attention()'s options.
struct AttentionOptions {
  /// The scores' scale; 0: 1 / sqrt(dim).
  double scale = 0;
  /// Query i sees keys j <= i + seq_k - seq_q (the last query sees every key: a decoding
  /// step's queries are the last of the sequence).
  bool causal = false;
  /// Optional additive bias of shape (batch, heads, seq_q, seq_k), any float type, -inf
  /// allowed (a mask); a dimension of extent 1 is broadcast.
  Tensor bias;
  /// Keys per block (FlashAttention's B_c): a block's scores, their max, exps and the
  /// probabilities · v are computed together (vectorized, or on tensor cores), then folded
  /// into each query's running state once per block. Part of the definition: the
  /// rounding of the sums follows it.
  int key_block = 64;
  /// Queries per tile of a schedule that computes whole tiles (the CUDA schedule: 16 per
  /// warp): the stages before the output run over seq_q rounded up to a multiple of it,
  /// the extra queries reading zeros (`<name>.queries`); 1: no extra queries.
  int query_block = 1;
  /// The stages' name prefix.
  std::string name = "attention";
};

/// attention()'s tensors, as handles for its schedules.
struct AttentionStages {
  Tensor q;          ///< the queries (an input)
  Tensor k;          ///< the keys (an input)
  Tensor v;          ///< the values (an input)
  Tensor bias;       ///< the bias, if any
  Tensor queries;    ///< q over seq_q rounded up to query_block, zeros after (`<name>.queries`; undefined: none needed)
  Tensor key_t;      ///< k as (batch, kv_heads, dim, seq_k) (stage `<name>.key_t`)
  Tensor scores;     ///< q · k per (batch, head, query, key), unscaled (`<name>.scores`)
  Tensor block_max;  ///< per (query, block of keys): the largest score (`<name>.block_max`)
  Tensor probs;      ///< per (query, key): exp(score - its block's max), in q's type (`<name>.probs`)
  Tensor block_sum;  ///< per (query, block): the sum of probs (`<name>.block_sum`)
  Tensor block_pv;   ///< per (query, block, dim): probs · v over the block (`<name>.block_pv`)
  Tensor max;        ///< per query: the largest score (`<name>.max`, one stage with sum and acc)
  Tensor sum;        ///< per query: the sum of exp(score - max) (`<name>.sum`)
  Tensor acc;        ///< per (query, dim): the sum of exp(score - max) · v (`<name>.acc`)
  Tensor out;        ///< the output, what attention() returns
  IterVar block;     ///< the reduction axis over the blocks of keys (of max/sum/acc's stage)
  int key_block = 0;  ///< keys per block
};

namespace attention_detail {

inline Expr as_float(const Expr& e) { return e.dtype() == Float(32) ? e : cast(Float(32), e); }

inline std::string dims(const Tensor& t) {
  std::string out = "(";
  for (size_t d = 0; d < t.shape().size(); ++d) out += (d ? ", " : "") + to_string(t.shape()[d]);
  return out + ")";
}

inline void check_inputs(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& o) {
  const std::string op = "attention: ";
  const Tensor* in[] = {&q, &k, &v};
  const char* names[] = {"q", "k", "v"};
  for (int i = 0; i < 3; ++i) {
    const Tensor& t = *in[i];
    const std::string name = names[i];
    if (!t.defined()) throw Error(op + name + " is undefined");
    if (t.ndim() != 4)
      throw Error(op + name + " must be (batch, heads, seq, dim), got " + std::to_string(t.ndim()) + " axes");
    const DataType d = t.dtype();
    if (!(d == Float(32) || d == Float(16) || d == BFloat(16)))
      throw Error(op + name + " must be float32, float16 or bfloat16, got " + d.to_string());
    if (d != q.dtype())
      throw Error(op + name + " is " + d.to_string() + " but q is " + q.dtype().to_string() +
                  ": give all three one type");
  }
  auto same = [](const Expr& a, const Expr& b) { return can_prove(a == b); };
  if (!same(q.shape()[0], k.shape()[0]) || !same(k.shape()[0], v.shape()[0]))
    throw Error(op + "q " + dims(q) + ", k " + dims(k) + " and v " + dims(v) + " differ in batch");
  if (!same(k.shape()[1], v.shape()[1]) || !same(k.shape()[2], v.shape()[2]))
    throw Error(op + "k " + dims(k) + " and v " + dims(v) + " differ in heads or length");
  if (!same(q.shape()[3], k.shape()[3])) throw Error(op + "q " + dims(q) + " and k " + dims(k) + " differ in dim");
  const int64_t* h = as_const_int(q.shape()[1]);
  const int64_t* hk = as_const_int(k.shape()[1]);
  if (!same(q.shape()[1], k.shape()[1]) && !(h && hk && *hk > 0 && *h % *hk == 0))
    throw Error(op + "k and v's " + to_string(k.shape()[1]) + " heads must divide q's " + to_string(q.shape()[1]) +
                " (grouped-query attention)");
  if (o.bias.defined()) {
    const Tensor& b = o.bias;
    if (b.ndim() != 4 || !b.dtype().is_float())
      throw Error(op + "the bias must be a float (batch, heads, seq_q, seq_k) tensor, got " + b.dtype().to_string() +
                  " " + dims(b));
    const Expr want[] = {q.shape()[0], q.shape()[1], q.shape()[2], k.shape()[2]};
    for (int d = 0; d < 4; ++d)
      if (!is_const_int(b.shape()[static_cast<size_t>(d)], 1) && !same(b.shape()[static_cast<size_t>(d)], want[d]))
        throw Error(op + "the bias " + dims(b) + " does not match (batch, heads, seq_q, seq_k) = (" +
                    to_string(want[0]) + ", " + to_string(want[1]) + ", " + to_string(want[2]) + ", " +
                    to_string(want[3]) + ") in dimension " + std::to_string(d) + " (an extent of 1 broadcasts)");
  }
}

// The scores' scale: the option's, or 1 / sqrt(dim) (a constant when dim is).
inline Expr scale_of(const Tensor& q, const AttentionOptions& o) {
  const Expr dim = q.shape()[3];
  if (o.scale != 0) return make_const(Float(32), o.scale);
  if (const int64_t* d = as_const_int(dim)) return make_const(Float(32), 1.0 / std::sqrt(static_cast<double>(*d)));
  return make_const(Float(32), 1.0) / sqrt(cast(Float(32), dim));
}

// exp(score - m) for a score of a row whose max is m, 0 where the whole row is masked
// (m = -inf, so every score is -inf). The guard is on m, not on each probability: one
// select per row that the code generators hoist, instead of a branch per element
// around the exp (nvcc made one of select(m == -inf, 0, exp(..)) per element).
inline Expr exp_from_max(const Expr& score, const Expr& m) {
  return exp(score - select(m == min_value(Float(32)), make_zero(Float(32)), m));
}

// The score of query i and key j from q · k (raw): scaled, biased (a bias dimension of
// extent 1 broadcast), -inf where the causal mask hides j.
inline Expr masked_score(const Expr& raw, const std::vector<Expr>& at, const Tensor& q, const Tensor& k,
                         const AttentionOptions& o) {
  Expr x = raw * scale_of(q, o);
  if (o.bias.defined()) {
    std::vector<Expr> idx = at;
    // (An extra query of a tile reads the last query's bias.)
    if (o.query_block > 1) idx[2] = min(idx[2], q.shape()[2] - 1);
    for (size_t d = 0; d < 4; ++d)
      if (is_const_int(o.bias.shape()[d], 1)) idx[d] = make_zero(idx[d].dtype());
    x = x + as_float(o.bias(idx));
  }
  if (!o.causal) return x;
  // likely(): lower()'s loop partitioning drops the mask from the blocks of keys that lie
  // wholly below the diagonal (all but the last block or two a tile of queries visits).
  return select(likely(at[3] <= at[2] + (k.shape()[2] - q.shape()[2])), x, min_value(Float(32)));
}

// Whether t is attention()'s `<name>.queries`: if_then_else(i < seq_q, q(b, h, i, c), 0).
inline bool is_query_padding(const Tensor& t) {
  if (t.is_placeholder() || t.op()->kind != OpKind::Compute || t.op()->inputs.size() != 1 || t.ndim() != 4)
    return false;
  const auto* call = t.op()->body.as<CallNode>();
  return call && call->op == Intrinsic::IfThenElse && call->args.size() == 3 && call->args[1].as<TensorReadNode>();
}

}  // namespace attention_detail

/// attention() with every stage it makes: `attention(q, k, v, o)` is
/// `attention_stages(q, k, v, o).out`.
inline AttentionStages attention_stages(const Tensor& q, const Tensor& k, const Tensor& v,
                                        const AttentionOptions& o = {}) {
  using attention_detail::as_float;
  attention_detail::check_inputs(q, k, v, o);
  if (o.key_block < 1) throw Error("attention: key_block must be at least 1, got " + std::to_string(o.key_block));
  if (o.query_block < 1) throw Error("attention: query_block must be at least 1, got " + std::to_string(o.query_block));
  const Expr batch = q.shape()[0], heads = q.shape()[1], seq_q = q.shape()[2], dim = q.shape()[3];
  const Expr qb = make_const(seq_q.dtype(), o.query_block);
  const Expr seq_q_tiles = o.query_block == 1 ? seq_q : simplify((seq_q + qb - 1) / qb * qb);
  const Expr kv_heads = k.shape()[1], seq_k = k.shape()[2], dim_v = v.shape()[3];
  const Expr group = can_prove(heads == kv_heads) ? Expr() : heads / kv_heads;  // q heads per k/v head
  auto kv_head = [&](const Expr& h) { return group.defined() ? h / group : h; };
  const Expr kb = make_const(seq_k.dtype(), o.key_block);
  const Expr blocks = simplify((seq_k + kb - 1) / kb);

  AttentionStages st;
  st.q = q;
  st.k = k;
  st.v = v;
  st.bias = o.bias;
  st.key_block = o.key_block;
  const bool padded = !can_prove(seq_q_tiles == seq_q);
  if (padded)
    st.queries = compute(
        {batch, heads, seq_q_tiles, dim},
        [&](Expr b, Expr h, Expr i, Expr c) { return if_then_else(i < seq_q, q(b, h, i, c), make_zero(q.dtype())); },
        o.name + ".queries", {"b", "h", "i", "c"});
  const Tensor& queries = padded ? st.queries : q;
  st.key_t = compute({batch, kv_heads, dim, seq_k}, [&](Expr b, Expr h, Expr c, Expr j) { return k(b, h, j, c); },
                     o.name + ".key_t", {"b", "h", "c", "j"});
  IterVar c = reduce_axis({make_zero(dim.dtype()), dim}, "c");
  st.scores = compute({batch, heads, seq_q_tiles, seq_k},
                      [&](Expr b, Expr h, Expr i, Expr j) {
                        return sum(as_float(queries(b, h, i, c)) * as_float(st.key_t(b, kv_head(h), c, j)), {c});
                      },
                      o.name + ".scores", {"b", "h", "i", "j"});
  auto score = [&](const Expr& b, const Expr& h, const Expr& i, const Expr& j) {
    return attention_detail::masked_score(st.scores(b, h, i, j), {b, h, i, j}, q, k, o);
  };
  // Key jj of block jb, where it exists (the last block may be partial; none is when
  // key_block divides seq_k, and then no condition is needed: tensor cores take whole tiles).
  const bool whole_blocks = can_prove(seq_k % kb == 0);
  auto in_block = [&](const Expr& jb, const IterVar& jj) { return whole_blocks ? Expr() : jb * kb + jj < seq_k; };
  IterVar jj1 = reduce_axis({make_zero(seq_k.dtype()), kb}, "jj");
  st.block_max = compute(
      {batch, heads, seq_q_tiles, blocks},
      [&](Expr b, Expr h, Expr i, Expr jb) { return max(score(b, h, i, jb * kb + jj1), {jj1}, in_block(jb, jj1)); },
      o.name + ".block_max", {"b", "h", "i", "jb"});
  st.probs = compute({batch, heads, seq_q_tiles, seq_k},
                     [&](Expr b, Expr h, Expr i, Expr j) {
                       Expr m = st.block_max(b, h, i, j / kb);
                       Expr p = attention_detail::exp_from_max(score(b, h, i, j), m);
                       return q.dtype() == Float(32) ? p : cast(q.dtype(), p);
                     },
                     o.name + ".probs", {"b", "h", "i", "j"});
  IterVar jj2 = reduce_axis({make_zero(seq_k.dtype()), kb}, "jj");
  st.block_sum = compute({batch, heads, seq_q_tiles, blocks},
                         [&](Expr b, Expr h, Expr i, Expr jb) {
                           return sum(as_float(st.probs(b, h, i, jb * kb + jj2)), {jj2}, in_block(jb, jj2));
                         },
                         o.name + ".block_sum", {"b", "h", "i", "jb"});
  IterVar jj3 = reduce_axis({make_zero(seq_k.dtype()), kb}, "jj");
  st.block_pv =
      compute({batch, heads, seq_q_tiles, blocks, dim_v},
              [&](Expr b, Expr h, Expr i, Expr jb, Expr e) {
                Expr j = jb * kb + jj3;
                return sum(as_float(st.probs(b, h, i, j)) * as_float(v(b, kv_head(h), j, e)), {jj3}, in_block(jb, jj3));
              },
              o.name + ".block_pv", {"b", "h", "i", "jb", "e"});
  std::vector<Tensor> rows = compute_rows(
      {batch, heads, seq_q_tiles}, {dim_v},
      [&](const std::vector<Var>& r, const std::vector<Var>& e) {
        const Expr &b = r[0], &h = r[1], &i = r[2];
        // Causal: query i's last key is i + seq_k - seq_q; the blocks after its
        // block are not visited. With tiles of queries (query_block > 1) a tile's
        // queries visit the blocks its last query needs: one count of blocks per
        // tile (its warps then meet at the same barriers), the extra blocks all
        // masked for the earlier queries (their merges change nothing).
        // (One tile of queries, as in decoding: the same blocks for every query.)
        const bool one_tile = o.query_block > 1 && can_prove(seq_q_tiles == qb);
        const Expr last = o.query_block == 1 ? Expr(i) : one_tile ? qb - 1 : i / qb * qb + (qb - 1);
        const Expr needed =
            o.causal ? simplify(max(make_zero(blocks.dtype()), min(blocks, (last + (seq_k - seq_q)) / kb + 1)))
                     : blocks;
        st.block = reduce_axis({make_zero(blocks.dtype()), needed}, "jb");
        const IterVar& jb = st.block;
        return online_softmax_merge(st.block_max(b, h, i, jb), st.block_sum(b, h, i, jb),
                                    {st.block_pv(b, h, i, jb, e[0])}, {jb});
      },
      {o.name + ".max", o.name + ".sum", o.name + ".acc"}, {"b", "h", "i", "e"});
  st.max = rows[0];
  st.sum = rows[1];
  st.acc = rows[2];
  st.out = compute({batch, heads, seq_q, dim_v},
                   [&](Expr b, Expr h, Expr i, Expr e) {
                     Expr total = st.sum(b, h, i);
                     Expr y = select(total > 0.0f, st.acc(b, h, i, e) / total, make_zero(Float(32)));
                     return q.dtype() == Float(32) ? y : cast(q.dtype(), y);
                   },
                   o.name, {"b", "h", "i", "e"});
  return st;
}

/// Scaled dot-product attention (see the file's comment): (batch, heads, seq_q, dim_v).
inline Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& o = {}) {
  return attention_stages(q, k, v, o).out;
}

/// The stages of an output of attention(), found through the graph (never by name).
inline AttentionStages attention_stages_of(const Tensor& out) {
  const Error not_attention("attention_stages_of: tensor '" + (out.defined() ? out.name() : std::string("?")) +
                            "' is not an output of te::ops::attention");
  auto input = [&](const Operation& op, size_t i) {
    if (i >= op->inputs.size()) throw not_attention;
    return op->inputs[i];
  };
  if (!out.defined() || out.is_placeholder() || out.op()->inputs.size() != 1) throw not_attention;
  // out reads the rows (max, sum, acc), which read block_max, block_sum and block_pv;
  // block_pv reads probs and v; block_max reads the scores (and the bias); the scores
  // read the queries (q, padded) and key_t, which reads k.
  const Operation rows = input(out.op(), 0);
  if (!rows->is_row_reduction() || rows->num_outputs() != 3 || rows->inputs.size() != 3) throw not_attention;
  AttentionStages st;
  st.out = out;
  st.max = Tensor(rows, 0);
  st.sum = Tensor(rows, 1);
  st.acc = Tensor(rows, 2);
  st.block = rows->reduce_axis[0];
  st.block_max = Tensor(input(rows, 0));
  st.block_sum = Tensor(input(rows, 1));
  st.block_pv = Tensor(input(rows, 2));
  st.probs = Tensor(input(st.block_pv.op(), 0));
  st.v = Tensor(input(st.block_pv.op(), 1));
  st.scores = Tensor(input(st.block_max.op(), 0));
  if (st.block_max.op()->inputs.size() == 2) st.bias = Tensor(input(st.block_max.op(), 1));
  st.q = Tensor(input(st.scores.op(), 0));
  if (attention_detail::is_query_padding(st.q)) {
    st.queries = st.q;
    st.q = Tensor(input(st.queries.op(), 0));
  }
  st.key_t = Tensor(input(st.scores.op(), 1));
  st.k = Tensor(input(st.key_t.op(), 0));
  const auto* jj =
      st.block_sum.op()->reduce_axis.empty() ? nullptr : as_const_int(st.block_sum.op()->reduce_axis[0].dom().extent);
  if (!jj || st.scores.op()->reduce_axis.size() != 1) throw not_attention;
  st.key_block = static_cast<int>(*jj);
  return st;
}

}  // namespace te::ops
