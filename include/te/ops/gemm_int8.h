/// \file
/// An int8 GEMM with a tensor intrinsic (header-only): C = A * B^T with A uint8 (M x K),
/// B int8 (N x K, packed), C int32, as TVM's x86 int8 dense computes it. This header has
/// the compute (gemm_u8s8, whose GemmU8S8 holds the handles its schedule takes) and
/// pack_b_u8s8; the CPU schedule is in te/ops/gemm_int8_cpu.h.
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
      [&](Expr i, Expr j) { return sum(cast(Int(32), a(i, r)) * cast(Int(32), b(j / 16, r / 4, j % 16, r % 4)), {r}); },
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

}  // namespace te::ops

// Deprecated, kept for one release: this header still includes the CPU schedule, as it
// did when it held it. Include te/ops/gemm_int8_cpu.h for it; define TE_OPS_COMPUTE_ONLY
// to get the compute alone now.
#ifndef TE_OPS_COMPUTE_ONLY
#include "te/ops/gemm_int8_cpu.h"
#endif
