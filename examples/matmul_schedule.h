// te's CPU sgemm schedules, C = A x B (row-major float32), shared by examples/matmul.cpp
// and the benchmarks in bench/. See matmul.cpp for why the fast one is fast.
#pragma once
#include <te/te.h>

#include <algorithm>
#include <string>

namespace te_examples {

// The register tile (mr rows x nr columns of C kept in vector registers while k runs)
// and the column block nc (the packed B panels that all row tiles of A pass over).
struct SgemmParams {
  int mr = 6;     // rows of the register tile: one broadcast of A each
  int nr = 16;    // columns of the register tile: a multiple of the vector width
  int nc = 0;     // columns of C per block, a multiple of nr; 0: chosen from K and N
  int lanes = 8;  // float32 lanes of the vector registers te compiles for
};

// The register tile for the host CPU: 6 rows of 2 vectors on AVX2 (12 accumulators of the
// 16 registers), 8 rows of 2 vectors on AVX-512 (16 accumulators of the 32 registers: 2
// loads of B and 8 broadcasts of A per 16 FMAs; 6 x 64 and 4 x 64 measured the same).
// The mr rows of A a tile reads (32 KiB at K = 1024) stay in L1 while they are reused.
inline SgemmParams sgemm_params_for_host() {
  SgemmParams p;
  if (te::host_cpu_features().find("+avx512f") != std::string::npos) {
    p.mr = 8;
    p.nr = 32;
    p.lanes = 16;
  }
  return p;
}

struct Sgemm {
  te::Tensor A, B, C;
  te::Schedule schedule;
};

// The definition alone, scheduled as written: for i, for j, for k (B read down a column).
inline Sgemm sgemm_naive(int M, int N, int K) {
  using namespace te;
  Tensor A = placeholder({M, K}, Float(32), "A");
  Tensor B = placeholder({K, N}, Float(32), "B");
  IterVar k = reduce_axis({0, K}, "k");
  Tensor C = compute(
      {M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  return {A, B, C, create_schedule({C})};
}

// The fast schedule (the numbers refer to matmul.cpp's explanation):
//  1. CT, C padded to whole mr x nr tiles, is computed per tile in "local" memory with k
//     outermost, the rows unrolled and the columns vectorized: every index of the tile is a
//     constant, so LLVM keeps it in registers.
//  2. B is packed into panels PB[N / nr][K][nr] (zero-padded): each k step reads one
//     contiguous piece. A is read in place when mr divides M; otherwise it is packed into
//     zero-padded row tiles PA[M / mr][K][mr], so the padded rows read zeros, not past A.
//     (Clamping the row index instead costs a min per row that LLVM's SLP vectorizer
//     turns into vector index arithmetic and extracts inside the k loop.)
//  3. Columns run in blocks of nc; a block packs its own panels of B (compute_at) right
//     before its row tiles pass over them, while they are in L2.
//  4. The blocks are the parallel loop: each thread packs and reads its own panels.
inline Sgemm sgemm_best(int M, int N, int K, const SgemmParams& p = sgemm_params_for_host()) {
  using namespace te;
  const int mr = p.mr, nr = p.nr;
  const int row_tiles = (M + mr - 1) / mr, panels = (N + nr - 1) / nr;
  // A block's panels (K x nc floats) take at most 512 KiB, half of a 1 MiB L2, and there
  // are at least 4 blocks when N allows (2 per thread on 2 cores).
  int nc = p.nc;
  if (nc <= 0) {
    int by_cache = (1 << 17) / std::max(K, 1) / nr * nr;
    int by_threads = (N / 4) / nr * nr;
    nc = std::max(nr, std::min({512, by_cache, std::max(by_threads, nr)}));
  }
  Tensor A = placeholder({M, K}, Float(32), "A");
  Tensor B = placeholder({K, N}, Float(32), "B");
  auto zero = make_const(Float(32), 0.0);
  Tensor PB = compute(
      {panels, K, nr},
      [&](Expr x, Expr k, Expr z) {
        Expr j = x * nr + z;
        if (N % nr == 0) return B(k, j);
        return if_then_else(j < N, B(k, min(j, N - 1)), zero);
      },
      "PB");
  const bool pack_a = M % mr != 0;
  Tensor PA = compute(
      {row_tiles, K, mr},
      [&](Expr t, Expr k, Expr r) {
        Expr i = t * mr + r;
        return if_then_else(i < M, A(min(i, M - 1), k), zero);
      },
      "PA");
  IterVar k = reduce_axis({0, K}, "k");
  Tensor CT = compute(
      {row_tiles * mr, panels * nr},
      [&](Expr i, Expr j) {
        Expr a = pack_a ? PA(i / mr, k, i % mr) : A(i, k);
        return sum(a * PB(j / nr, k, j % nr), {k});
      },
      "C.tile");
  Tensor C = compute(
      {M, N}, [&](Expr i, Expr j) { return CT(i, j); }, "C");

  Schedule s = create_schedule({C});
  auto [io, jo, ii, ji] = s[C].tile(C.axis(0), C.axis(1), mr, nr);
  auto [jb, jp] = s[C].split(jo, nc / nr);  // column block, panel within it
  s[C].reorder({jb, io, jp, ii, ji});
  s[C].parallel(jb);
  s[C].vectorize(ji);  // the copy of the tile out to C
  s[CT].set_scope("local");
  s[CT].compute_at(s[C], jp);
  s[CT].reorder({CT.reduce_axis(0), CT.axis(0), CT.axis(1)});
  s[CT].unroll(CT.axis(0));
  s[CT].vectorize(CT.axis(1));
  s[PB].compute_at(s[C], jb);
  s[PB].vectorize(PB.axis(2));
  if (pack_a) s[PA].parallel(PA.axis(0));
  return {A, B, C, s};
}

}  // namespace te_examples
