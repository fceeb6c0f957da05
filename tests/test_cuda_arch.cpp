// CudaOptions::arch (Target "cuda -arch=sm_90a"): the GPU a .cu file is for. build_cuda
// refuses a tensor intrinsic whose instructions that GPU lacks (wgmma outside sm_90a, TMA
// before sm_90, mma.sync before sm_80, ldmatrix before sm_75), naming it and what it
// needs; the file carries an #error that stops nvcc compiling it for another
// architecture; the generator passes a cuda target's arch on.
#include <gtest/gtest.h>

#include <string>

#include "cuda_emulation/harness.h"
#include "te/ops/matmul_cuda.h"
#include "te/ops/matmul_wgmma_cuda.h"
#include "te/te.h"
#include "test_util.h"

using namespace te;

namespace {

LoweredFunc wgmma_gemm(const ops::MatmulWgmmaOptions& o = {}) {
  Tensor A = placeholder({128, 128}, BFloat(16), "A"), B = placeholder({128, 128}, BFloat(16), "B");
  Tensor C = ops::matmul(A, B, "C");
  Schedule s = create_schedule({C});
  ops::schedule_matmul_wgmma_cuda(s, C, o);
  return lower(s, {A, B, C}, "gemm");
}

LoweredFunc mma_gemm() {
  Tensor A = placeholder({128, 128}, Float(16), "A"), B = placeholder({128, 128}, Float(16), "B");
  Tensor C = ops::matmul(A, B, "C");
  Schedule s = create_schedule({C});
  ops::schedule_matmul_tensorcore_cuda(s, C);
  return lower(s, {A, B, C}, "mma");
}

CudaOptions for_arch(const std::string& arch) {
  CudaOptions o;
  o.arch = arch;
  return o;
}

TEST(CudaArch, IntrinsicsTheGpuLacksAreErrors) {
  const LoweredFunc wgmma = wgmma_gemm();
  for (const char* arch : {"sm_90", "sm_100a"}) {
    const std::string message =
        "build_cuda: function 'gemm' calls tensor intrinsic 'cuda_wgmma_m64n128k16_bf16f32_kn' (wgmma.mma_async), "
        "which needs sm_90a, but the file is for " +
        std::string(arch) +
        " (CudaOptions::arch), where only its slower portable path would run: build for sm_90a or schedule without "
        "it";
    expect_error([&] { build_cuda(wgmma, for_arch(arch)); }, {message.c_str()});
  }
  // The same GEMM with the threads' copies has wgmma but no TMA; TMA alone needs sm_90.
  ops::MatmulWgmmaOptions threads;
  threads.tma = false;
  expect_error([&] { build_cuda(wgmma_gemm(threads), for_arch("sm_90")); }, {"needs sm_90a"});
  expect_error([&] { build_cuda(wgmma, for_arch("sm_80")); },
               {"calls tensor intrinsic 'cuda_tma_load_128x64_bfloat16' (TMA (cp.async.bulk.tensor)), which needs "
                "sm_90 or newer, but the file is for sm_80"});
  const std::string hopper = build_cuda(wgmma, for_arch("sm_90a")).source();
  EXPECT_NE(hopper.find("// For sm_90a (CudaOptions::arch): nvcc -arch=sm_90a.\n"
                        "#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ != 900 || !defined(__CUDA_ARCH_FEAT_SM90_ALL))\n"
                        "#error \"te generated this file for sm_90a: compile it with -arch=sm_90a\"\n#endif\n"),
            std::string::npos)
      << hopper;
  EXPECT_EQ(build_cuda(wgmma).source().find("#error"), std::string::npos);

  const LoweredFunc mma = mma_gemm();
  expect_error([&] { build_cuda(mma, for_arch("sm_75")); },
               {"calls tensor intrinsic 'cuda_mma_m16n8k16_f16f32' (mma.sync m16n8k16), which needs sm_80 or newer, "
                "but the file is for sm_75"});
  expect_error([&] { build_cuda(mma, for_arch("sm_70")); }, {"(ldmatrix), which needs sm_75 or newer"});
  for (const char* arch : {"sm_80", "sm_86", "sm_90", "sm_90a"}) build_cuda(mma, for_arch(arch));
  EXPECT_NE(build_cuda(mma, for_arch("sm_80"))
                .source()
                .find("#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 800)\n"
                      "#error \"te generated this file for sm_80 or newer: "
                      "compile it with -arch=sm_80\""),
            std::string::npos);
  expect_error([&] { build_cuda(mma, for_arch("ampere")); },
               {"build_cuda: CudaOptions::arch 'ampere' is not a CUDA architecture (sm_80, sm_90, sm_90a, ...)"});
}

TEST(CudaArch, NvccStopsAtTheGuardForAnotherArchitecture) {
  const std::string nvcc = cuda_test::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found";
  cuda_test::TempDir dir;
  const std::string cu = dir.path() + "/g.cu";
  cuda_test::write_file(cu, build_cuda(wgmma_gemm(), for_arch("sm_90a")).source());
  cuda_test::CommandResult wrong = cuda_test::nvcc_compile(nvcc, cu, "sm_90", "-cubin", dir.path() + "/w");
  EXPECT_NE(wrong.status, 0);
  EXPECT_NE(wrong.output.find("te generated this file for sm_90a: compile it with -arch=sm_90a"), std::string::npos)
      << wrong.output;
  cuda_test::CommandResult right = cuda_test::nvcc_compile(nvcc, cu, "sm_90a", "-cubin", dir.path() + "/r");
  EXPECT_EQ(right.status, 0) << right.output;
}

}  // namespace
