/// \file
/// The CPU schedule of te::ops::attention (header-only): FlashAttention's structure on a
/// CPU. Blocks of queries are the parallel work items; each runs over the keys a block at
/// a time: the block's scores (a register-tiled product, laid out key by key with the
/// queries in vector lanes, from a transposed copy of the block's queries and k's
/// elements broadcast), their max per query, their exps and their sum (vector operations
/// across queries) and probs · v (vectors of dim) are computed into small buffers, then
/// each query's online-softmax step runs once per block (its max, sum and two rescale
/// factors in scalars) and rescales the query's accumulator row (a few vectors over dim).
/// Neither the scores nor the probabilities reach memory beyond the block. Decoding (fewer
/// queries per key than a register tile's rows) takes each score as a dot product along
/// dim instead.
#pragma once
#include <algorithm>
#include <string>

#include "te/ops/attention.h"

namespace te::ops {

/// schedule_attention_cpu()'s knobs (0: the default).
struct AttentionCpuOptions {
  /// Queries per work item (0: 32), halved until seq_q holds it: they share each block of
  /// keys while it is in the L1 cache. A block that does not divide seq_q overlaps the
  /// one before it (TailStrategy::ShiftInwards).
  int query_block = 0;
  /// The vector register's width in bytes (64: AVX-512; 32: AVX2; 16: NEON); 0: the
  /// host's widest (te::resolved_target).
  int vector_bytes = 0;
};

namespace attention_cpu_detail {

// t's reduction over `axis` as vector partials: the axis split into vectors of `lanes`,
// one partial per lane (rfactor) computed at `loop` of `at`, its lanes last and
// vectorized, its few vectors unrolled; t then adds the lanes. With `transposed` (t's
// last axis a multiple of `lanes` long), the partials of `lanes` consecutive elements of
// t are transposed in registers (intrinsics::transpose) and t adds them a vector of its
// elements at a time: `lanes` vector adds instead of `lanes` scalar adds per element, in
// the same order.
inline void reduce_in_lanes(Schedule& s, const Tensor& t, const IterVar& axis, int lanes, Stage at, const IterVar& loop,
                            bool transposed = false) {
  auto [outer, lane] = s[t].split(axis, lanes);
  Tensor partials = s.rfactor(t, lane, t.ndim());
  s[partials].compute_at(at, loop);
  std::vector<IterVar> order(partials.op()->axis.begin(), partials.op()->axis.end() - 1);
  order.push_back(partials.reduce_axis(0));
  order.push_back(partials.axis(partials.ndim() - 1));
  s[partials].reorder(order);
  const int64_t* vectors = as_const_int(partials.reduce_axis(0)->dom.extent);
  if (vectors && *vectors <= 16) s[partials].unroll(partials.reduce_axis(0));
  s[partials].vectorize(partials.axis(partials.ndim() - 1));
  if (!transposed) return;
  // partials (..., element, lane) -> by_lane (..., lane, element), a block of lanes x
  // lanes at a time.
  const int n = partials.ndim();
  std::vector<int> swap_last(static_cast<size_t>(n));
  for (int d = 0; d < n; ++d) swap_last[static_cast<size_t>(d)] = d;
  std::swap(swap_last[static_cast<size_t>(n - 2)], swap_last[static_cast<size_t>(n - 1)]);
  Tensor by_lane = s.cache_read(partials, "global", {t}, swap_last);
  s[by_lane].compute_at(at, loop);
  auto [blocks, element] = s[by_lane].split(by_lane.axis(n - 1), lanes);
  std::vector<IterVar> copy_order(by_lane.op()->axis.begin(), by_lane.op()->axis.end() - 2);
  copy_order.insert(copy_order.end(), {blocks, by_lane.axis(n - 2), element});
  s[by_lane].reorder(copy_order);
  s[by_lane].tensorize(by_lane.axis(n - 2), intrinsics::transpose(t.dtype(), lanes));
  Stage total = s[t];
  const IterVar over_lanes = total.op()->reduce_axis[0];
  auto [vector, element_lane] = total.split(total.op()->axis[static_cast<size_t>(n - 2)], lanes);
  std::vector<IterVar> total_order(total.op()->axis.begin(), total.op()->axis.end() - 1);
  total_order.insert(total_order.end(), {vector, over_lanes, element_lane});
  total.reorder(total_order);
  total.vectorize(element_lane);
}

}  // namespace attention_cpu_detail

/// Schedules attention's stages for the CPU (see the file's comment).
inline void schedule_attention_cpu(Schedule& s, const AttentionStages& st, const AttentionCpuOptions& o = {}) {
  if (o.query_block < 0 || o.vector_bytes < 0 || (o.vector_bytes > 0 && o.vector_bytes < 4))
    throw Error(
        "schedule_attention_cpu: query_block must be >= 0 (0: default) and vector_bytes 0 (the host's) or >= 4, got " +
        std::to_string(o.query_block) + " and " + std::to_string(o.vector_bytes));
  const int vector_bytes =
      o.vector_bytes > 0 ? o.vector_bytes : std::max(16, resolved_target(Target()).vector_bits / 8);
  const int lanes = vector_bytes / 4;  // float32 lanes
  // Register tiles keep their accumulators within the 16 vector registers of SSE/AVX2 or
  // (16 of) the 32 of AVX-512: probs · v's are tile_rows queries x `tile` vectors of dim;
  // the scores' `tile_vectors` vectors of queries x `tile_keys` keys.
  const int tile = vector_bytes >= 64 ? 4 : 2;
  constexpr int kMaxTileRows = 4;
  const int64_t* seq_q = as_const_int(st.q.shape()[2]);
  // 32 queries read each key block 8 times as often as a single register tile's 4 (from
  // L1, not L2), and make parallel work items of 32 · seq_k · dim multiply-adds. A block
  // longer than seq_q is halved until seq_q holds it.
  int query_block = o.query_block > 0 ? o.query_block : 32;
  while (seq_q && query_block > 1 && *seq_q < query_block) query_block /= 2;
  int tile_rows = kMaxTileRows;
  while (query_block % tile_rows != 0) --tile_rows;
  // The scores' vectors of queries: the largest power of two dividing the block, at most
  // a register's lanes.
  int query_lanes = 1;
  while (query_lanes < lanes && query_block % (2 * query_lanes) == 0) query_lanes *= 2;
  const int tile_vectors = std::min(2, query_block / query_lanes);
  const int tile_keys = (vector_bytes >= 64 ? 16 : 8) / tile_vectors;
  const auto shift = TailStrategy::ShiftInwards;

  // Decoding: fewer queries read each key than a register tile holds.
  const int64_t* heads = as_const_int(st.q.shape()[1]);
  const int64_t* kv_heads = as_const_int(st.k.shape()[1]);
  const bool decoding = seq_q && heads && kv_heads && *seq_q * (*heads / *kv_heads) < kMaxTileRows;

  // The output: (batch, head, block of queries) are the parallel work items.
  Stage out = s[st.out];
  // (The output has no reduction of its own: an overlapping last block recomputes a few
  // queries' values whole, in its own buffers.)
  auto [qo, qi] = out.split(st.out.axis(2), query_block, shift);
  IterVar work = out.fuse(out.fuse(st.out.axis(0), st.out.axis(1)), qo);
  out.parallel(work);
  auto [oeo, oei] = out.split(st.out.axis(3), lanes, shift);
  out.vectorize(oei);

  // The block's queries' running state, a block of keys at a time. (An accumulator is
  // updated once per block: its vector tail is guarded, not shifted onto other elements.)
  s[st.acc].compute_at(out, work);
  Stage rows = s[st.acc];
  rows.reorder({st.acc.axis(0), st.acc.axis(1), st.block, st.acc.axis(2), st.acc.axis(3)});
  auto [eo, ei] = rows.split(st.acc.axis(3), lanes);
  rows.vectorize(ei);

  // Per block of keys. k is read as it lies: no transposed copy (key_t inlined).
  s[st.key_t].compute_inline();
  if (decoding) {
    if (st.queries.defined()) s[st.queries].compute_inline();
    for (const Tensor& t : {st.scores, st.block_max, st.probs, st.block_sum, st.block_pv})
      s[t].compute_at(rows, st.block);
    // Few queries read each key (decoding): each score is a dot product along dim,
    // vectors of dim (rfactor over the lanes, k's rows read contiguously), the lanes
    // added after.
    // (The lanes' sums go by transposed blocks where every block of keys is whole and a
    // multiple of the lanes: 1.06-1.08x at dim 128.)
    const int64_t* seq_k = as_const_int(st.k.shape()[2]);
    const bool whole_blocks = seq_k && *seq_k % st.key_block == 0 && st.key_block % lanes == 0;
    attention_cpu_detail::reduce_in_lanes(s, st.scores, st.scores.reduce_axis(0), lanes, rows, st.block, whole_blocks);
    // Each query's max and sum over the block: a vector of keys' partials (rfactor over
    // the lanes), then the lanes' total.
    for (const Tensor& t : {st.block_max, st.block_sum})
      attention_cpu_detail::reduce_in_lanes(s, t, t.reduce_axis(0), lanes, rows, st.block);
    Stage probs = s[st.probs];
    auto [po, pi] = probs.split(st.probs.axis(3), lanes);
    probs.vectorize(pi);
  } else {
    // The scores and probabilities are laid out key by key, the block's queries in vector
    // lanes (cache_write in the order (b, h, key, query)): the block's max, exps and sum
    // per query are then vector operations across queries, with no lanes to add up.
    Tensor scores = s.cache_write(st.scores, "global", {0, 1, 3, 2});
    s[st.scores].compute_inline();
    Tensor probs = s.cache_write(st.probs, "global", {0, 1, 3, 2});
    s[st.probs].compute_inline();
    // The queries transposed too, once per work item: a score tile is query vectors
    // times keys, each key's element broadcast from k as it is (no transposed copy of k).
    Tensor queries_t = s.cache_read(st.queries.defined() ? st.queries : st.q, "global", {scores}, {0, 1, 3, 2});
    if (st.queries.defined()) s[st.queries].compute_inline();
    s[queries_t].compute_at(out, work);
    auto [tqo, tqi] = s[queries_t].split(queries_t.axis(3), query_lanes);
    s[queries_t].vectorize(tqi);
    for (const Tensor& t : {scores, st.block_max, probs, st.block_sum, st.block_pv}) s[t].compute_at(rows, st.block);
    // A register tile: `tile_vectors` vectors of queries x `tile_keys` keys.
    Stage sc = s[scores];
    auto [sqo, sqi] = sc.split(scores.axis(3), query_lanes);
    auto [sqoo, sqoi] = sc.split(sqo, tile_vectors);
    auto [sko, ski] = sc.split(scores.axis(2), tile_keys);
    sc.reorder({scores.axis(0), scores.axis(1), sqoo, sko, scores.reduce_axis(0), ski, sqoi, sqi});
    sc.unroll(ski);
    sc.unroll(sqoi);
    sc.vectorize(sqi);
    // The block's max and sum, and the exps, a vector of queries at a time. The max and
    // the sum each keep `partials` running vectors per vector of queries (rfactor: the
    // partials a dimension before the queries, so that a vector of queries stays
    // contiguous), every vector of queries at once: independent chains instead of one
    // max or add waiting on the one before across the block's keys (dim 64: 9% of the
    // time in those two loops before).
    int partials = 4;
    while (st.key_block % partials != 0) partials /= 2;
    for (const Tensor& t : {st.block_max, st.block_sum}) {
      auto [jo, ji] = s[t].split(t.reduce_axis(0), partials);
      (void)jo;
      Tensor part = s.rfactor(t, ji, 2);  // (b, h, partial, query, block)
      s[part].compute_at(rows, st.block);
      auto [pqv, pql] = s[part].split(part.axis(3), query_lanes);
      s[part].reorder({part.axis(0), part.axis(1), part.axis(4), part.reduce_axis(0), pqv, part.axis(2), pql});
      s[part].unroll(pqv);
      s[part].unroll(part.axis(2));
      s[part].vectorize(pql);
      Stage total = s[t];
      const IterVar over_partials = total.op()->reduce_axis[0];
      auto [query_vector, query_lane] = total.split(total.op()->axis[2], query_lanes);
      total.reorder(
          {total.op()->axis[0], total.op()->axis[1], query_vector, total.op()->axis[3], over_partials, query_lane});
      total.unroll(over_partials);
      total.vectorize(query_lane);
    }
    auto [po, pi] = s[probs].split(probs.axis(3), query_lanes);
    s[probs].vectorize(pi);
  }
  // probs · v: each query's block of dim in registers across the block's keys.
  Stage pv = s[st.block_pv];
  const IterVar jj = st.block_pv.reduce_axis(0);
  auto [vo, vi] = pv.split(st.block_pv.axis(4), lanes);
  // Decoding (one query row per tile) keeps up to 8 vectors of dim in registers: v's rows
  // are then read in one pass per block of keys, each probability broadcast once (1.3-1.5x
  // on 8 x 1 x 4096-32768 x 128 over 4 vectors in two passes).
  const int64_t* dim_v = as_const_int(st.v.shape()[3]);
  const int pv_tile =
      decoding && dim_v ? static_cast<int>(std::clamp<int64_t>((*dim_v + lanes - 1) / lanes, 1, 8)) : tile;
  auto [voo, voi] = pv.split(vo, pv_tile);
  auto [pqo, pqi] = pv.split(st.block_pv.axis(2), tile_rows);
  pv.reorder({pqo, st.block_pv.axis(3), voo, jj, pqi, voi, vi});
  pv.unroll(pqi);
  pv.unroll(voi);
  pv.vectorize(vi);
}

/// schedule_attention_cpu() on an output of attention() (its stages found through the graph).
inline void schedule_attention_cpu(Schedule& s, const Tensor& out, const AttentionCpuOptions& o = {}) {
  schedule_attention_cpu(s, attention_stages_of(out), o);
}

}  // namespace te::ops
