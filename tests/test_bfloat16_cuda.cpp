// bfloat16 through the CUDA source backend: `__nv_bfloat16` from cuda_bf16.h, every
// operation computed in float and rounded back with __float2bfloat16_rn. The kernels run
// in the CPU emulation (tests/cuda_emulation/cuda_bf16.h) against interpret() bit for bit
// and against plain C++, and compile under nvcc (sm_80, sm_90) without a warning.
#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "bfloat16_util.h"
#include "cuda_emulation/harness.h"
#include "cuda_emulation/kernels.h"
#include "test_util.h"

namespace te {
namespace {

// Fuses a stage's axes and spreads them over blocks of `threads` threads; the thread axis.
IterVar bind_flat(Schedule& s, const Tensor& t, int threads) {
  std::vector<IterVar> axes;
  for (int d = 0; d < t.ndim(); ++d) axes.push_back(t.axis(d));
  IterVar fused = axes.size() == 1 ? axes[0] : s[t].fuse(axes);
  auto [bx, tx] = s[t].split(fused, threads);
  s[t].bind(bx, thread_axis("blockIdx.x"));
  s[t].bind(tx, thread_axis("threadIdx.x"));
  return tx;
}

LoweredFunc golden_ops_func() {
  bf16_test::GoldenOps g = bf16_test::golden_ops();
  Schedule s = create_schedule(g.outputs());
  for (const Tensor& t : g.outputs()) bind_flat(s, t, 64);
  return lower(s, g.args(), "bf16_golden_ops");
}

LoweredFunc conversions_func() {
  bf16_test::ConversionOps c = bf16_test::conversion_ops(32);
  Schedule s = create_schedule(c.outputs);
  for (const Tensor& t : c.outputs) bind_flat(s, t, 16);
  return lower(s, c.args(), "bf16_conversions");
}

// out[j] = bfloat16(sum over k of float(a[k, j]) * float(b[k, j])), each thread's sum
// in a local float.
LoweredFunc dot_func(int K, int N) {
  Tensor a = placeholder({K, N}, BFloat(16), "a"), b = placeholder({K, N}, BFloat(16), "b");
  IterVar k = reduce_axis({0, K}, "k");
  Tensor dot = compute(
      {N}, [&](Expr j) { return sum(cast(Float(32), a(k, j)) * cast(Float(32), b(k, j)), {k}); }, "dot");
  Tensor out = compute(
      {N}, [&](Expr j) { return cast(BFloat(16), dot(j)); }, "out");
  Schedule s = create_schedule({out});
  s[dot].compute_at(s[out], bind_flat(s, out, 32));
  return lower(s, {a, b, out}, "bf16_dot");
}

// sum[r] = the bfloat16 sum of row r (rounded every step), the threads of a block
// reducing a row together (warp shuffles of __nv_bfloat16, then shared memory).
LoweredFunc row_sum_func(int R, int C, int threads) {
  Tensor x = placeholder({R, C}, BFloat(16), "x");
  IterVar k = reduce_axis({0, C}, "k");
  Tensor sum_rows = compute(
      {R}, [&](Expr r) { return sum(x(r, k), {k}); }, "row_sum");
  Schedule s = create_schedule({sum_rows});
  auto [ko, ki] = s[sum_rows].split(k, threads);
  (void)ko;
  s[sum_rows].bind(sum_rows.axis(0), thread_axis("blockIdx.x"));
  s[sum_rows].bind(ki, thread_axis("threadIdx.x"));
  return lower(s, {x, sum_rows}, "bf16_row_sum");
}

std::vector<cuda_test::TestModule> modules() {
  return {{golden_ops_func(), {}}, {conversions_func(), {}}, {dot_func(300, 70), {}}, {row_sum_func(6, 200, 64), {}}};
}

TEST(BFloat16Cuda, SourceUsesCudaBf16) {
  CudaModule m = build_cuda(golden_ops_func());
  EXPECT_TRUE(m.uses_bfloat16());
  EXPECT_FALSE(m.uses_half());
  const std::string& src = m.source();
  EXPECT_NE(src.find("#include <cuda_bf16.h>"), std::string::npos);
  EXPECT_EQ(src.find("cuda_fp16.h"), std::string::npos);
  EXPECT_NE(src.find("const __nv_bfloat16* __restrict__ a"), std::string::npos) << src;
  EXPECT_NE(src.find("__float2bfloat16_rn(__bfloat162float(a["), std::string::npos) << src;
  EXPECT_NE(m.launcher_declaration().find("__nv_bfloat16* a"), std::string::npos);
  // float16 alone does not pull cuda_bf16.h in; both types, both headers.
  Tensor h = placeholder({8}, Float(16), "h");
  Tensor y = compute(
      {8}, [&](Expr i) { return h(i) * h(i); }, "y");
  Schedule s = create_schedule({y});
  bind_flat(s, y, 8);
  CudaModule half_only = build_cuda(lower(s, {h, y}, "half_only"));
  EXPECT_FALSE(half_only.uses_bfloat16());
  EXPECT_EQ(half_only.source().find("cuda_bf16.h"), std::string::npos);
  CudaModule both = build_cuda(conversions_func());
  EXPECT_TRUE(both.uses_bfloat16() && both.uses_half());
  EXPECT_NE(both.source().find("__double2bfloat16("), std::string::npos);  // float64 and int32 sources
}

TEST(BFloat16Cuda, LiteralsAreBits) {
  Tensor a = placeholder({8}, BFloat(16), "a");
  Tensor b = compute(
      {8}, [&](Expr i) { return a(i) * make_const(BFloat(16), 0.1); }, "b");
  Schedule s = create_schedule({b});
  bind_flat(s, b, 8);
  const std::string src = build_cuda(lower(s, {a, b}, "literal")).source();
  // 0.1 rounds to bfloat16 0x3dcd (0.10009765625) once, in te.
  EXPECT_NE(src.find("__ushort_as_bfloat16((unsigned short)0x3dcdu)"), std::string::npos) << src;
}

// ---- Emulated: every module in one program, each call against interpret() ----

class BFloat16CudaEmulation : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    program_ = std::make_unique<cuda_test::EmulatedProgram>();
    for (const cuda_test::TestModule& m : modules()) {
      funcs_.push_back(m.func);
      program_->add(build_cuda(m.func, m.options));
    }
    built_ = program_->build(&log_);
  }
  static void TearDownTestSuite() { program_.reset(); }
  void SetUp() override { ASSERT_TRUE(built_) << "the emulation program did not compile:\n" << log_; }

  // Runs module `name` in the emulation and through interpret(); expects the same arrays
  // (bfloat16 bit for bit, NaN matching NaN). Returns the emulated arrays.
  static std::vector<Argument> run_and_compare(const std::string& name, const std::vector<Argument>& args) {
    const LoweredFunc* f = nullptr;
    for (const LoweredFunc& g : funcs_)
      if (g.name == name) f = &g;
    if (!f) throw std::runtime_error("no module " + name);
    std::vector<Argument> expected;
    for (const Argument& a : args) expected.push_back(a.is_array() ? Argument(a.array().copy()) : a);
    interpret(*f, expected);
    cuda_test::EmulatedRun r = program_->run(name, *f, args);
    EXPECT_EQ(r.error, 0) << r.output;
    std::vector<Argument> out;
    if (r.arrays.size() != f->params.size()) {
      ADD_FAILURE() << "the emulation program failed:\n" << r.output;
      return out;
    }
    for (size_t j = 0; j < f->params.size(); ++j) {
      EXPECT_EQ(cuda_test::compare_arrays(expected[j].array(), r.arrays[j]), "") << name << ": " << f->params[j].name();
      out.push_back(r.arrays[j]);
    }
    return out;
  }

  static std::unique_ptr<cuda_test::EmulatedProgram> program_;
  static std::vector<LoweredFunc> funcs_;
  static bool built_;
  static std::string log_;
};
std::unique_ptr<cuda_test::EmulatedProgram> BFloat16CudaEmulation::program_;
std::vector<LoweredFunc> BFloat16CudaEmulation::funcs_;
bool BFloat16CudaEmulation::built_ = false;
std::string BFloat16CudaEmulation::log_;

TEST_F(BFloat16CudaEmulation, ArithmeticMatchesPyTorch) {
  std::vector<Argument> out = run_and_compare("bf16_golden_ops", bf16_test::golden_ops_args());
  ASSERT_EQ(out.size(), 6u);
  for (int k = 0; k < 4; ++k)
    bf16_test::expect_same_bits(bf16_test::load_golden(bf16_test::kGoldenOutputs[k]), out[2 + k].array(),
                                bf16_test::kGoldenOutputs[k]);
}

TEST_F(BFloat16CudaEmulation, ConversionsAndMathMatchPlainCpp) {
  bf16_test::ConversionOps c = bf16_test::conversion_ops(32);
  std::vector<Argument> out = run_and_compare("bf16_conversions", bf16_test::conversion_args(c));
  ASSERT_EQ(out.size(), c.args().size());
  bf16_test::expect_conversions_match_reference(out, "CUDA emulation");
}

TEST_F(BFloat16CudaEmulation, DotAccumulatesInFloat32) {
  const int K = 300, N = 70;
  NDArray a = NDArray::empty({K, N}, BFloat(16)), b = NDArray::empty({K, N}, BFloat(16));
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-2, 2);
  for (NDArray* x : {&a, &b})
    for (int64_t i = 0; i < x->size(); ++i) static_cast<bfloat16*>(x->data())[i] = bfloat16(u(rng));
  std::vector<Argument> out = run_and_compare("bf16_dot", {a, b, NDArray::empty({N}, BFloat(16))});
  ASSERT_EQ(out.size(), 3u);
  std::vector<bfloat16> av = a.to_vector<bfloat16>(), bv = b.to_vector<bfloat16>(),
                        r = out[2].array().to_vector<bfloat16>();
  for (int j = 0; j < N; ++j) {
    float acc = 0;
    for (int i = 0; i < K; ++i) acc += static_cast<float>(av[i * N + j]) * static_cast<float>(bv[i * N + j]);
    EXPECT_EQ(r[j].bits, bfloat16(acc).bits) << j;
  }
}

TEST_F(BFloat16CudaEmulation, CrossThreadRowSumShufflesBFloat16) {
  NDArray x = NDArray::empty({6, 200}, BFloat(16));
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> u(-4, 4);
  for (int64_t i = 0; i < x.size(); ++i) static_cast<bfloat16*>(x.data())[i] = bfloat16(u(rng));
  run_and_compare("bf16_row_sum", {x, NDArray::empty({6}, BFloat(16))});
}

// ---- nvcc: the real cuda_bf16.h ----

class BFloat16Nvcc : public ::testing::TestWithParam<cuda_test::TestModule> {};

TEST_P(BFloat16Nvcc, BuildsWithoutWarnings) {
  const std::string nvcc = cuda_test::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found (set TE_NVCC or install the CUDA toolkit)";
  CudaModule m = build_cuda(GetParam().func, GetParam().options);
  cuda_test::TempDir dir;
  const std::string cu = dir.path() + "/" + m.name() + ".cu";
  cuda_test::write_file(cu, m.source());
  // The device code for sm_90 with its register report, as the GPU check kit builds it.
  cuda_test::CommandResult r =
      cuda_test::run_command(nvcc + " -std=c++17 -arch=sm_90 -cubin --resource-usage -Werror all-warnings " +
                             cuda_test::quote(cu) + " -o " + cuda_test::quote(dir.path() + "/k.cubin"));
  EXPECT_EQ(r.status, 0) << r.output << "\n--- source ---\n" << m.source();
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
  // sm_80 (the first with bfloat16 arithmetic) and the host launcher under -Wall -Wextra.
  for (const char* mode : {"-cubin", "-c"}) {
    r = cuda_test::nvcc_compile(nvcc, cu, "sm_80", mode, dir.path() + "/out");
    EXPECT_EQ(r.status, 0) << "nvcc " << mode << ":\n" << r.output << "\n--- source ---\n" << m.source();
    EXPECT_EQ(r.output, "") << "nvcc printed diagnostics";
  }
}

TEST_P(BFloat16Nvcc, NvrtcCompilesTheKernels) {
  if (!nvrtc_available()) GTEST_SKIP() << "te was built without NVRTC";
  CudaModule m = build_cuda(GetParam().func, GetParam().options);
  const std::string ptx = compile_ptx(m, "sm_80");
  for (const CudaKernel& k : m.kernels()) EXPECT_NE(ptx.find(".entry " + k.name), std::string::npos) << k.name;
}

INSTANTIATE_TEST_SUITE_P(Modules, BFloat16Nvcc, ::testing::ValuesIn(modules()),
                         [](const ::testing::TestParamInfo<cuda_test::TestModule>& info) {
                           return info.param.func.name;
                         });

}  // namespace
}  // namespace te
