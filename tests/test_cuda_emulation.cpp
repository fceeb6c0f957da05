// The CUDA backend's output, run on the CPU: every module below is compiled once by the
// host C++ compiler against tests/cuda_emulation/cuda_emulation.h (each GPU thread a real
// thread, __shared__ shared by the block, __syncthreads() a barrier) and each launcher
// call is compared, bit for bit, with interpret() on the same loop IR.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "cuda_emulation/harness.h"
#include "cuda_emulation/kernels.h"

namespace te {
namespace {

using cuda_test::EmulatedProgram;
using cuda_test::EmulatedRun;

class CudaEmulation : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    program_ = std::make_unique<EmulatedProgram>();
    try {
      for (const cuda_test::TestModule& c : cuda_test::all_test_modules()) {
        CudaModule m = build_cuda(c.func, c.options);
        funcs_.emplace_back(m.name(), c.func);
        program_->add(m);
      }
    } catch (const Error& e) {
      log_ = std::string("build_cuda failed: ") + e.what();
      return;
    }
    built_ = program_->build(&log_);
  }
  static void TearDownTestSuite() {
    program_.reset();
    funcs_.clear();
  }

  void SetUp() override { ASSERT_TRUE(built_) << "the emulation program did not compile:\n" << log_; }

  // The function whose module (launcher) has this name.
  static const LoweredFunc& func(const std::string& name) {
    for (const auto& [module, f] : funcs_)
      if (module == name) return f;
    throw std::runtime_error("no case " + name);
  }

  // Runs `name` through interpret() and through the emulated CUDA code on copies of args
  // and expects every array to come out the same.
  static EmulatedRun run_and_compare(const std::string& name, const std::vector<Argument>& args) {
    const LoweredFunc& f = func(name);
    std::vector<Argument> expected;
    for (const Argument& a : args) expected.push_back(a.is_array() ? Argument(a.array().copy()) : a);
    interpret(f, expected);
    EmulatedRun r = program_->run(name, f, args);
    EXPECT_EQ(r.error, 0) << r.output;
    if (r.arrays.size() != f.params.size()) {
      ADD_FAILURE() << "the emulation program failed:\n" << r.output;
      return r;
    }
    for (size_t j = 0; j < f.params.size(); ++j) {
      if (!f.params[j].is_buffer()) continue;
      EXPECT_EQ(cuda_test::compare_arrays(expected[j].array(), r.arrays[j]), "")
          << name << ": parameter " << f.params[j].name();
    }
    return r;
  }

  static std::unique_ptr<EmulatedProgram> program_;
  static std::vector<std::pair<std::string, LoweredFunc>> funcs_;
  static bool built_;
  static std::string log_;
};

std::unique_ptr<EmulatedProgram> CudaEmulation::program_;
std::vector<std::pair<std::string, LoweredFunc>> CudaEmulation::funcs_;
bool CudaEmulation::built_ = false;
std::string CudaEmulation::log_;

std::vector<float> ramp_values(int64_t n, float scale, float offset) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = std::sin(static_cast<float>(i) * scale) * 10.0f + offset;
  return v;
}

NDArray floats(int64_t n, float scale, float offset) {
  return NDArray::from_vector(ramp_values(n, scale, offset), {n});
}

TEST_F(CudaEmulation, VectorAddUnevenSizes) {
  for (int64_t n : {1000, 1, 63, 64, 65, 130}) {
    EmulatedRun r =
        run_and_compare("vadd", {floats(n, 0.1f, 1.0f), floats(n, 0.7f, -2.0f), NDArray::empty({n}, Float(32))});
    ASSERT_EQ(r.launches.size(), 1u);
    EXPECT_EQ(r.launches[0][0], static_cast<unsigned>((n + 63) / 64)) << "grid for n = " << n;
    EXPECT_EQ(r.launches[0][3], 64u);
  }
}

TEST_F(CudaEmulation, EmptyGridIsNotLaunched) {
  EmulatedRun r = run_and_compare("vadd", {floats(0, 1, 0), floats(0, 1, 0), NDArray::empty({0}, Float(32))});
  EXPECT_TRUE(r.launches.empty());
}

TEST_F(CudaEmulation, SixtyFourBitIndexingGivesTheSameResults) {
  run_and_compare("vadd64", {floats(777, 0.3f, 0.5f), floats(777, 0.2f, 0.0f), NDArray::empty({777}, Float(32))});
}

TEST_F(CudaEmulation, MatmulTiledThroughSharedMemory) {
  NDArray a = NDArray::from_vector(ramp_values(20 * 17, 0.37f, 0.25f), {20, 17});
  NDArray b = NDArray::from_vector(ramp_values(17 * 13, 0.11f, -0.5f), {17, 13});
  EmulatedRun r = run_and_compare("matmul_shared", {a, b, NDArray::empty({20, 13}, Float(32))});
  ASSERT_EQ(r.launches.size(), 1u);
  EXPECT_EQ(r.launches[0], (std::array<unsigned, 6>{2, 3, 1, 8, 8, 1}));
}

TEST_F(CudaEmulation, MatmulWithVirtualThreads) {
  const int M = 37, N = 29, K = 11;
  auto av = ramp_values(M * K, 0.37f, 0.25f), bv = ramp_values(K * N, 0.11f, -0.5f);
  EmulatedRun r = run_and_compare("matmul_vthread", {NDArray::from_vector(av, {M, K}), NDArray::from_vector(bv, {K, N}),
                                                     NDArray::empty({M, N}, Float(32))});
  ASSERT_EQ(r.launches.size(), 1u);
  EXPECT_EQ(r.launches[0], (std::array<unsigned, 6>{2, 3, 1, 4, 4, 1}));  // 4 x 4 threads: vthreads are not threads
  ASSERT_EQ(r.arrays.size(), 3u);
  auto got = r.arrays[2].to_vector<float>();
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float want = 0;
      for (int q = 0; q < K; ++q) want += av[size_t(i * K + q)] * bv[size_t(q * N + j)];
      EXPECT_NEAR(got[size_t(i * N + j)], want, 1e-3f * (1 + std::fabs(want))) << i << "," << j;
    }
}

// te::ops::schedule_matmul_cuda: double-buffered shared tiles, vthreads, vector loads;
// whole tiles, tiles cut at every edge (M, N, K not multiples; an odd number of k tiles),
// and the default 128 x 128 tiles with 256 threads.
TEST_F(CudaEmulation, ReferenceGemmSchedule) {
  struct Case {
    const char* name;
    int M, N, K;
    std::array<unsigned, 6> launch;
  };
  for (const Case& c : {Case{"matmul_tiled", 64, 96, 48, {3, 2, 1, 8, 8, 1}},
                        Case{"matmul_tiled_edges", 50, 40, 20, {2, 2, 1, 8, 8, 1}},
                        Case{"matmul_tiled_default", 256, 128, 32, {1, 2, 1, 16, 16, 1}}}) {
    auto av = ramp_values(c.M * c.K, 0.37f, 0.25f), bv = ramp_values(c.K * c.N, 0.11f, -0.5f);
    EmulatedRun r = run_and_compare(c.name, {NDArray::from_vector(av, {c.M, c.K}), NDArray::from_vector(bv, {c.K, c.N}),
                                             NDArray::empty({c.M, c.N}, Float(32))});
    ASSERT_EQ(r.launches.size(), 1u) << c.name;
    EXPECT_EQ(r.launches[0], c.launch) << c.name;
    ASSERT_EQ(r.arrays.size(), 3u);
    auto got = r.arrays[2].to_vector<float>();
    for (int i = 0; i < c.M; ++i)
      for (int j = 0; j < c.N; ++j) {
        float want = 0;
        for (int q = 0; q < c.K; ++q) want += av[size_t(i * c.K + q)] * bv[size_t(q * c.N + j)];
        ASSERT_NEAR(got[size_t(i * c.N + j)], want, 1e-3f * (1 + std::fabs(want))) << c.name << " " << i << "," << j;
      }
  }
}

TEST_F(CudaEmulation, TransposeThroughAPaddedSharedTile) {
  const int M = 45, N = 70;
  auto av = ramp_values(M * N, 0.21f, 0.5f);
  EmulatedRun r =
      run_and_compare("transpose_shared", {NDArray::from_vector(av, {M, N}), NDArray::empty({N, M}, Float(32))});
  ASSERT_EQ(r.launches.size(), 1u);
  EXPECT_EQ(r.launches[0], (std::array<unsigned, 6>{2, 3, 1, 32, 8, 1}));
  ASSERT_EQ(r.arrays.size(), 2u);
  auto got = r.arrays[1].to_vector<float>();
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < M; ++j) ASSERT_EQ(got[size_t(i * M + j)], av[size_t(j * N + i)]) << i << "," << j;
}

TEST_F(CudaEmulation, RowReductionWithSharedTree) {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{5, 100}, {3, 7}, {1, 64}}) {
    NDArray a = NDArray::from_vector(ramp_values(rows * cols, 0.5f, 0.125f), {rows, cols});
    run_and_compare("row_sum", {a, NDArray::empty({rows}, Float(32))});
  }
}

// Reduction axes bound to threadIdx: warp shuffles, shared memory across warps and the
// shared-memory tree, bit for bit as interpret() computes them (same order of operations).
TEST_F(CudaEmulation, CrossThreadReductions) {
  for (const cuda_test::RowReduceCase& c : cuda_test::emulated_row_reduce_cases()) {
    const bool whole = c.form == cuda_test::RowReduceCase::Form::Whole;
    for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{4, 300}, {3, c.threads}, {2, 5}}) {
      if (whole && cols != c.threads) continue;
      NDArray a = cuda_test::row_reduce_input(c.dtype, c.reducer, rows, cols, 7);
      NDArray b = NDArray::empty({rows}, c.dtype);
      SCOPED_TRACE(c.name + " " + std::to_string(rows) + "x" + std::to_string(cols));
      run_and_compare(c.name, {a, b});
    }
  }
}

// Tuple reductions across threads (two or three values per thread through the shuffles
// and the shared memory), bit for bit as interpret() computes them.
TEST_F(CudaEmulation, TupleReductionsAcrossThreads) {
  for (const cuda_test::ArgRowsCase& c : cuda_test::emulated_arg_rows_cases())
    for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{5, 300}, {4, c.threads}, {4, 7}}) {
      SCOPED_TRACE(c.name + " " + std::to_string(rows) + "x" + std::to_string(cols));
      run_and_compare(c.name, {cuda_test::arg_rows_input(c.dtype, rows, cols, 5), NDArray::empty({rows}, Int(32)),
                               NDArray::empty({rows}, c.dtype)});
    }
  for (int64_t cols : {1000, 3}) {
    const int64_t rows = 3;
    NDArray x = NDArray::from_vector(ramp_values(rows * cols, 0.37f, -20.0f), {rows, cols});
    run_and_compare("argmax_rows_op", {x, NDArray::empty({rows}, Int(32)), NDArray::empty({rows}, Float(32))});
    run_and_compare("welford_rows", {x, NDArray::empty({rows}, Float(32)), NDArray::empty({rows}, Float(32)),
                                     NDArray::empty({rows}, Float(32))});
  }
  const int64_t rows = 3;
  run_and_compare("layer_norm_welford768",
                  {NDArray::from_vector(ramp_values(rows * 768, 0.11f, 1.0f), {rows, 768}),
                   NDArray::from_vector(ramp_values(768, 0.01f, 1.0f), {768}),
                   NDArray::from_vector(ramp_values(768, 0.02f, 0.0f), {768}), NDArray::empty({rows, 768}, Float(32))});
}

TEST_F(CudaEmulation, SoftmaxRowsTwoReductionsInOneKernel) {
  for (const char* name : {"softmax_rows", "softmax_rows_fast"})
    for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{3, 300}, {2, 96}, {1, 5}}) {
      SCOPED_TRACE(std::string(name) + " " + std::to_string(cols));
      run_and_compare(name, {NDArray::from_vector(ramp_values(rows * cols, 0.37f, 0.0f), {rows, cols}),
                             NDArray::empty({rows, cols}, Float(32))});
    }
}

// te::ops' reference schedules (rows cached in shared memory, two cross-thread reductions).
TEST_F(CudaEmulation, SoftmaxLayerNormAndRowSumOps) {
  for (int64_t rows : {1, 3}) {
    SCOPED_TRACE(rows);
    run_and_compare("softmax_op768", {NDArray::from_vector(ramp_values(rows * 768, 0.11f, 1.0f), {rows, 768}),
                                      NDArray::empty({rows, 768}, Float(32))});
    run_and_compare("layer_norm_op768",
                    {NDArray::from_vector(ramp_values(rows * 768, 0.13f, 5.0f), {rows, 768}), floats(768, 0.3f, 1.0f),
                     floats(768, 0.7f, 0.0f), NDArray::empty({rows, 768}, Float(32))});
    run_and_compare("reduce_rows_op1000", {NDArray::from_vector(ramp_values(rows * 1000, 0.05f, 0.5f), {rows, 1000}),
                                           NDArray::empty({rows}, Float(32))});
  }
}

// grid_sample with channel groups over threads: the emulation as interpret(), and both as
// the compute under its default schedule (one loop nest, no threads).
// A scatter-add's threads meet on the same elements: atomicAdd, equal to interpret().
TEST_F(CudaEmulation, ScatterAddIsAtomicAcrossThreads) {
  std::vector<int32_t> idx(1000);
  std::vector<float> x(1000);
  for (size_t i = 0; i < idx.size(); ++i) {
    idx[i] = static_cast<int32_t>((i * 13) % 37);
    x[i] = static_cast<float>(static_cast<int>(i % 9) - 4);
  }
  EmulatedRun r = run_and_compare("scatter_add", {NDArray::from_vector(idx, {1000}), NDArray::from_vector(x, {1000}),
                                                  NDArray::empty({37}, Float(32))});
  std::vector<float> want(37, 0.0f);
  for (size_t i = 0; i < idx.size(); ++i) want[static_cast<size_t>(idx[i])] += x[i];
  ASSERT_EQ(r.arrays.size(), 3u);
  EXPECT_EQ(r.arrays[2].to_vector<float>(), want);
  EXPECT_NE(build_cuda(func("scatter_add")).source().find("atomicAdd(&hist["), std::string::npos)
      << build_cuda(func("scatter_add")).source();
}

// grid_sample's backward: with align_corners on a 5 x 6 image, grid values that are
// multiples of 1/8 put every coordinate on a quarter pixel, so with small integer data and
// gradients every sum is exact in any order: the atomicAdd schedule equals interpret()
// bit for bit too; the deterministic one would in any case.
TEST_F(CudaEmulation, GridSampleBackwardScatterAddsLikeInterpret) {
  std::vector<float> data(2 * 3 * 5 * 6), grid(2 * 4 * 3 * 2), head(2 * 3 * 4 * 3);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  for (size_t i = 0; i < grid.size(); ++i) grid[i] = static_cast<float>(static_cast<int>((i * 5) % 19) - 9) / 8.0f;
  for (size_t i = 0; i < head.size(); ++i) head[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
  for (const char* name : {"grid_sample_backward", "grid_sample_backward_det"}) {
    SCOPED_TRACE(name);
    EmulatedRun r =
        run_and_compare(name, {NDArray::from_vector(data, {2, 3, 5, 6}), NDArray::from_vector(grid, {2, 4, 3, 2}),
                               NDArray::from_vector(head, {2, 3, 4, 3}), NDArray::empty({2, 3, 5, 6}, Float(32)),
                               NDArray::empty({2, 4, 3, 2}, Float(32))});
    const std::string cu = build_cuda(func(name)).source();
    EXPECT_EQ(cu.find("atomicAdd") != std::string::npos, std::string(name) == "grid_sample_backward") << cu;
  }
}

TEST_F(CudaEmulation, GridSampleWithChannelsSplitOverThreads) {
  for (auto [name, channels] :
       std::vector<std::pair<std::string, int>>{{"grid_sample_c80", 80}, {"grid_sample_c5_by2", 5}}) {
    SCOPED_TRACE(name);
    NDArray data = NDArray::from_vector(ramp_values(2 * channels * 9 * 11, 0.3f, 0.0f), {2, channels, 9, 11});
    std::vector<float> g = ramp_values(2 * 7 * 5 * 2, 0.71f, 0.0f);
    for (float& v : g) v *= 0.12f;  // inside and a little outside [-1, 1]
    NDArray grid = NDArray::from_vector(g, {2, 7, 5, 2});
    EmulatedRun r = run_and_compare(name, {data, grid, NDArray::empty({2, channels, 7, 5}, Float(32))});
    ASSERT_EQ(r.launches.size(), 1u);
    const unsigned groups = 3;  // 80 channels by 32, 5 by 2
    EXPECT_EQ(r.launches[0][0], (2 * groups * 7 * 5 + 63) / 64);
    Tensor d, gr;
    Tensor out = cuda_test::grid_sample_output(&d, &gr, channels);
    NDArray want = NDArray::empty({2, channels, 7, 5}, Float(32));
    interpret(lower(create_schedule({out}), {d, gr, out}, "gs_ref"), {data, grid, want});
    ASSERT_EQ(r.arrays.size(), 3u);
    EXPECT_EQ(cuda_test::compare_arrays(want, r.arrays[2]), "");
  }
}

// float4 loads and stores where the addresses are aligned, the lane loop elsewhere: same
// results either way.
TEST_F(CudaEmulation, VectorLoadsAndStoresWithTheirScalarFallback) {
  for (auto [name, offset] :
       std::vector<std::pair<std::string, int>>{{"vector_access", 0}, {"vector_access_offset", 1}})
    for (int64_t n : {1000, 1001, 3, 256}) {
      SCOPED_TRACE(name + " " + std::to_string(n));
      run_and_compare(name, {floats(n, 0.1f, 1.0f), floats(n + offset, 0.3f, 0.0f), NDArray::empty({n}, Float(32))});
    }
}

// The same with float16 pairs: __half2 loads and stores.
TEST_F(CudaEmulation, Half2VectorAccessesWithTheirScalarFallback) {
  auto halves = [](int64_t n, float scale) {
    std::vector<half> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(half(std::sin(static_cast<float>(i) * scale) * 8.0f));
    return NDArray::from_vector(v, {n});
  };
  for (auto [name, offset] :
       std::vector<std::pair<std::string, int>>{{"vector_access_half2", 0}, {"vector_access_half2_offset", 1}})
    for (int64_t n : {1000, 1001, 3, 256}) {
      SCOPED_TRACE(name + " " + std::to_string(n));
      run_and_compare(name, {halves(n, 0.1f), halves(n + offset, 0.3f), NDArray::empty({n}, Float(16))});
    }
}

// A transposing copy reads float4s where they are aligned, element by element elsewhere:
// the same results either way (the fused loop's tail included).
TEST_F(CudaEmulation, TransposingCopyReadsVectorsWithTheirScalarFallback) {
  for (auto [name, offset] :
       std::vector<std::pair<std::string, int>>{{"transpose_vector_read", 0}, {"transpose_vector_read_offset", 1}})
    for (int64_t n : {1, 37, 64, 200}) {
      SCOPED_TRACE(name + " " + std::to_string(n));
      run_and_compare(name, {NDArray::from_vector(ramp_values(n * (12 + offset), 0.1f, 1.0f), {n, 12 + offset}),
                             NDArray::empty({12, n}, Float(32))});
    }
}

TEST_F(CudaEmulation, PipelineOfTwoKernelsThroughScratchMemory) {
  EmulatedRun r = run_and_compare("pipeline", {floats(100, 0.05f, 0.0f), NDArray::empty({100}, Float(32))});
  ASSERT_EQ(r.launches.size(), 2u);
  EXPECT_EQ(r.launches[0][0], 4u);  // 32 threads per block
  EXPECT_EQ(r.launches[1][0], 7u);  // 16 threads per block
  EXPECT_EQ(r.live_allocations, 0) << "the scratch buffer is freed";
}

TEST_F(CudaEmulation, Float16) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a = {0.1f, -2.5f, 1e-6f, 6e-5f,    65504.f, 65520.f, 70000.f, -70000.f, inf,     -inf,
                          nan,  0.0f,  -0.0f, 3.14159f, 100.25f, -127.9f, 1000.5f, 2049.0f,  2051.0f, 1e-8f};
  std::vector<half> b;
  for (size_t i = 0; i < a.size(); ++i) b.push_back(half(static_cast<float>(i) * 0.37f - 3.0f));
  for (int k = 0; k < 200; ++k) {  // a sweep over the half range, subnormals included
    a.push_back(std::ldexp(1.0f + static_cast<float>(k % 7) * 0.1234567f, k / 5 - 26) * (k % 2 ? -1.0f : 1.0f));
    b.push_back(half(std::ldexp(1.0f + static_cast<float>(k % 5) * 0.3f, (k * 7) % 30 - 15)));
  }
  int64_t n = static_cast<int64_t>(a.size());
  std::vector<Argument> args = {NDArray::from_vector(a, {n}), NDArray::from_vector(b, {n})};
  for (DataType t : {Float(16), Float(16), Float(16), Float(32), Int(8), Float(16), Float(16)})
    args.push_back(NDArray::empty({n}, t));
  run_and_compare("half_ops", args);
}

std::vector<Argument> int_semantics_args() {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<int32_t> x = {7, -7, 7, -7, INT32_MIN, INT32_MIN, 0, 5, -1, 100, 255, -128, 30000, -30000, 123456, 9};
  std::vector<int32_t> y = {2, 2, -2, -2, -1, 1, 3, 0, 0, -3, 200, 127, 3, -7, 0, -1};
  std::vector<float> f = {nan,     inf,    -inf, 3e9f,  -3e9f,  255.9f,  -0.5f,    1e20f,
                          -129.7f, 127.5f, 2.5f, -2.5f, 4.2e9f, -1e-30f, 65535.7f, 0.0f};
  std::vector<double> g = {std::nan(""), 5e9,  -5e9,    4294967295.9, 32767.99, -32768.5,  1.8446744073709552e19,
                           -1.0,         2e19, 40000.0, -40000.0,     0.999,    12345.678, -0.0,
                           1e300,        7.0};
  int64_t n = static_cast<int64_t>(x.size());
  std::vector<Argument> args = {NDArray::from_vector(x, {n}), NDArray::from_vector(y, {n}),
                                NDArray::from_vector(f, {n}), NDArray::from_vector(g, {n})};
  const LoweredFunc& fn = cuda_test::int_semantics_func();
  for (size_t k = 4; k < fn.params.size(); ++k) args.push_back(NDArray::empty({n}, fn.params[k].buffer.dtype()));
  return args;
}

TEST_F(CudaEmulation, IntegerSemanticsAndSaturatingCasts) { run_and_compare("int_semantics", int_semantics_args()); }

TEST_F(CudaEmulation, IntegerSemanticsIn64BitIndexMode) { run_and_compare("int_semantics64", int_semantics_args()); }

TEST_F(CudaEmulation, FloatSemantics) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> f = {5.5f, -5.5f, 5.5f, -5.5f, 0.5f, 1.5f,  2.5f,   -2.5f,
                          nan,  1.0f,  0.0f, -0.0f, 3.0f, 1e30f, -7.25f, 2.0f};
  std::vector<float> g = {2.0f, 2.0f, -2.0f, -2.0f, nan,  0.0f, 3.0f, inf,
                          1.0f, nan,  2.0f,  -1.0f, 0.7f, 3.0f, 1.5f, -0.5f};
  std::vector<double> d;
  for (float v : f) d.push_back(static_cast<double>(v) * 1.000000001);
  int64_t n = static_cast<int64_t>(f.size());
  std::vector<Argument> args = {NDArray::from_vector(f, {n}), NDArray::from_vector(g, {n}),
                                NDArray::from_vector(d, {n})};
  const LoweredFunc& fn = func("float_semantics");
  for (size_t k = 3; k < fn.params.size(); ++k) args.push_back(NDArray::empty({n}, fn.params[k].buffer.dtype()));
  run_and_compare("float_semantics", args);
}

// Every function of the math library in float32, float64 and float16 (rounded once), and
// isnan/isinf/isfinite, as interpret() computes them (the emulation's libm is glibc's, as
// interpret()'s; a GPU's functions differ within CUDA's documented ulp bounds).
TEST_F(CudaEmulation, MathLibrary) {
  for (const char* name : {"math_library", "math_library_fast"})
    for (int64_t n : {40, 97}) run_and_compare(name, cuda_test::math_library_args(n, func(name)));
}

// & | ^ ~ << >> popcount on int8 ... uint64, with shift amounts negative, in range and
// beyond the width (te's defined results), in 32- and 64-bit index modes.
TEST_F(CudaEmulation, BitwiseOperators) {
  for (const char* name : {"bitwise", "bitwise64"})
    for (int64_t n : {64, 211}) run_and_compare(name, cuda_test::bitwise_args(n, static_cast<uint64_t>(n)));
}

// call_extern: the kernels call the __device__ functions of the header given in
// CudaOptions::extern_headers; interpret() runs the same functions compiled for the host.
TEST_F(CudaEmulation, ExternCallsRunTheHeadersDeviceFunctions) {
  cuda_test::register_extern_device_functions();
  for (const char* name : {"extern_calls", "extern_calls64"}) {
    for (int64_t n : {37, 64}) {
      std::vector<float> x;
      std::vector<int32_t> a, b;
      std::vector<double> d;
      for (int64_t k = 0; k < n; ++k) {
        x.push_back(0.37f * static_cast<float>(k) - 5.0f);
        a.push_back(static_cast<int32_t>(k * k * 7 - 400));
        b.push_back(static_cast<int32_t>(300 - 11 * k));
        d.push_back(0.05 * static_cast<double>(k) - 0.5);
      }
      a[0] = std::numeric_limits<int32_t>::min();  // |MIN - b| wraps, as C's unsigned arithmetic does
      EmulatedRun r = run_and_compare(
          name, {NDArray::from_vector(x, {n}), NDArray::from_vector(a, {n}), NDArray::from_vector(b, {n}),
                 NDArray::from_vector(d, {n}), NDArray::empty({n}, Float(32)), NDArray::empty({n}, Int(32)),
                 NDArray::empty({n}, Bool()), NDArray::empty({n}, Int(8)), NDArray::empty({n}, Float(32)), 0.125f});
      if (r.arrays.size() != 10) continue;
      // And against plain C++.
      std::vector<float> y = r.arrays[4].to_vector<float>();
      std::vector<int8_t> c = r.arrays[7].to_vector<int8_t>();
      for (int64_t k = 0; k < n; ++k) {
        EXPECT_EQ(y[k], x[k] > 0 ? x[k] : 0.125f * x[k]) << k;
        EXPECT_EQ(c[k], static_cast<int8_t>(std::clamp(a[k], -128, 127))) << k;
      }
    }
  }
  for (int64_t n : {128, 70}) {
    std::vector<float> x;
    for (int64_t k = 0; k < n; ++k) x.push_back(static_cast<float>(k % 9) - 4.5f);
    run_and_compare("extern_vector", {NDArray::from_vector(x, {n}), NDArray::empty({n}, Float(32))});
  }
}

TEST_F(CudaEmulation, VectorStoresLetsAndScalarParameters) {
  for (int64_t n : {64, 50, 3}) {
    run_and_compare("vector_let",
                    {floats(n, 0.9f, 0.5f), NDArray::empty({n}, Float(32)), NDArray::empty({n}, Float(32)), 1.5f});
  }
}

TEST_F(CudaEmulation, TwoDimensionalGridAndThreeDimensionalBlock) {
  EmulatedRun r = run_and_compare("grid_2d", {NDArray::empty({9, 21}, Int(32))});
  ASSERT_EQ(r.launches.size(), 1u);
  EXPECT_EQ(r.launches[0], (std::array<unsigned, 6>{3, 3, 1, 8, 2, 2}));
}

TEST_F(CudaEmulation, HostLetsLoopsAndAsserts) {
  EmulatedRun r = run_and_compare("host_code", {NDArray::empty({37}, Int(32))});
  EXPECT_EQ(r.launches.size(), 4u);  // init, then the host loop's three launches
  // A failed host assert: interpret() throws, the launcher returns cudaErrorInvalidValue.
  const LoweredFunc& f = func("host_code");
  EXPECT_THROW(interpret(f, {NDArray::empty({3}, Int(32))}), Error);
  EmulatedRun failed = program_->run("host_code", f, {NDArray::empty({3}, Int(32))});
  EXPECT_EQ(failed.error, 1) << failed.output;
  EXPECT_TRUE(failed.launches.empty());
}

TEST_F(CudaEmulation, SharedMemoryBetweenTwoThreadLoops) {
  run_and_compare("reverse4",
                  {NDArray::from_vector(std::vector<float>{1, 2, 3, 4}, {4}), NDArray::empty({4}, Float(32))});
}

TEST_F(CudaEmulation, PlainAndHelperDivisions) {
  std::vector<int32_t> a = {-9, -8, -1, 0, 1, 7, 8, 9, -100, 100, INT32_MIN, INT32_MAX};
  int64_t n = static_cast<int64_t>(a.size());
  for (int s : {3, -3, 0, -1}) run_and_compare("divs", {NDArray::from_vector(a, {n}), NDArray::empty({n}, Int(32)), s});
}

TEST_F(CudaEmulation, SixtyFourBitKernelTakesWidenedArguments) {
  NDArray a = NDArray::from_vector(ramp_values(70 * 9, 0.3f, 0.0f), {70, 9});
  run_and_compare("scale2d", {a, NDArray::empty({70, 9}, Float(32))});
}

TEST_F(CudaEmulation, MathFunctions) {
  std::vector<float> a;
  for (int i = 0; i < 40; ++i) a.push_back(static_cast<float>(i) * 0.37f + 0.01f);
  run_and_compare("math", {NDArray::from_vector(a, {40}), NDArray::empty({40}, Float(32))});
}

TEST_F(CudaEmulation, SanitisedNames) {
  run_and_compare("my_kernel", {floats(50, 0.2f, 0.0f), NDArray::empty({50}, Float(32))});
}

}  // namespace
}  // namespace te
