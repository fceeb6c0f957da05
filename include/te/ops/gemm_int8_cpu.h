/// \file
/// The CPU schedule of te::ops::gemm_u8s8 (te/ops/gemm_int8.h), header-only: register
/// tiles reduced by the 16 x 4 int8 dot intrinsic (x86's vpdpbusd where the CPU has VNNI).
///
///   te::ops::GemmU8S8 g = te::ops::gemm_u8s8(M, N, K);   // N % 16 == 0, K % 4 == 0
///   Schedule s = create_schedule({g.c});
///   te::ops::schedule_gemm_u8s8_cpu(s, g);              // the tensors as handles
#pragma once
#include <cstdint>
#include <string>

#include "te/ops/gemm_int8.h"
#include "te/te.h"

namespace te::ops {

/// The CPU schedule's tiles.
struct GemmU8S8CpuOptions {
  int rows = 8;           ///< rows of C per register tile (unrolled: one accumulator vector each)
  bool tensorize = true;  ///< false: the same loop nest without the intrinsic (te's own code)
  bool parallel = true;   ///< run the row tiles on te's thread pool
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
  if (o.tensorize) s[cl].tensorize(nli, o.intrinsic.defined() ? o.intrinsic : intrinsics::x86_dot_16x4_u8s8());
}

}  // namespace te::ops
