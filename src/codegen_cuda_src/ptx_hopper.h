// Hopper's PTX (sm_90 / sm_90a) as te_ptx_* functions, as ptx_instructions.h does for
// sm_75/sm_80: warpgroup MMA (wgmma) on shared-memory matrix descriptors, TMA tensor
// copies completing on mbarriers, the mbarrier operations, the async-proxy fence, and
// setmaxnreg. te's CPU emulation replaces each (tests/cuda_emulation/hopper_emulation.h).
#pragma once
#include <string>

#include "codegen_cuda_src/helpers.h"
#include "te/export.h"

namespace te::cuda {

enum class HopperInstruction {
  WgmmaFence,              // wgmma.fence.sync.aligned (sm_90a)
  WgmmaCommitGroup,        // wgmma.commit_group.sync.aligned (sm_90a)
  WgmmaWaitGroup,          // wgmma.wait_group.sync.aligned N: template <int N> (sm_90a)
  WgmmaFenceRegisters,     // no instruction: keeps the compiler from moving accumulator accesses across
  SetmaxnregInc,           // setmaxnreg.inc.sync.aligned.u32 N: template <int N> (sm_90a)
  SetmaxnregDec,           // setmaxnreg.dec.sync.aligned.u32 N: template <int N> (sm_90a)
  FenceProxyAsync,         // fence.proxy.async.shared::cta
  MbarrierInit,            // mbarrier.init.shared::cta.b64
  MbarrierArrive,          // mbarrier.arrive.shared::cta.b64
  MbarrierArriveExpectTx,  // mbarrier.arrive.expect_tx.shared::cta.b64
  MbarrierTryWaitParity,   // mbarrier.try_wait.parity.shared::cta.b64
  TmaLoad2d,               // cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
  NamedBarrierSync,        // bar.sync id, threads: a barrier of some of the block's warps
};

// Registers the instruction's te_ptx_* function and returns its name.
TE_API std::string use_hopper_ptx(HelperSet& helpers, HopperInstruction instruction);

// wgmma.mma_async.sync.aligned.m64n<n>k16.f32.<ab>.<ab> with both operands in shared
// memory (matrix descriptors), A K-major, B K-major or (transpose_b: imm-trans-b 1)
// MN-major: `te_ptx_wgmma_m64n<n>k16_f32_<f16|bf16>[_tb](float* d, unsigned long long
// desc_a, unsigned long long desc_b, int scale_d)`, d the thread's n / 2 accumulators.
// n: a multiple of 8 in 8..256; ab: float16 or bfloat16.
TE_API std::string use_wgmma_ptx(HelperSet& helpers, DataType ab, int n, bool transpose_b = false);
// The same with A from registers (wgmma's register fragment, 4 x .b32 per thread):
// `te_ptx_wgmma_m64n<n>k16_f32_<f16|bf16>_rs[_tb](float* d, const unsigned* a, unsigned
// long long desc_b, int scale_d)`.
TE_API std::string use_wgmma_rs_ptx(HelperSet& helpers, DataType ab, int n, bool transpose_b = false);

}  // namespace te::cuda
