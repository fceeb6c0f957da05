// int8 x int8 -> int32 dot products, sum(int32(a) * int32(b)), through interpret(), the
// LLVM JIT (serial, vectorized over the output, and a vectorized rfactor of the reduction)
// and the CUDA backend (emulated, and nvcc), each against a plain C++ loop.
#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "cuda_emulation/harness.h"
#include "test_llvm_util.h"
#include "test_util.h"

namespace te {
namespace {

constexpr int M = 7, N = 40, K = 300;

struct Matmul {
  Tensor a, b, c;
  IterVar k;
};
// c[i, j] = sum over k of int32(a[i, k]) * int32(b[k, j]).
Matmul int8_matmul() {
  Matmul m;
  m.a = placeholder({M, K}, Int(8), "a");
  m.b = placeholder({K, N}, Int(8), "b");
  m.k = reduce_axis({0, K}, "k");
  m.c = compute(
      {M, N}, [&](Expr i, Expr j) { return sum(cast(Int(32), m.a(i, m.k)) * cast(Int(32), m.b(m.k, j)), {m.k}); }, "c");
  return m;
}

// Random int8 values over the whole range, the extremes included.
NDArray int8_array(std::vector<int64_t> shape, uint32_t seed) {
  NDArray x = NDArray::empty(shape, Int(8));
  std::mt19937 rng(seed);
  auto* p = static_cast<int8_t*>(x.data());
  for (int64_t i = 0; i < x.size(); ++i) p[i] = static_cast<int8_t>(rng());
  p[0] = -128;
  p[1] = 127;
  return x;
}

std::vector<int32_t> reference(const NDArray& a, const NDArray& b) {
  const auto* pa = static_cast<const int8_t*>(a.data());
  const auto* pb = static_cast<const int8_t*>(b.data());
  std::vector<int32_t> c(M * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      int32_t acc = 0;
      for (int k = 0; k < K; ++k) acc += int32_t{pa[i * K + k]} * int32_t{pb[k * N + j]};
      c[i * N + j] = acc;
    }
  return c;
}

std::vector<Argument> matmul_args() {
  return {int8_array({M, K}, 1), int8_array({K, N}, 2), NDArray::empty({M, N}, Int(32))};
}

// Runs f through interpret() and the JIT; both must equal the C++ loop.
void expect_all_match(const LoweredFunc& f) {
  std::vector<Argument> args = matmul_args();
  const std::vector<int32_t> expected = reference(args[0].array(), args[1].array());
  std::vector<Argument> interpreted = llvm_test::copy_arguments(args);
  interpret(f, interpreted);
  EXPECT_EQ(interpreted[2].array().to_vector<int32_t>(), expected) << f.name << " interpret";
  std::vector<Argument> native = llvm_test::copy_arguments(args);
  build(f)(f.name).call(native);
  EXPECT_EQ(native[2].array().to_vector<int32_t>(), expected) << f.name << " JIT";
}

TEST(Int8Dot, Serial) {
  Matmul m = int8_matmul();
  expect_all_match(lower(create_schedule({m.c}), {m.a, m.b, m.c}, "int8_matmul"));
}

TEST(Int8Dot, VectorizedOverTheOutput) {
  Matmul m = int8_matmul();
  Schedule s = create_schedule({m.c});
  auto [jo, ji] = s[m.c].split(m.c.axis(1), 8);
  s[m.c].reorder({m.c.axis(0), jo, m.k, ji});
  s[m.c].vectorize(ji);
  s[m.c].parallel(m.c.axis(0));
  LoweredFunc f = lower(s, {m.a, m.b, m.c}, "int8_matmul_vec");
  EXPECT_NE(llvm_ir(f).find("<8 x i32>"), std::string::npos);
  expect_all_match(f);
}

TEST(Int8Dot, VectorizedReductionThroughRfactor) {
  Matmul m = int8_matmul();
  Schedule s = create_schedule({m.c});
  auto [ko, ki] = s[m.c].split(m.k, 16);
  (void)ko;
  Tensor partial = s.rfactor(m.c, ki);  // 16 partial sums per output, then their sum
  s[partial].compute_at(s[m.c], m.c.axis(1));
  s[partial].reorder({partial.op()->reduce_axis[0], partial.axis(0)});  // k.inner innermost
  s[partial].vectorize(partial.axis(0));
  LoweredFunc f = lower(s, {m.a, m.b, m.c}, "int8_matmul_rfactor");
  EXPECT_NE(llvm_ir(f).find("<16 x i32>"), std::string::npos);
  expect_all_match(f);
}

// ---- CUDA ----

LoweredFunc cuda_matmul() {
  Matmul m = int8_matmul();
  Schedule s = create_schedule({m.c});
  s[m.c].bind(m.c.axis(0), thread_axis("blockIdx.x"));
  s[m.c].bind(m.c.axis(1), thread_axis("threadIdx.x"));
  return lower(s, {m.a, m.b, m.c}, "int8_matmul_cuda");
}

TEST(Int8Dot, CudaEmulationMatchesInterpretAndCpp) {
  LoweredFunc f = cuda_matmul();
  cuda_test::EmulatedProgram program;
  program.add(build_cuda(f));
  std::string log;
  ASSERT_TRUE(program.build(&log)) << log;
  std::vector<Argument> args = matmul_args();
  cuda_test::EmulatedRun r = program.run(f.name, f, args);
  ASSERT_EQ(r.error, 0) << r.output;
  ASSERT_EQ(r.arrays.size(), 3u) << r.output;
  EXPECT_EQ(r.arrays[2].to_vector<int32_t>(), reference(args[0].array(), args[1].array()));
  std::vector<Argument> interpreted = llvm_test::copy_arguments(args);
  interpret(f, interpreted);
  EXPECT_EQ(cuda_test::compare_arrays(interpreted[2].array(), r.arrays[2]), "");
}

TEST(Int8Dot, NvccBuildsTheCudaKernel) {
  const std::string nvcc = cuda_test::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found";
  CudaModule m = build_cuda(cuda_matmul());
  cuda_test::TempDir dir;
  const std::string cu = dir.path() + "/int8.cu";
  cuda_test::write_file(cu, m.source());
  cuda_test::CommandResult r = cuda_test::nvcc_compile(nvcc, cu, "sm_90", "-cubin", dir.path() + "/k.cubin");
  EXPECT_EQ(r.status, 0) << r.output << "\n" << m.source();
  EXPECT_EQ(r.output, "");
}

}  // namespace
}  // namespace te
