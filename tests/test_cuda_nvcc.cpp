// Every module the CUDA tests emit, through the real CUDA compilers when they exist:
// nvcc -std=c++17 -cubin for sm_80 and sm_90 with every warning an error, nvcc -c (the
// host launcher too, under -Wall -Wextra -Werror), and NVRTC through compile_ptx().
#include <gtest/gtest.h>

#include <cctype>

#include "cuda_emulation/harness.h"
#include "cuda_emulation/kernels.h"
#include "cuda_emulation/reduction_kernels.h"
#include "codegen_cuda_src/ptx_hopper.h"

namespace te {
namespace {

class CudaCompile : public ::testing::TestWithParam<cuda_test::TestModule> {};

// gtest names take letters, digits and '_' only.
std::string module_name(const ::testing::TestParamInfo<cuda_test::TestModule>& info) {
  std::string name = info.param.func.name;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

TEST_P(CudaCompile, NvccBuildsItWithoutWarnings) {
  std::string nvcc = cuda_test::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found (set TE_NVCC or install the CUDA toolkit)";
  CudaModule m = build_cuda(GetParam().func, GetParam().options);
  cuda_test::TempDir dir;
  std::string cu = dir.path() + "/" + m.name() + ".cu";
  cuda_test::write_file(cu, m.source());
  struct Build {
    const char* arch;
    const char* mode;
  };
  for (Build b : {Build{"sm_80", "-cubin"}, Build{"sm_90", "-cubin"}, Build{"sm_80", "-c"}}) {
    cuda_test::CommandResult r = cuda_test::nvcc_compile(nvcc, cu, b.arch, b.mode, dir.path() + "/out");
    EXPECT_EQ(r.status, 0) << "nvcc " << b.mode << " -arch=" << b.arch << " failed:\n"
                           << r.output << "\n--- source ---\n"
                           << m.source();
    EXPECT_EQ(r.output, "") << "nvcc printed diagnostics";
  }
}

TEST_P(CudaCompile, NvrtcCompilesTheKernels) {
  CudaModule m = build_cuda(GetParam().func, GetParam().options);
  if (!nvrtc_available()) {
    EXPECT_THROW(compile_ptx(m), Error);
    GTEST_SKIP() << "te was built without NVRTC (no CUDA toolkit found by CMake)";
  }
  std::string ptx = compile_ptx(m, "sm_80");
  for (const CudaKernel& k : m.kernels())
    EXPECT_NE(ptx.find(".entry " + k.name), std::string::npos) << "kernel " << k.name << " missing from the PTX";
  EXPECT_EQ(ptx.find(".entry " + m.name() + "("), std::string::npos) << "the host launcher is not device code";
}

INSTANTIATE_TEST_SUITE_P(Modules, CudaCompile, ::testing::ValuesIn(cuda_test::all_test_modules()), module_name);

// Loads from buffers a kernel only reads go through the read-only data cache (the
// parameters are `const T* __restrict__`: ld.global.nc, what __ldg gives); a buffer the
// kernel also writes is loaded normally.
TEST(CudaNvrtc, BuffersOnlyReadUseTheReadOnlyCache) {
  if (!nvrtc_available()) GTEST_SKIP() << "te was built without NVRTC";
  auto loads = [](const std::string& ptx, const std::string& kind) {
    size_t n = 0;
    for (size_t at = ptx.find(kind); at != std::string::npos; at = ptx.find(kind, at + 1)) ++n;
    return n;
  };
  std::string gemm = compile_ptx(build_cuda(cuda_test::matmul_vthread_func(37, 29, 11)), "sm_90");
  EXPECT_GT(loads(gemm, "ld.global.nc."), 0u);
  EXPECT_EQ(loads(gemm, "ld.global."), loads(gemm, "ld.global.nc.")) << gemm;
  Var n("n");
  Buffer A("A", Float(32), {n}), B("B", Float(32), {n});
  Stmt body = cuda_test::grid_1d(n, 32, [&](Expr i) { return store(B, load(B, {i}) + load(A, {i}), {i}); });
  std::string in_place = compile_ptx(
      build_cuda(LoweredFunc{"accumulate", {cuda_test::buffer_param(A), cuda_test::buffer_param(B)}, body}), "sm_90");
  EXPECT_EQ(loads(in_place, "ld.global.nc."), 1u) << in_place;  // A
  EXPECT_EQ(loads(in_place, "ld.global."), 2u) << in_place;     // A and B
}

// A cross-thread reduction within a warp is shuffles only; across warps it adds one
// barrier and a shared array of warp totals.
TEST(CudaNvrtc, CrossThreadReductionsUseWarpShuffles) {
  if (!nvrtc_available()) GTEST_SKIP() << "te was built without NVRTC";
  using Form = cuda_test::RowReduceCase::Form;
  auto count = [](const std::string& ptx, const std::string& what) {
    size_t n = 0;
    for (size_t at = ptx.find(what); at != std::string::npos; at = ptx.find(what, at + 1)) ++n;
    return n;
  };
  std::string warp =
      compile_ptx(build_cuda(cuda_test::row_reduce_func({"w", Reducer::Sum, Float(32), 32, Form::Split})), "sm_90");
  EXPECT_EQ(count(warp, "shfl.sync.down.b32"), 5u) << warp;
  EXPECT_EQ(count(warp, "bar.sync"), 0u) << warp;
  EXPECT_EQ(count(warp, ".shared"), 0u) << warp;
  std::string blocks =
      compile_ptx(build_cuda(cuda_test::row_reduce_func({"b", Reducer::Max, Float(32), 256, Form::Split})), "sm_90");
  EXPECT_EQ(count(blocks, "shfl.sync.down.b32"), 8u) << blocks;
  EXPECT_EQ(count(blocks, "bar.sync"), 1u) << blocks;
  std::string doubles =
      compile_ptx(build_cuda(cuda_test::row_reduce_func({"d", Reducer::Sum, Float(64), 32, Form::Split})), "sm_90");
  EXPECT_EQ(count(doubles, "shfl.sync.down.b32"), 10u) << doubles;  // two halves per double
}

// The reference schedules keep everything in registers: nvcc's resource usage reports no
// spills (stores or loads of local memory it had to add) for sm_90.
TEST(CudaNvcc, ReferenceSchedulesDoNotSpill) {
  std::string nvcc = cuda_test::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found";
  using Form = cuda_test::RowReduceCase::Form;
  std::vector<LoweredFunc> funcs = {
      cuda_test::softmax_op_func(4096, 1024), cuda_test::softmax_op_func(768, 256),
      cuda_test::layer_norm_op_func(768, 256), cuda_test::reduce_rows_op_func(1000, 512),
      cuda_test::row_reduce_func({"rowsum_blocks", Reducer::Sum, Float(32), 1024, Form::Split})};
  cuda_test::TempDir dir;
  for (const LoweredFunc& f : funcs) {
    std::string cu = dir.path() + "/" + f.name + ".cu";
    cuda_test::write_file(cu, build_cuda(f).source());
    cuda_test::CommandResult r =
        cuda_test::nvcc_compile(nvcc, cu, "sm_90", "-cubin --resource-usage", dir.path() + "/o");
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << f.name << ":\n"
                                                                                             << r.output;
  }
}

// Hopper's te_ptx_* forms (src/codegen_cuda_src/ptx_hopper.cpp) in one kernel that uses
// each: nvcc builds it for sm_90a without a warning or a spill, and its PTX has every
// instruction; for plain sm_90 the sm_90a forms drop out, for sm_80 all of them.
TEST(CudaNvcc, HopperPtxFormsBuildForSm90a) {
  std::string nvcc = cuda_test::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found";
  using I = cuda::HopperInstruction;
  cuda::HelperSet helpers;
  for (I i : {I::WgmmaFence, I::WgmmaCommitGroup, I::WgmmaWaitGroup, I::WgmmaFenceRegisters, I::SetmaxnregInc,
              I::SetmaxnregDec, I::FenceProxyAsync, I::MbarrierInit, I::MbarrierArrive, I::MbarrierArriveExpectTx,
              I::MbarrierTryWaitParity, I::TmaLoad2d})
    cuda::use_hopper_ptx(helpers, i);
  for (int n : {8, 64, 256}) cuda::use_wgmma_ptx(helpers, Float(16), n);
  cuda::use_wgmma_ptx(helpers, BFloat(16), 64);
  const std::string source = "#include <cuda.h>\n" + helpers.definitions() + R"(
extern "C" __global__ void __launch_bounds__(128) hopper_forms(const __grid_constant__ CUtensorMap map, float* out) {
#if TE_PTX(900)
  extern __shared__ __align__(1024) unsigned char smem[];
  unsigned long long* bar = reinterpret_cast<unsigned long long*>(smem + 16384);
  if (threadIdx.x == 0) {
    te_ptx_mbarrier_init(bar, 1);
    te_ptx_fence_proxy_async();
    te_ptx_mbarrier_arrive_expect_tx(bar, 16384);
    te_ptx_tma_load_2d(smem, &map, 0, (int)blockIdx.x * 64, bar);
  }
  __syncthreads();
  while (!te_ptx_mbarrier_try_wait_parity(bar, 0)) {
  }
#if TE_PTX_SM90A
  te_ptx_setmaxnreg_inc<232>();
  float d8[4] = {}, d64[32] = {}, e64[32] = {}, d256[128] = {};
  const unsigned long long desc =
      ((unsigned long long)__cvta_generic_to_shared(smem) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
  te_ptx_wgmma_fence_registers(d64, 32);
  te_ptx_wgmma_fence();
  te_ptx_wgmma_m64n8k16_f32_f16(d8, desc, desc, 0);
  te_ptx_wgmma_m64n64k16_f32_f16(d64, desc, desc + 2, 1);
  te_ptx_wgmma_m64n64k16_f32_bf16(e64, desc, desc, 0);
  te_ptx_wgmma_m64n256k16_f32_f16(d256, desc, desc, 0);
  te_ptx_wgmma_commit_group();
  te_ptx_wgmma_wait_group<0>();
  te_ptx_wgmma_fence_registers(d64, 32);
  te_ptx_setmaxnreg_dec<40>();
  float sum = d8[threadIdx.x % 4];
  for (int i = 0; i < 32; ++i) sum += d64[i] + e64[i];
  for (int i = 0; i < 128; ++i) sum += d256[i];
  out[blockIdx.x * 128 + threadIdx.x] = sum;
#endif
  __syncthreads();
  if (threadIdx.x == 0) te_ptx_mbarrier_arrive(bar);
#else
  (void)map;
  (void)out;
#endif
}
)";
  cuda_test::TempDir dir;
  const std::string cu = dir.path() + "/hopper_forms.cu";
  cuda_test::write_file(cu, source);
  cuda_test::CommandResult r =
      cuda_test::nvcc_compile(nvcc, cu, "sm_90a", "-cubin --resource-usage", dir.path() + "/o.cubin");
  ASSERT_EQ(r.status, 0) << r.output << "\n--- source ---\n" << source;
  EXPECT_NE(r.output.find("0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << r.output;
  for (const char* arch : {"sm_80", "sm_90"}) {
    cuda_test::CommandResult plain = cuda_test::nvcc_compile(nvcc, cu, arch, "-cubin", dir.path() + "/p.cubin");
    EXPECT_EQ(plain.status, 0) << arch << ":\n" << plain.output;
    EXPECT_EQ(plain.output, "") << arch;
  }
  cuda_test::CommandResult ptx = cuda_test::nvcc_compile(nvcc, cu, "sm_90a", "-ptx", dir.path() + "/o.ptx");
  ASSERT_EQ(ptx.status, 0) << ptx.output;
  const std::string text = cuda_test::read_file(dir.path() + "/o.ptx");
  for (const char* instruction :
       {"wgmma.fence.sync.aligned", "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned 0",
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16", "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16",
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", "setmaxnreg.inc.sync.aligned.u32 232",
        "setmaxnreg.dec.sync.aligned.u32 40", "fence.proxy.async.shared::cta", "mbarrier.init.shared::cta.b64",
        "mbarrier.arrive.expect_tx.shared::cta.b64", "mbarrier.try_wait.parity.shared::cta.b64",
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"})
    EXPECT_NE(text.find(instruction), std::string::npos) << instruction;
}

// A vectorized loop of 4 floats over dense, aligned addresses: 128-bit loads (through the
// read-only cache for buffers only read) and stores, beside the lane-by-lane fallback.
TEST(CudaNvrtc, VectorizedLoopsUse128BitAccesses) {
  if (!nvrtc_available()) GTEST_SKIP() << "te was built without NVRTC";
  std::string ptx = compile_ptx(build_cuda(cuda_test::vector_access_func(0, "v4")), "sm_90");
  EXPECT_NE(ptx.find("ld.global.nc.v4.f32"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("st.global.v4.f32"), std::string::npos) << ptx;
}

// The reference GEMM: the shared tiles fill by 16-byte cp.async copies (waited for before
// each barrier), or with CudaOptions::async_copies off from 128-bit global loads; the
// register row of B comes from 128-bit shared loads, C leaves in 128-bit stores, and the
// double-buffered k loop has one barrier per tile (two in its body, unrolled by two, plus
// none outside).
TEST(CudaNvrtc, ReferenceGemmUsesVectorAccessesAndOneBarrierPerTile) {
  if (!nvrtc_available()) GTEST_SKIP() << "te was built without NVRTC";
  const LoweredFunc f = cuda_test::matmul_reference_func(512, 512, 512, {}, "sgemm");
  std::string ptx = compile_ptx(build_cuda(f), "sm_90");
  auto count = [&](const std::string& what) {
    int n = 0;
    for (size_t at = ptx.find(what); at != std::string::npos; at = ptx.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_GE(count("cp.async.cg.shared.global"), 2) << ptx;
  EXPECT_EQ(count("cp.async.wait_all"), count("bar.sync"));
  CudaOptions sync;
  sync.async_copies = false;
  const std::string sync_ptx = compile_ptx(build_cuda(f, sync), "sm_90");
  EXPECT_EQ(sync_ptx.find("cp.async"), std::string::npos);
  EXPECT_NE(sync_ptx.find("ld.global.nc.v4.f32"), std::string::npos);
  EXPECT_GE(count("ld.shared.v4.f32"), 2) << ptx;
  EXPECT_GE(count("st.global.v4.f32"), 1) << ptx;
  EXPECT_EQ(count("bar.sync"), 2) << ptx;
}

// A transposing copy's strided stores go one by one, but its reads of a row stay one
// 128-bit load each.
TEST(CudaNvrtc, TransposingCopyReadsRowsIn128BitLoads) {
  if (!nvrtc_available()) GTEST_SKIP() << "te was built without NVRTC";
  CudaModule m = build_cuda(cuda_test::transpose_vector_read_func(0, "t4"));
  EXPECT_NE(m.source().find("const float4 te_v0 = *(const float4*)"), std::string::npos) << m.source();
  std::string ptx = compile_ptx(m, "sm_90");
  EXPECT_NE(ptx.find("ld.global.nc.v4.f32"), std::string::npos) << ptx;
  EXPECT_EQ(ptx.find("st.global.v4.f32"), std::string::npos) << ptx;
}

// float16 pairs move as one 32-bit __half2 access each.
TEST(CudaNvrtc, VectorizedHalfPairsUseHalf2Accesses) {
  if (!nvrtc_available()) GTEST_SKIP() << "te was built without NVRTC";
  std::string ptx = compile_ptx(build_cuda(cuda_test::vector_access_func(0, "h2", Float(16), 2)), "sm_90");
  EXPECT_NE(ptx.find("ld.global.nc.v2.u16"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("st.global.v2.u16"), std::string::npos) << ptx;
}

TEST(CudaNvrtc, ReportsTheCompilerLog) {
  if (!nvrtc_available()) GTEST_SKIP() << "te was built without NVRTC";
  CudaModule broken("broken", "extern \"C\" __global__ void broken_kernel() { undeclared_name = 1; }\n", {}, {}, false);
  try {
    compile_ptx(broken, "sm_80");
    FAIL() << "compile_ptx accepted invalid source";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("could not compile 'broken' for sm_80"), std::string::npos) << msg;
    EXPECT_NE(msg.find("undeclared_name"), std::string::npos) << "the log names the problem: " << msg;
  }
}

TEST(CudaNvrtc, RejectsUnknownArchitectures) {
  CudaModule m = build_cuda(cuda_test::vadd_func());
  for (const char* arch : {"80", "sm_", "gfx90a", "sm_8x0"}) {
    try {
      compile_ptx(m, arch);
      FAIL() << "accepted " << arch;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("unknown GPU architecture"), std::string::npos) << e.what();
    }
  }
  if (nvrtc_available()) {
    EXPECT_NE(compile_ptx(m, "compute_90").find(".target sm_90"), std::string::npos);
  }
}

}  // namespace
}  // namespace te
