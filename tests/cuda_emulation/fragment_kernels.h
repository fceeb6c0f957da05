// Kernels that use mma fragments element by element (lane nests, src/codegen_cuda_src/
// lane_nest.h): an epilogue from the accumulators straight to global memory, and two GEMMs
// back to back whose intermediate never leaves the registers.
#pragma once
#include <string>
#include <vector>

#include "te/ops/matmul.h"
#include "te/te.h"

namespace te::cuda_test {

// The fragments of `F` (a cache_read of a 16-bit tensor into "warp" scope, read by the mma
// stage `mma`) loaded under loop `at` of it: A as 16 x 16 tiles, B as 16 x 8 ones.
inline void load_fragments(Schedule& s, const Tensor& F, bool is_a, DataType t, Stage mma, const IterVar& at) {
  s[F].compute_at(mma, at);
  if (is_a) {
    auto [co, ci] = s[F].split(F.axis(1), 16);
    s[F].reorder({co, F.axis(0), ci});
    s[F].tensorize(F.axis(0), intrinsics::cuda_load_matrix_a_16x16(t));
    return;
  }
  auto [jo, j] = s[F].split(F.axis(1), 8);
  s[F].reorder({jo, F.axis(0), j});
  s[F].tensorize(F.axis(0), intrinsics::cuda_load_matrix_b_16x8(t));
}

// The mma stage C (M x N, "warp" scope) under loop `at` of `consumer`: 16 x 8 tiles, k in
// steps of 16, its operands' fragments loaded per step (A's only if `load_a`: else AF is
// computed in "warp" scope already).
inline void mma_stage(Schedule& s, const Tensor& C, const Tensor& AF, const Tensor& BF, DataType t, Stage consumer,
                      const IterVar& at, bool load_a = true) {
  s[C].set_scope("warp");
  s[C].compute_at(consumer, at);
  auto [ko, ki] = s[C].split(s[C].op()->reduce_axis[0], 16);
  auto [jo, ji] = s[C].split(C.axis(1), 8);
  s[C].reorder({ko, jo, C.axis(0), ji, ki});
  s[C].unroll(jo);
  s[C].tensorize(C.axis(0), intrinsics::cuda_mma_m16n8k16(t));
  if (load_a) load_fragments(s, AF, true, t, s[C], ko);
  load_fragments(s, BF, false, t, s[C], ko);
}

// D = max(A B + bias, 0) (A M x K, B K x N in t; bias and D float32): the accumulators'
// epilogue runs on the registers, each lane storing its elements of D. A block of
// `warps` warps takes 16 rows each; the fragments load straight from global memory.
// `vectorized`: D's columns in vectors of 4 (which no lane holds: the CUDA backend
// refuses it).
inline LoweredFunc mma_epilogue_func(int M, int N, int K, DataType t, const std::string& name, int warps = 2,
                                     bool vectorized = false) {
  Tensor A = placeholder({M, K}, t, "A"), B = placeholder({K, N}, t, "B"), bias = placeholder({N}, Float(32), "bias");
  Tensor C = ops::matmul(A, B, "C");
  Tensor D = compute(
      {M, N}, [&](Expr i, Expr j) { return max(C(i, j) + bias(j), 0.0f); }, "D");
  Schedule s = create_schedule({D});
  Tensor AF = s.cache_read(A, "warp", {C}), BF = s.cache_read(B, "warp", {C});
  auto [block, rows] = s[D].split(D.axis(0), 16 * warps);
  auto [warp, row] = s[D].split(rows, 16);
  s[D].bind(block, thread_axis("blockIdx.x"));
  s[D].bind(warp, thread_axis("threadIdx.y"));
  if (vectorized) s[D].vectorize(s[D].split(D.axis(1), 4).second);
  (void)row;
  mma_stage(s, C, AF, BF, t, s[D], warp);
  return lower(s, {A, B, bias, D}, name);
}

// O = max(A B, 0) E (A M x K, B K x N, E N x P in t; O float32) with the intermediate
// H = t(max(A B, 0)) in registers: the first mma's accumulators become, element by
// element, the A fragments of the second (the layouts put each element in the same lane).
// One warp per block of 16 rows.
struct BackToBackGemm {
  Tensor A, B, E, C, H, O;  // C = A B, H = t(max(C, 0)), O = H E
};
inline BackToBackGemm back_to_back_gemm(int M, int N, int K, int P, DataType t, const std::string& first) {
  BackToBackGemm g;
  g.A = placeholder({M, K}, t, "A"), g.B = placeholder({K, N}, t, "B"), g.E = placeholder({N, P}, t, "E");
  g.C = ops::matmul(g.A, g.B, first);
  const Tensor C = g.C;
  g.H = compute(
      {M, N}, [&](Expr i, Expr j) { return cast(t, max(C(i, j), 0.0f)); }, "H");
  g.O = ops::matmul(g.H, g.E, "O");
  return g;
}

inline LoweredFunc back_to_back_gemm_func(int M, int N, int K, int P, DataType t, const std::string& name) {
  auto [A, B, E, C, H, O] = back_to_back_gemm(M, N, K, P, t, "C");
  Schedule s = create_schedule({O});
  Tensor AF = s.cache_read(A, "warp", {C}), BF = s.cache_read(B, "warp", {C});
  Tensor EF = s.cache_read(E, "warp", {O});
  Tensor OF = s.cache_write(O, "warp");
  auto [block, i] = s[O].split(O.axis(0), 16);
  auto [eo, ei] = s[O].split(O.axis(1), 8);
  s[O].reorder({block, eo, i, ei});
  s[O].bind(block, thread_axis("blockIdx.x"));
  s[O].tensorize(i, intrinsics::cuda_store_16x8_f32());
  mma_stage(s, OF, H, EF, t, s[O], block, false);
  s[H].set_scope("warp");  // the A operand of O's mma, made element by element from C's accumulators
  s[H].compute_at(s[O], block);
  mma_stage(s, C, AF, BF, t, s[O], block);
  (void)ei;
  return lower(s, {A, B, E, O}, name);
}

// D = C + 1 for the first `rows` rows of C = A B (A 16 x 16, B 16 x N in t; D float32),
// D's columns split by `column_split` (0: not split). Lane nests that cover part of the
// fragments: the rows past D's end (each lane skips those it holds) and the split's tail
// (a condition inside the nest, each lane testing its own columns). One warp.
inline LoweredFunc tail_epilogue_func(int rows, int N, int column_split, DataType t, const std::string& name) {
  Tensor A = placeholder({16, 16}, t, "A"), B = placeholder({16, N}, t, "B");
  Tensor C = ops::matmul(A, B, "C");
  Tensor D = compute(
      {rows, N}, [&](Expr i, Expr j) { return C(i, j) + 1.0f; }, "D");
  Schedule s = create_schedule({D});
  Tensor AF = s.cache_read(A, "warp", {C}), BF = s.cache_read(B, "warp", {C});
  auto [block, row] = s[D].split(D.axis(0), 16, TailStrategy::GuardWholeTiles);
  s[D].bind(block, thread_axis("blockIdx.x"));
  if (column_split > 0) s[D].split(D.axis(1), column_split);
  mma_stage(s, C, AF, BF, t, s[D], block);
  (void)row;
  return lower(s, {A, B, D}, name);
}

// Y = softmax(A B) along rows (A M x K, B K x N in t; Y float32), all in registers: the
// accumulators' row max and row sum reduce across the four lanes of each row (two
// shuffles each), the exponentials stay where the accumulators are. One warp per 16 rows.
inline LoweredFunc gemm_softmax_func(int M, int N, int K, DataType t, const std::string& name) {
  Tensor A = placeholder({M, K}, t, "A"), B = placeholder({K, N}, t, "B");
  Tensor S = ops::matmul(A, B, "S");
  IterVar j1 = reduce_axis({0, N}, "j");
  Tensor m = compute(
      {M}, [&](Expr i) { return max(S(i, j1), {j1}); }, "row_max");
  Tensor p = compute(
      {M, N}, [&](Expr i, Expr j) { return exp(S(i, j) - m(i)); }, "p");
  IterVar j2 = reduce_axis({0, N}, "j");
  Tensor l = compute(
      {M}, [&](Expr i) { return sum(p(i, j2), {j2}); }, "row_sum");
  Tensor Y = compute(
      {M, N}, [&](Expr i, Expr j) { return p(i, j) / l(i); }, "Y");
  Schedule s = create_schedule({Y});
  Tensor AF = s.cache_read(A, "warp", {S}), BF = s.cache_read(B, "warp", {S});
  auto [block, i] = s[Y].split(Y.axis(0), 16);
  s[Y].bind(block, thread_axis("blockIdx.x"));
  for (const Tensor& x : {m, p, l}) {
    s[x].set_scope("warp");
    s[x].compute_at(s[Y], block);
  }
  mma_stage(s, S, AF, BF, t, s[Y], block);
  (void)i;
  return lower(s, {A, B, Y}, name);
}

// wgmma's fragments element by element (sm_90a; each thread's own sums elsewhere): lane
// nests over "warpgroup" buffers, a warpgroup per 64 rows.

// The wgmma stage S (rows x N, "warpgroup" scope) of A (rows x K, or A's own "warpgroup"
// fragment when `a_in_registers`) and B (K x N) under loop `at` of `consumer`: B's K-major
// tile (and A's, unless in registers) in swizzled shared memory, wgmma per 16 of k.
inline void wgmma_stage(Schedule& s, const Tensor& S, const Tensor& A, const Tensor& B, DataType t, Stage consumer,
                        const IterVar& at, bool a_in_registers) {
  const int n = static_cast<int>(*as_const_int(S.shape()[1]));
  const int K = static_cast<int>(*as_const_int(B.shape()[0]));
  std::vector<Tensor> tiles = {s.cache_read(B, "shared", {S}, {1, 0})};  // K-major: [N][K]
  if (!a_in_registers) tiles.push_back(s.cache_read(A, "shared", {S}));
  s[S].set_scope("warpgroup");
  s[S].compute_at(consumer, at);
  auto [kk, k16] = s[S].split(s[S].op()->reduce_axis[0], 16);
  s[S].reorder({kk, S.axis(0), S.axis(1), k16});
  s[S].unroll(kk);
  s[S].tensorize(S.axis(0),
                 a_in_registers ? intrinsics::cuda_wgmma_m64nNk16_rs(t, n) : intrinsics::cuda_wgmma_m64nNk16(t, n));
  for (const Tensor& tile : tiles) {
    s[tile].compute_at(consumer, at);
    s[tile].swizzle(K * 2);
    auto [pieces, lanes] = s[tile].split(tile.axis(1), 8);  // 16-byte chunks
    auto [pass, thread] = s[tile].split(s[tile].fuse(tile.axis(0), pieces), 128);
    s[tile].bind(thread, thread_axis("threadIdx.x"));
    s[tile].vectorize(lanes);
  }
}

// D = max(A B + bias, 0) (A M x K, B K x N, bias and D float32), a warpgroup per 64
// rows: each thread stores the elements of D it holds in C's accumulators.
inline LoweredFunc wgmma_epilogue_func(int M, int N, int K, DataType t, const std::string& name) {
  Tensor A = placeholder({M, K}, t, "A"), B = placeholder({K, N}, t, "B"), bias = placeholder({N}, Float(32), "bias");
  Tensor C = ops::matmul(A, B, "C");
  Tensor D = compute(
      {M, N}, [&](Expr i, Expr j) { return max(C(i, j) + bias(j), 0.0f); }, "D");
  Schedule s = create_schedule({D});
  auto [block, rows] = s[D].split(D.axis(0), 64);
  s[D].bind(block, thread_axis("blockIdx.x"));
  wgmma_stage(s, C, A, B, t, s[D], block, false);
  (void)rows;
  return lower(s, {A, B, bias, D}, name);
}

// Y = softmax(A B) along rows, all in registers: the row max and sum reduce across the
// four lanes of each row (two shuffles each) in every warp of the group.
inline LoweredFunc wgmma_softmax_func(int M, int N, int K, DataType t, const std::string& name) {
  Tensor A = placeholder({M, K}, t, "A"), B = placeholder({K, N}, t, "B");
  Tensor S = ops::matmul(A, B, "S");
  IterVar j1 = reduce_axis({0, N}, "j"), j2 = reduce_axis({0, N}, "j");
  Tensor m = compute(
      {M}, [&](Expr i) { return max(S(i, j1), {j1}); }, "row_max");
  Tensor p = compute(
      {M, N}, [&](Expr i, Expr j) { return exp(S(i, j) - m(i)); }, "p");
  Tensor l = compute(
      {M}, [&](Expr i) { return sum(p(i, j2), {j2}); }, "row_sum");
  Tensor Y = compute(
      {M, N}, [&](Expr i, Expr j) { return p(i, j) / l(i); }, "Y");
  Schedule s = create_schedule({Y});
  auto [block, rows] = s[Y].split(Y.axis(0), 64);
  s[Y].bind(block, thread_axis("blockIdx.x"));
  for (const Tensor& x : {m, p, l}) {
    s[x].set_scope("warpgroup");
    s[x].compute_at(s[Y], block);
  }
  wgmma_stage(s, S, A, B, t, s[Y], block, false);
  (void)rows;
  return lower(s, {A, B, Y}, name);
}

// O = max(A B, 0) E (A M x K, B K x N, E N x P): the first wgmma's accumulators become
// the second's A registers, rounded to t, each thread on the elements it holds.
inline LoweredFunc wgmma_back_to_back_func(int M, int N, int K, int P, DataType t, const std::string& name) {
  auto [A, B, E, S, H, O] = back_to_back_gemm(M, N, K, P, t, "S");
  Tensor Y = compute(
      {M, P}, [O = O](Expr i, Expr j) { return O(i, j); }, "Y");
  Schedule s = create_schedule({Y});
  auto [block, rows] = s[Y].split(Y.axis(0), 64);
  s[Y].bind(block, thread_axis("blockIdx.x"));
  s[H].set_scope("warpgroup");
  s[H].compute_at(s[Y], block);
  wgmma_stage(s, S, A, B, t, s[Y], block, false);
  wgmma_stage(s, O, H, E, t, s[Y], block, true);
  (void)rows;
  return lower(s, {A, B, E, Y}, name);
}

}  // namespace te::cuda_test
