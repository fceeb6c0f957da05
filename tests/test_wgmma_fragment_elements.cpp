// wgmma accumulators element by element (lane nests over "warpgroup" buffers): a loop nest
// at warpgroup level that reads or writes them runs, in each of the warpgroup's 128
// threads, the elements that thread holds (warp w of the group holding rows 16 w to
// 16 w + 15 of each 64-row fragment, as a warp holds an mma.sync fragment). An epilogue
// from the accumulators straight to global memory, a row softmax over them and a GEMM
// whose intermediate becomes the next wgmma's A registers (attention's P · V) run in the
// emulation through both paths against interpret() and plain C++; nvcc builds them for
// sm_90a with no spills.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cuda_emulation/fragment_kernels.h"
#include "cuda_emulation/harness.h"
#include "cuda_emulation/reduction_kernels.h"
#include "te/ops/matmul.h"
#include "te/te.h"
#include "test_util.h"

using namespace te;
using te::cuda_test::wgmma_back_to_back_func;
using te::cuda_test::wgmma_epilogue_func;
using te::cuda_test::wgmma_softmax_func;
using te::cuda_test::wgmma_stage;

namespace {

// Element e: (7 e + seed) % 9 - 4, so every product and sum is exact in any order.
float small_integer(int e, unsigned seed) { return float(int((unsigned(e) * 7 + seed) % 9) - 4); }

NDArray small_integers(int rows, int cols, DataType t, unsigned seed) {
  NDArray a = NDArray::empty({rows, cols}, t);
  for (int i = 0; i < rows * cols; ++i) cuda_test::set_element(a, i, double(small_integer(i, seed)));
  return a;
}

std::vector<float> product(int M, int N, int K, unsigned seed_a, unsigned seed_b) {
  std::vector<float> c(size_t(M) * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float acc = 0;
      for (int k = 0; k < K; ++k) acc += small_integer(i * K + k, seed_a) * small_integer(k * N + j, seed_b);
      c[size_t(i) * N + j] = acc;
    }
  return c;
}

// "" when the emulated kernel, through both paths, gives interpret()'s arrays.
std::string emulated_difference(const LoweredFunc& f, const std::vector<NDArray>& inputs, NDArray want) {
  cuda_test::EmulatedProgram program;
  program.add(build_cuda(f));
  std::string log;
  if (!program.build(&log)) return "build failed: " + log;
  std::vector<NDArray> args = inputs;
  args.push_back(NDArray::empty(want.shape(), want.dtype()));
  cuda_test::EmulatedRun r = program.run(f.name, f, {args.begin(), args.end()});
  if (r.error != 0) return "error " + std::to_string(r.error) + ": " + r.output;
  return cuda_test::compare_arrays(want, r.arrays.back());
}

TEST(WgmmaFragmentElements, EpilogueOnTheAccumulators) {
  for (DataType t : {Float(16), BFloat(16)}) {
    SCOPED_TRACE(t.to_string());
    const int M = 128, N = 32, K = 32;
    const LoweredFunc f = wgmma_epilogue_func(M, N, K, t, "wgmma_epilogue_" + t.to_string());
    const std::string cu = build_cuda(f).source();
    EXPECT_NE(cu.find("// (the PTX ISA's wgmma fragment layouts; thread = 32 w + 4 g + t, warp w holding rows 16 w to "
                      "16 w + 15)."),
              std::string::npos)
        << cu;
    EXPECT_NE(cu.find("const int w = (int)(threadIdx.x >> 5);"), std::string::npos) << cu;
    EXPECT_NE(cu.find("const int g = (int)((threadIdx.x >> 2) & 7u);"), std::string::npos) << cu;
    EXPECT_EQ(cu.find("D_warpgroup"), std::string::npos) << cu;
    NDArray a = small_integers(M, K, t, 1), b = small_integers(K, N, t, 5);
    NDArray bias = NDArray::empty({N}, Float(32));
    for (int j = 0; j < N; ++j) cuda_test::set_element(bias, j, double(j % 5) - 2);
    std::vector<float> want = product(M, N, K, 1, 5);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) want[size_t(i) * N + j] = std::max(want[size_t(i) * N + j] + float(j % 5) - 2, 0.0f);
    NDArray out = NDArray::empty({M, N}, Float(32));
    interpret(f, {a, b, bias, out});
    EXPECT_EQ(out.to_vector<float>(), want) << "interpret() against C++";
    EXPECT_EQ(emulated_difference(f, {a, b, bias}, out), "");
  }
}

TEST(WgmmaFragmentElements, RowSoftmaxReducesAcrossEachRowsLanes) {
  const int M = 64, N = 32, K = 16;
  const LoweredFunc f = wgmma_softmax_func(M, N, K, Float(16), "wgmma_softmax");
  const std::string cu = build_cuda(f).source();
  EXPECT_NE(cu.find("__shfl_xor_sync(0xffffffffu, row_max[0], 2)"), std::string::npos) << cu;
  EXPECT_NE(cu.find("float row_sum[2];"), std::string::npos) << cu;
  NDArray a = small_integers(M, K, Float(16), 3), b = small_integers(K, N, Float(16), 4);
  const std::vector<float> s = product(M, N, K, 3, 4);
  NDArray out = NDArray::empty({M, N}, Float(32));
  interpret(f, {a, b, out});
  const std::vector<float> got = out.to_vector<float>();
  for (int i = 0; i < M; ++i) {
    double mx = -1e30, sum = 0;
    for (int j = 0; j < N; ++j) mx = std::max(mx, double(s[size_t(i) * N + j]));
    for (int j = 0; j < N; ++j) sum += std::exp(double(s[size_t(i) * N + j]) - mx);
    for (int j = 0; j < N; ++j)
      ASSERT_NEAR(got[size_t(i) * N + j], std::exp(double(s[size_t(i) * N + j]) - mx) / sum, 1e-6) << i << ", " << j;
  }
  // The lanes' parts of a row sum add in another order than interpret()'s: compare closely.
  cuda_test::EmulatedProgram program;
  program.add(build_cuda(f));
  std::string log;
  ASSERT_TRUE(program.build(&log)) << log;
  cuda_test::EmulatedRun r = program.run(f.name, f, {a, b, NDArray::empty({M, N}, Float(32))});
  ASSERT_EQ(r.error, 0) << r.output;
  const std::vector<float> emulated = r.arrays[2].to_vector<float>();
  for (size_t e = 0; e < got.size(); ++e) ASSERT_NEAR(emulated[e], got[e], 1e-6) << e;
}

TEST(WgmmaFragmentElements, BackToBackGemmKeepsTheIntermediateInRegisters) {
  for (DataType t : {Float(16), BFloat(16)}) {
    SCOPED_TRACE(t.to_string());
    const int M = 128, N = 32, K = 32, P = 16;
    const LoweredFunc f = wgmma_back_to_back_func(M, N, K, P, t, "wgmma_back_to_back_" + t.to_string());
    const std::string cu = build_cuda(f).source();
    EXPECT_EQ(cu.find("__shared__ float H"), std::string::npos) << cu;
    EXPECT_NE(cu.find("_rs(H + 0, E_shared + 0, O + 0, 64);"), std::string::npos) << cu;
    NDArray a = small_integers(M, K, t, 1), b = small_integers(K, N, t, 2), e = small_integers(N, P, t, 6);
    // max(A B, 0) is at most 16 * 32 = 512 here: float16 holds it exactly, bfloat16 rounds;
    // C++ rounds the same way.
    std::vector<float> h = product(M, N, K, 1, 2);
    for (float& x : h) {
      x = std::max(x, 0.0f);
      x = t == Float(16) ? float(half(x)) : float(bfloat16(x));
    }
    std::vector<float> want(size_t(M) * P, 0.0f);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < P; ++j) {
        double acc = 0;
        for (int k = 0; k < N; ++k) acc += double(h[size_t(i) * N + k]) * small_integer(k * P + j, 6);
        want[size_t(i) * P + j] = float(acc);
      }
    NDArray out = NDArray::empty({M, P}, Float(32));
    interpret(f, {a, b, e, out});
    EXPECT_EQ(out.to_vector<float>(), want) << "interpret() against C++";
    EXPECT_EQ(emulated_difference(f, {a, b, e}, out), "");
  }
}

TEST(WgmmaFragmentElements, NvccBuildsThemForSm90aWithoutSpills) {
  const std::string nvcc = cuda_test::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found";
  cuda_test::TempDir dir;
  for (const LoweredFunc& f : {wgmma_epilogue_func(128, 32, 32, BFloat(16), "wgmma_epilogue"),
                               wgmma_softmax_func(64, 32, 16, Float(16), "wgmma_softmax"),
                               wgmma_back_to_back_func(128, 32, 32, 16, BFloat(16), "wgmma_back_to_back")}) {
    SCOPED_TRACE(f.name);
    const std::string cu = dir.path() + "/" + f.name + ".cu";
    cuda_test::write_file(cu, build_cuda(f).source());
    cuda_test::CommandResult r = cuda_test::nvcc_compile(
        nvcc, cu, "sm_90a", "-cubin --resource-usage -Werror all-warnings", dir.path() + "/" + f.name + ".cubin");
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << r.output;
  }
}

// A step that reads an element another thread holds is refused, naming the threads.
TEST(WgmmaFragmentElements, AStepAcrossThreadsIsAnError) {
  const int M = 64, N = 32, K = 16;
  Tensor A = placeholder({M, K}, Float(16), "A"), B = placeholder({K, N}, Float(16), "B");
  Tensor C = ops::matmul(A, B, "C");
  Tensor D = compute(
      {M, N}, [&](Expr i, Expr j) { return C(i, j) + C(i, N - 1 - j); }, "D");
  Schedule s = create_schedule({D});
  auto [block, rows] = s[D].split(D.axis(0), 64);
  s[D].bind(block, thread_axis("blockIdx.x"));
  wgmma_stage(s, C, A, B, Float(16), s[D], block, false);
  (void)rows;
  const LoweredFunc f = lower(s, {A, B, D}, "across");
  expect_error([&] { build_cuda(f); },
               {"CUDA: in kernel 'across_kernel0', one step of the loop nest over warp fragments touches "
                "'C' at 0, which thread 0 holds, and 'C' at 31, which thread 3 holds"});
}

}  // namespace
