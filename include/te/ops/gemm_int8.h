/// \file
/// An int8 GEMM on the CPU with a tensor intrinsic (header-only): C = A * B^T with A
/// uint8 (M x K), B int8 (N x K, packed), C int32, as TVM's x86 int8 dense computes it.
///
///   te::ops::GemmU8S8 g = te::ops::gemm_u8s8(M, N, K);   // N % 16 == 0, K % 4 == 0
///   Schedule s = create_schedule({g.c});
///   te::ops::schedule_gemm_u8s8_cpu(s, g);              // vpdpbusd where the CPU has VNNI
///
/// B comes packed as [N/16, K/4, 16, 4] (te::ops::pack_b_u8s8 packs an N x K array): the
/// 64 bytes one intrinsic call reads (16 output columns x 4 reduction steps) are
/// contiguous, as vpdpbusd's register operand wants them.
#pragma once
#include <cstdint>
#include <vector>

#include "te/te.h"

namespace te::ops {

/// The int8 GEMM's tensors.
struct GemmU8S8 {
  Tensor a;         ///< uint8 [M, K]
  Tensor b_packed;  ///< int8 [N/16, K/4, 16, 4]: element (n, k) of B at [n/16, k/4, n%16, k%4]
  Tensor c;         ///< int32 [M, N]: c[m, n] = sum over k of int32(a[m, k]) * int32(b[n, k])
  IterVar k;        ///< the reduction axis
};

/// The GEMM's compute; te::Error unless N % 16 == 0 and K % 4 == 0 (the packed layout's
/// blocks). M may be symbolic.
inline GemmU8S8 gemm_u8s8(Expr M, int64_t N, int64_t K) {
  if (N <= 0 || K <= 0 || N % 16 != 0 || K % 4 != 0)
    throw Error("gemm_u8s8: N must be a positive multiple of 16 and K of 4, got N = " + std::to_string(N) +
                ", K = " + std::to_string(K));
  GemmU8S8 g;
  const int n = static_cast<int>(N), k = static_cast<int>(K);
  g.a = placeholder({M, k}, UInt(8), "A");
  g.b_packed = placeholder({n / 16, k / 4, 16, 4}, Int(8), "B_packed");
  g.k = reduce_axis({0, k}, "k");
  const Tensor& a = g.a;
  const Tensor& b = g.b_packed;
  const IterVar& r = g.k;
  g.c = compute(
      {M, n},
      [&](Expr i, Expr j) {
        return sum(cast(Int(32), a(i, r)) * cast(Int(32), b(j / 16, r / 4, j % 16, r % 4)), {r});
      },
      "C");
  return g;
}

/// B (int8, N x K, row-major) in gemm_u8s8's packed layout.
inline std::vector<int8_t> pack_b_u8s8(const int8_t* b, int64_t N, int64_t K) {
  std::vector<int8_t> out(static_cast<size_t>(N * K));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      out[static_cast<size_t>((((n / 16) * (K / 4) + k / 4) * 16 + n % 16) * 4 + k % 4)] = b[n * K + k];
  return out;
}

/// The CPU schedule's tiles.
struct GemmU8S8CpuOptions {
  int rows = 8;             ///< rows of C per register tile (unrolled: one accumulator vector each)
  bool tensorize = true;    ///< false: the same loop nest without the intrinsic (te's own code)
  bool parallel = true;     ///< run the row tiles on te's thread pool
  /// The intrinsic (intrinsics::x86_dot_16x4_u8s8() when undefined).
  TensorIntrinsic intrinsic;
};

/// C in register tiles of rows x 16 (a local accumulator, cache_write), each reducing
/// over K four at a time with the 16 x 4 dot intrinsic; the row tiles in parallel. M must
/// be a multiple of rows: te::Error here where M is a constant, from lower() otherwise (a
/// guard under the tensorized axis).
inline void schedule_gemm_u8s8_cpu(Schedule& s, const GemmU8S8& g, const GemmU8S8CpuOptions& o = {}) {
  const int64_t* m = as_const_int(g.c.shape()[0]);
  if (o.rows <= 0 || (m != nullptr && *m % o.rows != 0))
    throw Error("schedule_gemm_u8s8_cpu: M (" + (m ? std::to_string(*m) : std::string("symbolic")) +
                ") must be a multiple of rows (" + std::to_string(o.rows) +
                "): a partial row tile cannot run the intrinsic");
  Tensor cl = s.cache_write(g.c, "local");
  // The output: (row tile, column block) outside, (row, 16 columns) inside.
  auto [mo, no, mi, ni] = s[g.c].tile(g.c.axis(0), g.c.axis(1), o.rows, 16);
  s[g.c].vectorize(ni);
  s[g.c].unroll(mi);
  IterVar outer = s[g.c].fuse(mo, no);
  if (o.parallel) s[g.c].parallel(outer);
  s[cl].compute_at(s[g.c], outer);
  // The accumulator tile: for ko { for row (unrolled) { intrinsic(16 columns x 4) } }.
  const auto& ax = cl.op()->axis;
  IterVar r = cl.op()->reduce_axis[0];
  auto [ko, ki] = s[cl].split(r, 4);
  auto [nlo, nli] = s[cl].split(ax[1], 16);
  s[cl].reorder({nlo, ko, ax[0], nli, ki});
  s[cl].unroll(ax[0]);
  if (o.tensorize)
    s[cl].tensorize(nli, o.intrinsic.defined() ? o.intrinsic : intrinsics::x86_dot_16x4_u8s8());
}

}  // namespace te::ops
