/// \file
/// The CUDA schedule of te::ops::attention on tensor cores (header-only; sm_80+, float16 or
/// bfloat16): FlashAttention-2's register form.
///
/// A thread block takes a tile of `warps * 16` queries of one (batch, head); each warp
/// takes 16 of them and keeps their running state (max, sum and the output row acc) in
/// its registers across the blocks of keys, as the mma fragments lay them out. Before the
/// blocks, each warp loads its queries' A fragments once. Per block of keys (the row
/// reduction's loop over blocks):
///  - all the block's threads copy the keys and the values, as they lie, into shared
///    memory (16-byte cp.async copies; double-buffered, the next block's tiles load during
///    this one's arithmetic);
///  - each warp multiplies its queries by the keys on tensor cores (`mma.sync.m16n8k16`,
///    the keys' B fragments by ldmatrix, a key's row being a column of B) into its
///    scores' accumulators;
///  - each lane takes the block's max over the scores it holds, the probabilities (rounded
///    to the input type) and their sum, the four lanes of a row combining by two shuffles
///    (lane nests, docs/tensor_cores.md "Fragments element by element");
///  - each warp multiplies the probabilities (the accumulators of the scores are, element
///    by element, the A fragments of this mma) by the values on tensor cores;
///  - each lane folds the block into the running state it holds (the online-softmax step).
/// The output (acc / sum) leaves from the registers in the input type. Causal attention
/// visits the blocks of keys the tile's last query needs (every warp of a block the same
/// count: they meet at the copies' barriers). AttentionCudaOptions::key_splits > 1 is flash
/// decoding (split-K over the blocks of keys, the parts merged after): its parts still keep
/// the running state in shared memory, a thread per query.
///
/// AttentionCudaOptions::wgmma is the same form on Hopper (sm_90a): a warpgroup per 64
/// queries, the scores and probs · v by wgmma from swizzled shared tiles of q, k and v as
/// they lie, the probabilities as the second wgmma's A registers (docs/attention.md, "On
/// Hopper").
///
/// Requirements (te::Error otherwise): float16 or bfloat16 inputs, constant shapes, dim a
/// multiple of 16 and the value dim of 8, the key block a multiple of 16 dividing seq_k,
/// the queries in whole tiles of 16 * warps (AttentionOptions::query_block rounds them
/// up). Above 48 KiB the shared memory is dynamic (build_cuda): dim 128 with blocks of 64
/// keys, double-buffered, takes 70 KiB.
#pragma once
#include <string>
#include <vector>

#include "te/ops/attention.h"

namespace te::ops {

/// schedule_attention_cuda()'s knobs.
struct AttentionCudaOptions {
  /// Warps per thread block, 16 queries each.
  int warps = 2;
  /// Elements added to each shared row of 16-bit tiles (ldmatrix's rows then fall in
  /// distinct banks), a multiple of 8. (mma.sync's tiles: wgmma's are swizzled instead.)
  int pad = 8;
  /// Double-buffer the shared tiles of keys and values (Stage::double_buffer).
  bool double_buffer = true;
  /// Split-K over the keys (flash decoding, for few queries and many keys): the blocks of
  /// keys in this many parts, each part's running state computed by thread blocks of its
  /// own (rfactor of the row reduction), then merged. 1: none.
  int key_splits = 1;
  /// Hopper's warpgroup MMA (wgmma, sm_90a; each thread's own sums on other GPUs) instead
  /// of mma.sync: each 4 warps are a warpgroup of 64 queries (warps a multiple of 4), whose
  /// scores and probs · v are wgmmas from swizzled shared tiles of the queries, keys and
  /// values as they lie (the probabilities, made in registers, are the second's A), every
  /// other step each thread on the accumulator elements it holds. The value dim a multiple
  /// of 16 up to 256 (wgmma's n); not with key_splits.
  bool wgmma = false;
};

namespace attention_cuda_detail {

[[noreturn]] inline void fail(const std::string& what) { throw Error("schedule_attention_cuda: " + what); }

inline int64_t constant(const Expr& e, const char* what) {
  const int64_t* v = as_const_int(e);
  if (v == nullptr) fail(std::string(what) + " is " + to_string(e) + ", not a constant");
  return *v;
}

// Spreads a stage's loop `f` (fused elements) over the block's threads: `group` threads
// on threadIdx.x (a warp's 32 lanes, or a warpgroup's 128), then `groups` on threadIdx.y.
inline void spread(Schedule& s, const Tensor& t, const IterVar& f, int groups, int vector = 1, int group = 32) {
  IterVar rest = f;
  if (vector > 1) {
    auto [pieces, lanes] = s[t].split(f, vector);
    s[t].vectorize(lanes);
    rest = pieces;
  }
  auto [pass, thread] = s[t].split(rest, int64_t{group} * groups);
  auto [which, place] = s[t].split(thread, group);
  s[t].bind(which, thread_axis("threadIdx.y"));
  s[t].bind(place, thread_axis("threadIdx.x"));
  (void)pass;
}

// What a "warp" copy holds: the A operand's 16 x 16 tiles (the queries), the B operand's
// 16 x 8 ones read from a tile laid out as B (the values) or from one holding B's
// columns as rows (the keys).
enum class Operand { A, B, BFromRows };

// Fragments of the "warp" copy `F` ((.., rows, columns) of a tile) under loop `at` of
// `consumer` (ldmatrix from shared memory), the column steps unrolled.
inline void load_fragments(Schedule& s, const Tensor& F, Operand operand, Stage consumer, const IterVar& at,
                           DataType t) {
  s[F].compute_at(consumer, at);
  auto [outer, inner] = s[F].split(F.axis(3), operand == Operand::A ? 16 : 8);
  s[F].reorder({outer, F.axis(2), inner});
  s[F].unroll(outer);
  s[F].tensorize(F.axis(2), operand == Operand::A   ? intrinsics::cuda_load_matrix_a_16x16(t)
                            : operand == Operand::B ? intrinsics::cuda_load_matrix_b_16x8(t)
                                                    : intrinsics::cuda_load_matrix_bt_8x16(t));
}

// The mma stage `m` (rows `rows`, columns `cols`, one reduction) in 16 x 8 tiles, its
// reduction in steps of 16: the loops `outer` first, the column tiles unrolled (and the
// reduction's steps if `unroll_k`). Returns the steps' loop (where fragments load).
inline IterVar mma_tiles(Stage m, const IterVar& rows, const IterVar& cols, std::vector<IterVar> outer, bool unroll_k,
                         DataType t) {
  auto [ko, k16] = m.split(m.op()->reduce_axis[0], 16);
  auto [no, n8] = m.split(cols, 8);
  outer.insert(outer.end(), {ko, no, rows, n8, k16});
  m.reorder(outer);
  if (unroll_k) m.unroll(ko);
  m.unroll(no);
  m.tensorize(rows, intrinsics::cuda_mma_m16n8k16(t));
  return ko;
}

// The block's keys and values in shared memory under loop `block` of `rows`, as they lie
// in k and v (key_t, the keys transposed, is inlined: the scores' fragments read the
// keys' rows as B's columns), copied by all the block's threads in 16-byte pieces
// (cp.async); returns the values' copy. Rows are padded (ldmatrix's eight row addresses
// in distinct banks); double-buffered, the next block's tiles load while this one's are
// used.
inline Tensor shared_key_value_tiles(Schedule& s, const AttentionStages& st, Stage rows, const IterVar& block,
                                     const AttentionCudaOptions& o, int64_t dim, int64_t dim_v) {
  Tensor ks = s.cache_read(st.k, "shared", {st.key_t});
  s[st.key_t].compute_inline();
  Tensor vs = s.cache_read(st.v, "shared", {st.block_pv});
  for (const auto& [tile, row] : {std::pair{ks, dim}, std::pair{vs, dim_v}}) {
    s[tile].compute_at(rows, block);
    spread(s, tile, s[tile].fuse(tile.axis(2), tile.axis(3)), o.warps, 8);
    if (o.pad > 0) s[tile].storage_align(tile.axis(2), static_cast<int>(row) + o.pad, 0);
    if (o.double_buffer) s[tile].double_buffer();
  }
  return vs;
}

// Per block of keys, under loop `block` of the stage `rows` that folds them in (the row
// reduction, or its split-K part): the stages that make the block's scores, probabilities
// and probs · v, on tensor cores; the tile's queries once, under `before_blocks`.
inline void schedule_key_blocks(Schedule& s, const AttentionStages& st, Stage rows, const IterVar& block,
                                const IterVar& before_blocks, const AttentionCudaOptions& o, int64_t dim, int64_t dim_v,
                                int64_t kb) {
  const DataType t = st.q.dtype();
  // The tile's queries in shared memory, once.
  Tensor qs = st.queries.defined() ? st.queries : s.cache_read(st.q, "shared", {st.scores});
  s[qs].set_scope("shared");
  Tensor qf = s.cache_read(qs, "warp", {st.scores});
  s[qs].compute_at(rows, before_blocks);
  spread(s, qs, s[qs].fuse(qs.axis(2), qs.axis(3)), o.warps, 8);
  // Per block of keys: the keys and values in shared memory.
  Tensor vs = shared_key_value_tiles(s, st, rows, block, o, dim, dim_v);
  // The scores: mma from fragments into a shared tile.
  Stage scores = s[st.scores];
  scores.set_scope("shared");
  Tensor sf = s.cache_write(st.scores, "warp");
  Tensor kf = s.cache_read(st.key_t, "warp", {sf});
  scores.compute_at(rows, block);
  {
    auto [sw, si] = scores.split(st.scores.axis(2), 16);
    auto [sjo, sj] = scores.split(st.scores.axis(3), 8);
    scores.reorder({sw, sjo, si, sj});
    scores.bind(sw, thread_axis("threadIdx.y"));
    scores.unroll(sjo);
    scores.tensorize(si, intrinsics::cuda_store_16x8_f32());
    s[sf].compute_at(scores, sw);
    const IterVar co = mma_tiles(s[sf], sf.axis(2), sf.axis(3), {}, false, t);
    load_fragments(s, qf, Operand::A, scores, sw, t);
    load_fragments(s, kf, Operand::BFromRows, s[sf], co, t);
  }
  // Per query (a thread each): the block's max, the probabilities, their sum.
  // (Each sums in a register, then stores once.)
  for (const Tensor& r : {st.block_max, st.block_sum}) {
    s[r].set_scope("shared");
    Tensor reg = s.cache_write(r, "local");
    s[r].compute_at(rows, block);
    auto [w, l] = s[r].split(r.axis(2), 16);
    s[r].bind(w, thread_axis("threadIdx.y"));
    s[r].bind(l, thread_axis("threadIdx.x"));
    s[reg].compute_at(s[r], l);
  }
  Stage probs = s[st.probs];
  probs.set_scope("shared");
  probs.compute_at(rows, block);
  spread(s, st.probs, probs.fuse(st.probs.axis(2), st.probs.axis(3)), o.warps);
  // probs · v: mma from the probabilities' and the values' fragments into a shared tile.
  Stage pv = s[st.block_pv];
  pv.set_scope("shared");
  Tensor pvf = s.cache_write(st.block_pv, "warp");
  Tensor pf = s.cache_read(st.probs, "warp", {pvf});
  Tensor vf = s.cache_read(vs, "warp", {pvf});
  pv.compute_at(rows, block);
  {
    auto [pw, pi] = pv.split(st.block_pv.axis(2), 16);
    auto [pjo, pj] = pv.split(st.block_pv.axis(4), 8);
    pv.reorder({pw, st.block_pv.axis(3), pjo, pi, pj});
    pv.bind(pw, thread_axis("threadIdx.y"));
    pv.unroll(pjo);
    pv.tensorize(pi, intrinsics::cuda_store_16x8_f32());
    s[pvf].compute_at(pv, pw);
    const IterVar jo = mma_tiles(s[pvf], pvf.axis(2), pvf.axis(4), {pvf.axis(3)}, false, t);
    s[pf].compute_at(s[pvf], jo);
    s[pf].tensorize(pf.axis(2), intrinsics::cuda_load_matrix_a_16x16(t));
    load_fragments(s, vf, Operand::B, s[pvf], jo, t);
  }
  // The other 16-bit tiles ldmatrix reads: rows padded too.
  if (o.pad > 0) {
    s[qs].storage_align(qs.axis(2), static_cast<int>(dim) + o.pad, 0);
    probs.storage_align(st.probs.axis(2), static_cast<int>(kb) + o.pad, 0);
  }
  // The float tiles a thread per query reads along its row (the block's max, the fold of
  // probs · v): rows 4 floats longer fall in different banks (2 queries per bank, not 16).
  scores.storage_align(st.scores.axis(2), static_cast<int>(kb) + 4, 0);
  pv.storage_align(st.block_pv.axis(2), static_cast<int>(dim_v) + 4, 0);
}

// The register form (FlashAttention-2): under loop `warp` of the output (a warp's 16
// queries), the warp's running state (max, sum, acc) in registers across the blocks of
// keys, each block's scores, probabilities and probs · v made and used in registers.
inline void schedule_rows_in_registers(Schedule& s, const AttentionStages& st, Stage out, const IterVar& warp,
                                       const AttentionCudaOptions& o, int64_t dim, int64_t dim_v) {
  const DataType t = st.q.dtype();
  Stage rows = s[st.acc];
  rows.set_scope("warp");
  rows.compute_at(out, warp);
  rows.reorder({st.acc.axis(0), st.acc.axis(1), st.block, st.acc.axis(2), st.acc.axis(3)});
  const IterVar& block = st.block;
  // The warp's queries: A fragments, loaded once before the blocks (beyond seq_q, zeros:
  // then each lane loads the elements it holds).
  if (st.queries.defined()) {
    s[st.queries].set_scope("warp");
    s[st.queries].compute_at(rows, st.acc.axis(1));
  } else {
    load_fragments(s, s.cache_read(st.q, "warp", {st.scores}), Operand::A, rows, st.acc.axis(1), t);
  }
  // Per block of keys: the keys and values in shared memory, copied by all the block's
  // warps.
  Tensor vs = shared_key_value_tiles(s, st, rows, block, o, dim, dim_v);
  // The scores: mma straight into the warp's accumulators.
  Stage scores = s[st.scores];
  scores.set_scope("warp");
  scores.compute_at(rows, block);
  Tensor kf = s.cache_read(st.key_t, "warp", {st.scores});
  // (The steps over dim unrolled: q's fragments then at constant slots.)
  load_fragments(s, kf, Operand::BFromRows, scores,
                 mma_tiles(scores, st.scores.axis(2), st.scores.axis(3), {}, true, t), t);
  // The block's max, probabilities and sum: each lane on the elements it holds.
  for (const Tensor& x : {st.block_max, st.probs, st.block_sum}) {
    s[x].set_scope("warp");
    s[x].compute_at(rows, block);
  }
  // probs · v: the probabilities are the A operand as they lie; v's fragments from shared.
  Stage pv = s[st.block_pv];
  pv.set_scope("warp");
  pv.compute_at(rows, block);
  Tensor vf = s.cache_read(vs, "warp", {st.block_pv});
  // (The steps over the block's keys unrolled: the probabilities' fragments then at
  // constant slots.)
  load_fragments(s, vf, Operand::B, pv,
                 mma_tiles(pv, st.block_pv.axis(2), st.block_pv.axis(4), {st.block_pv.axis(3)}, true, t), t);
}

// The Hopper form: as the register form, a warpgroup per 64 queries (loop `group` of the
// output), the scores and probs · v by wgmma. The block's threads copy the tile's queries
// once and each block's keys and values, as they lie, into shared tiles swizzled by
// their rows' width (the keys' rows are the scores' K-major B; the values' the second
// wgmma's MN-major B); the probabilities, each thread making the elements it holds of
// the scores' accumulators, are that wgmma's A registers.
inline void schedule_rows_in_warpgroups(Schedule& s, const AttentionStages& st, Stage out, const IterVar& group,
                                        const AttentionCudaOptions& o, int64_t dim, int64_t dim_v) {
  const DataType t = st.q.dtype();
  const int groups = o.warps / 4;
  Stage rows = s[st.acc];
  rows.set_scope("warpgroup");
  rows.compute_at(out, group);
  rows.reorder({st.acc.axis(0), st.acc.axis(1), st.block, st.acc.axis(2), st.acc.axis(3)});
  const IterVar& block = st.block;
  // A shared tile (.., rows, cols) under loop `at`, swizzled by the widest swizzle (32, 64
  // or 128 bytes) that divides its rows (wider rows: column blocks of the swizzle's width,
  // BufferNode::swizzle_row), copied 16 bytes a piece by all the block's threads.
  auto fill = [&](const Tensor& tile, const IterVar& at, int64_t cols) {
    s[tile].compute_at(rows, at);
    s[tile].swizzle(cols % 64 == 0 ? 128 : cols % 32 == 0 ? 64 : 32);
    spread(s, tile, s[tile].fuse(tile.axis(2), tile.axis(3)), groups, 8, 128);
  };
  // The tile's queries, once before the blocks.
  Tensor qs = st.queries.defined() ? st.queries : s.cache_read(st.q, "shared", {st.scores});
  s[qs].set_scope("shared");
  fill(qs, st.acc.axis(1), dim);
  // Per block of keys: the keys and values.
  Tensor ks = s.cache_read(st.k, "shared", {st.key_t});
  s[st.key_t].compute_inline();
  Tensor vs = s.cache_read(st.v, "shared", {st.block_pv});
  fill(ks, block, dim);
  fill(vs, block, dim_v);
  if (o.double_buffer) {
    s[ks].double_buffer();
    s[vs].double_buffer();
  }
  // wgmma stage m (rows, cols; one reduction, in steps of 16) under the block's loop.
  auto wgmma = [&](const Tensor& m, const IterVar& r, const IterVar& c, std::vector<IterVar> outer,
                   const TensorIntrinsic& intrinsic) {
    s[m].set_scope("warpgroup");
    s[m].compute_at(rows, block);
    auto [kk, k16] = s[m].split(s[m].op()->reduce_axis[0], 16);
    outer.insert(outer.end(), {kk, r, c, k16});
    s[m].reorder(outer);
    s[m].unroll(kk);
    s[m].tensorize(r, intrinsic);
  };
  wgmma(st.scores, st.scores.axis(2), st.scores.axis(3), {},
        intrinsics::cuda_wgmma_m64nNk16(t, static_cast<int>(st.key_block)));
  // The block's max, probabilities and sum: each thread on the elements it holds.
  for (const Tensor& x : {st.block_max, st.probs, st.block_sum}) {
    s[x].set_scope("warpgroup");
    s[x].compute_at(rows, block);
  }
  wgmma(st.block_pv, st.block_pv.axis(2), st.block_pv.axis(4), {st.block_pv.axis(3)},
        intrinsics::cuda_wgmma_m64nNk16_rs_kn(t, static_cast<int>(dim_v)));
}

}  // namespace attention_cuda_detail

/// Schedules attention's stages for CUDA tensor cores (see the file's comment).
inline void schedule_attention_cuda(Schedule& s, const AttentionStages& st, const AttentionCudaOptions& o = {}) {
  namespace d = attention_cuda_detail;
  const DataType t = st.q.dtype();
  if (t != Float(16) && t != BFloat(16))
    d::fail("tensor cores multiply float16 or bfloat16; q, k and v are " + t.to_string());
  if (o.warps < 1 || o.warps > 32 || o.pad < 0 || o.pad % 8 != 0 || o.key_splits < 1)
    d::fail("warps must be in [1, 32], pad a multiple of 8 and key_splits at least 1, got " + std::to_string(o.warps) +
            ", " + std::to_string(o.pad) + " and " + std::to_string(o.key_splits));
  const int64_t dim = d::constant(st.q.shape()[3], "dim");
  const int64_t dim_v = d::constant(st.v.shape()[3], "the value dim");
  const int64_t seq_k = d::constant(st.k.shape()[2], "seq_k");
  const int64_t seq_q = d::constant(st.q.shape()[2], "seq_q");
  const int64_t kb = st.key_block;
  if (dim % 16 != 0 || dim_v % 8 != 0)
    d::fail("dim (" + std::to_string(dim) + ") must be a multiple of 16 and the value dim (" + std::to_string(dim_v) +
            ") of 8");
  if (kb % 16 != 0 || seq_k % kb != 0)
    d::fail("the key block (" + std::to_string(kb) + ") must be a multiple of 16 and divide seq_k (" +
            std::to_string(seq_k) + ")");
  if (o.wgmma) {
    if (o.warps % 4 != 0)
      d::fail("wgmma takes a warpgroup (4 warps) per 64 queries: warps must be a multiple of 4, got " +
              std::to_string(o.warps));
    if (o.key_splits > 1)
      d::fail("wgmma keeps each warpgroup's running state in its registers; key_splits (" +
              std::to_string(o.key_splits) + ") is the mma.sync form's");
    if (dim_v % 16 != 0 || dim_v > 256)
      d::fail(
          "wgmma's n is a multiple of 8 up to 256, in column blocks of 16 elements at least: the value dim must "
          "be a multiple of 16 up to 256, got " +
          std::to_string(dim_v));
    if (kb > 256) d::fail("wgmma's n is at most 256: the key block is " + std::to_string(kb));
  }
  const int block_q = 16 * o.warps;
  const int64_t tiles = st.queries.defined() ? d::constant(st.queries.shape()[2], "the queries' extent") : seq_q;
  if (tiles % block_q != 0)
    d::fail("a block's " + std::to_string(block_q) + " queries (16 per warp) must divide the queries' extent " +
            std::to_string(tiles) + " (seq_q " + std::to_string(seq_q) +
            "): give attention() AttentionOptions::query_block = " + std::to_string(block_q) +
            ", which rounds seq_q up to whole tiles");

  // Causal: every query of a block must visit the same count of blocks of keys (its warps
  // meet at the copies' barriers and run each mma whole), which the definition says when
  // its query tile is a multiple of the block's queries. The count grows with the query,
  // so a block's first and last queries tell.
  if (const Expr visits = st.acc.op()->reduce_axis[0].dom().extent; !as_const_int(visits)) {
    const Var i = st.acc.op()->axis[2].var();
    auto count = [&](int64_t query) {
      const int64_t* n = as_const_int(simplify(substitute(visits, {{i, make_const(i.dtype(), query)}})));
      return n ? *n : -1;
    };
    for (int64_t first = 0; first < tiles; first += block_q) {
      const int64_t at_first = count(first), at_last = count(first + block_q - 1);
      if (at_first < 0 || at_first != at_last)
        d::fail("causal attention's queries " + std::to_string(first) + " and " + std::to_string(first + block_q - 1) +
                " (one thread block's " + std::to_string(block_q) + ") visit " + std::to_string(at_first) + " and " +
                std::to_string(at_last) + " blocks of keys: give attention() AttentionOptions::query_block = " +
                std::to_string(block_q) + " (or a multiple), so that a tile's queries visit its last query's blocks");
    }
  }

  // The output: a block per (batch x head, tile of queries); its threads' elements.
  Stage out = s[st.out];
  IterVar bh = out.fuse(st.out.axis(0), st.out.axis(1));
  auto [qo, qi] = out.split(st.out.axis(2), block_q, TailStrategy::GuardWholeTiles);
  out.reorder({bh, qo, qi, st.out.axis(3)});
  out.bind(bh, thread_axis("blockIdx.y"));
  out.bind(qo, thread_axis("blockIdx.x"));
  if (o.key_splits <= 1) {
    // A warp per 16 queries (a warpgroup per 64): their running state in its registers,
    // each lane storing the output elements it holds.
    auto [warp, rows] = out.split(qi, o.wgmma ? 64 : 16);
    out.bind(warp, thread_axis("threadIdx.y"));
    (void)rows;
    if (o.wgmma)
      d::schedule_rows_in_warpgroups(s, st, out, warp, o, dim, dim_v);
    else
      d::schedule_rows_in_registers(s, st, out, warp, o, dim, dim_v);
    return;
  }
  d::spread(s, st.out, out.fuse(qi, st.out.axis(3)), o.warps);
  if (!as_const_int(st.acc.op()->reduce_axis[0].dom().extent))  // causal: blocks per query
    d::fail("key_splits (" + std::to_string(o.key_splits) +
            ") needs the same keys for every query: causal attention's differ unless its queries fit one tile "
            "(AttentionOptions::query_block = 16 * warps at least seq_q, as when decoding)");
  if ((seq_k / kb) % o.key_splits != 0)
    d::fail("key_splits (" + std::to_string(o.key_splits) + ") must divide the " + std::to_string(seq_k / kb) +
            " blocks of " + std::to_string(kb) + " keys (tensor cores take whole tiles)");
  // Split-K (flash decoding): the blocks of keys in key_splits parts, each part's running
  // state (a partial max, sum and acc per query) computed by its own thread blocks into
  // global memory, then the parts merged by the same rule, a thread per query.
  auto [part, within] = s[st.acc].split_nparts(st.block, o.key_splits);
  Tensor acc_part = s.rfactor(st.acc, part, 3);  // rows (b, h, i, part), elements e
  Stage rows = s[acc_part];
  const IterVar blocks = acc_part.op()->reduce_axis[0];
  IterVar pbh = rows.fuse(acc_part.axis(0), acc_part.axis(1));
  auto [pqo, pqi] = rows.split(acc_part.axis(2), block_q, TailStrategy::GuardWholeTiles);
  rows.reorder({pbh, acc_part.axis(3), pqo, blocks, pqi, acc_part.axis(4)});
  rows.bind(pbh, thread_axis("blockIdx.y"));
  rows.bind(acc_part.axis(3), thread_axis("blockIdx.z"));
  rows.bind(pqo, thread_axis("blockIdx.x"));
  auto [rw, rl] = rows.split(pqi, 16);
  rows.bind(rw, thread_axis("threadIdx.y"));
  rows.bind(rl, thread_axis("threadIdx.x"));
  d::schedule_key_blocks(s, st, rows, blocks, pqo, o, dim, dim_v, kb);
  // The merge: a thread per query, over the parts.
  Stage merge = s[st.acc];
  IterVar queries = merge.fuse(merge.fuse(st.acc.axis(0), st.acc.axis(1)), st.acc.axis(2));
  auto [mb, mt] = merge.split(queries, 32);
  merge.bind(mb, thread_axis("blockIdx.x"));
  merge.bind(mt, thread_axis("threadIdx.x"));
}

/// schedule_attention_cuda() on an output of attention() (its stages found through the graph).
inline void schedule_attention_cuda(Schedule& s, const Tensor& out, const AttentionCudaOptions& o = {}) {
  schedule_attention_cuda(s, attention_stages_of(out), o);
}

}  // namespace te::ops
