// The device functions of te's Hopper warpgroup-MMA intrinsics (intrinsics::cuda_wgmma_*):
// the accumulators are the thread's part of a warpgroup's 64 x n tile (the ISA's wgmma D
// layout); the operands are tiles of swizzled shared buffers, K-major (A; B as [N][K]) or
// MN-major (B as [K][N], in column blocks of the swizzle's width). On sm_90a the MMA
// is one wgmma.mma_async (matrix descriptors made from the shared addresses), elsewhere
// (and in the emulation's portable build) each thread sums its accumulators from shared
// memory through the same swizzle. The thread's place in its warpgroup is threadIdx.x
// (the kernel's threadIdx.x extent is 128). On sm_90a a wgmma is issued and left in
// flight: the warpgroup waits for its wgmmas before each __syncthreads() (the tiles they
// read may be refilled after it) and before storing the accumulators, so the wgmmas of a
// k tile run back to back.
#pragma once
#include <string>

#include "codegen_cuda_src/helpers.h"
#include "te/dtype.h"

namespace te::cuda {

enum class WgmmaHelper : uint8_t {
  Mma,      // c += a * b, issued: te_wgmma_m64n<n>k16_<f16|bf16>(a, b, c, a_swizzle, b_swizzle)
  MmaKn,    // c += a * b with b MN-major (K x N): te_wgmma_m64n<n>k16_<f16|bf16>_kn(a, b, c, a_swizzle,
            // b_swizzle, b_block_bytes), b's column blocks b_block_bytes apart
  MmaRs,    // c += a * b, a a register fragment: te_wgmma_m64n<n>k16_<f16|bf16>_rs(a, b, c, b_swizzle)
  MmaRsKn,  // the same, b MN-major: ..._rs_kn(a, b, c, b_swizzle, b_block_bytes)
  LoadA,    // a register fragment = a K-major shared tile: te_wgmma_load_a_<f16|bf16>(s, a, s_swizzle)
  Fill,     // c = 0: te_wgmma_fill_64x<n>(c)
  Store,    // memory = c, after the warpgroup's wgmmas complete: te_wgmma_store_64x<n>(c, d, stride)
};

// Whether h issues a wgmma.mma_async (left in flight).
inline bool is_wgmma_mma(WgmmaHelper h) {
  return h == WgmmaHelper::Mma || h == WgmmaHelper::MmaKn || h == WgmmaHelper::MmaRs || h == WgmmaHelper::MmaRsKn;
}

// Registers helper h for n output columns (and the 16-bit input type t, for Mma) and
// returns its name.
std::string use_wgmma_helper(HelperSet& helpers, WgmmaHelper h, DataType t, int n);

// Registers te_wgmma_wait_all() (the warpgroup's wgmmas complete; the kernel calls it
// before each barrier) and returns its name.
std::string use_wgmma_wait_all(HelperSet& helpers);

// Registers te_wgmma_wait_older<N>() (all but the warpgroup's newest N wgmma groups
// complete: a warp-specialized kernel's consumers then release the tiles those read)
// and returns its name.
std::string use_wgmma_wait_older(HelperSet& helpers);

}  // namespace te::cuda
