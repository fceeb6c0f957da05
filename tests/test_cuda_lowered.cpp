// Real schedules through lower() and build_cuda(): the emitted .cu is run on the CPU
// emulation (tests/cuda_emulation) and compared bit for bit with interpret(), and
// compiled with nvcc when it is installed.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "cuda_emulation/harness.h"
#include "te/lower.h"
#include "te/schedule.h"

namespace te {
namespace {

using cuda_test::EmulatedProgram;
using cuda_test::EmulatedRun;

// C = A + B: split by 64, outer to blockIdx.x, inner to threadIdx.x.
LoweredFunc vadd_schedule() {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = placeholder({n}, Float(32), "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return A(i) + B(i); }, "C");
  Schedule s = create_schedule({C});
  auto [bx, tx] = s[C].split(C.axis(0), 64);
  s[C].bind(bx, thread_axis("blockIdx.x"));
  s[C].bind(tx, thread_axis("threadIdx.x"));
  return lower(s, {A, B, C}, "lowered_vadd");
}

// C = A * B tiled 8 x 8 per block, A and B tiles staged in shared memory per k.outer.
LoweredFunc matmul_schedule(int M, int N, int K) {
  Tensor A = placeholder({M, K}, Float(32), "A");
  Tensor B = placeholder({K, N}, Float(32), "B");
  IterVar k = reduce_axis({0, K}, "k");
  Tensor C = compute(
      {M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  Schedule s = create_schedule({C});
  Tensor AS = s.cache_read(A, "shared", {C});
  Tensor BS = s.cache_read(B, "shared", {C});
  auto [io, jo, ii, ji] = s[C].tile(C.axis(0), C.axis(1), 8, 8);
  auto [ko, ki] = s[C].split(C.reduce_axis(0), 8);
  s[C].reorder({io, jo, ko, ii, ji, ki});
  s[C].bind(io, thread_axis("blockIdx.y"));
  s[C].bind(jo, thread_axis("blockIdx.x"));
  s[C].bind(ii, thread_axis("threadIdx.y"));
  s[C].bind(ji, thread_axis("threadIdx.x"));
  for (const Tensor& t : {AS, BS}) {
    s[t].compute_at(s[C], ko);
    s[t].bind(s[t].leaf_iter_vars()[0], thread_axis("threadIdx.y"));
    s[t].bind(s[t].leaf_iter_vars()[1], thread_axis("threadIdx.x"));
  }
  return lower(s, {A, B, C}, "lowered_matmul_" + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K));
}

// C = A * B with a per-thread accumulator (cache_write "local").
LoweredFunc matmul_local_schedule() {
  Tensor A = placeholder({32, 16}, Float(32), "A");
  Tensor B = placeholder({16, 24}, Float(32), "B");
  IterVar k = reduce_axis({0, 16}, "k");
  Tensor C = compute(
      {32, 24}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  Schedule s = create_schedule({C});
  Tensor CL = s.cache_write(C, "local");
  auto [io, jo, ii, ji] = s[C].tile(C.axis(0), C.axis(1), 8, 8);
  s[C].bind(io, thread_axis("blockIdx.y"));
  s[C].bind(jo, thread_axis("blockIdx.x"));
  s[C].bind(ii, thread_axis("threadIdx.y"));
  s[C].bind(ji, thread_axis("threadIdx.x"));
  s[CL].compute_at(s[C], ji);
  return lower(s, {A, B, C}, "lowered_matmul_local");
}

// B[i] = max over the row of A: rows split onto blocks of 32 threads.
LoweredFunc row_max_schedule() {
  Var n("n"), m("m");
  Tensor A = placeholder({n, m}, Float(32), "A");
  IterVar k = reduce_axis({0, m}, "k");
  Tensor B = compute(
      {n}, [&](Expr i) { return max(A(i, k), {k}); }, "B");
  Schedule s = create_schedule({B});
  auto [bo, bi] = s[B].split(B.axis(0), 32);
  s[B].bind(bo, thread_axis("blockIdx.x"));
  s[B].bind(bi, thread_axis("threadIdx.x"));
  return lower(s, {A, B}, "lowered_row_max");
}

// Two stages, two kernels: T = exp(A) * 2 (an intermediate of symbolic size), C = T + A.
LoweredFunc pipeline_schedule() {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor T = compute(
      {n}, [&](Expr i) { return exp(A(i)) * 2.0f; }, "T");
  Tensor C = compute(
      {n}, [&](Expr i) { return T(i) + A(i); }, "C");
  Schedule s = create_schedule({C});
  for (const Tensor& t : {T, C}) {
    auto [o, i] = s[t].split(t.axis(0), t.same_as(T) ? 32 : 16);
    s[t].bind(o, thread_axis("blockIdx.x"));
    s[t].bind(i, thread_axis("threadIdx.x"));
  }
  return lower(s, {A, C}, "lowered_pipeline");
}

// float16 in, float16 out, with a vectorized inner loop.
LoweredFunc half_vector_schedule() {
  Var n("n");
  Tensor A = placeholder({n}, Float(16), "A");
  Tensor C = compute(
      {n}, [&](Expr i) { return A(i) * A(i) + make_const(Float(16), 0.5); }, "C");
  Schedule s = create_schedule({C});
  auto [o, v] = s[C].split(C.axis(0), 4);
  auto [bo, bi] = s[C].split(o, 16);
  s[C].bind(bo, thread_axis("blockIdx.x"));
  s[C].bind(bi, thread_axis("threadIdx.x"));
  s[C].vectorize(v);
  return lower(s, {A, C}, "lowered_half_vector");
}

std::vector<LoweredFunc> all_lowered() {
  return {vadd_schedule(),    matmul_schedule(64, 48, 40), matmul_schedule(20, 13, 17), matmul_local_schedule(),
          row_max_schedule(), pipeline_schedule(),         half_vector_schedule()};
}

class CudaLowered : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    program_ = std::make_unique<EmulatedProgram>();
    try {
      for (const LoweredFunc& f : all_lowered()) {
        funcs_.push_back(f);
        program_->add(build_cuda(f));
      }
    } catch (const Error& e) {
      log_ = std::string("lower() or build_cuda() failed: ") + e.what();
      return;
    }
    built_ = program_->build(&log_);
  }
  static void TearDownTestSuite() {
    program_.reset();
    funcs_.clear();
  }
  void SetUp() override { ASSERT_TRUE(built_) << log_; }

  static const LoweredFunc& func(const std::string& name) {
    for (const LoweredFunc& f : funcs_)
      if (f.name == name) return f;
    throw std::runtime_error("no function " + name);
  }

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
      EXPECT_EQ(cuda_test::compare_arrays(expected[j].array(), r.arrays[j]), "") << name << ": " << f.params[j].name();
    }
    return r;
  }

  static std::unique_ptr<EmulatedProgram> program_;
  static std::vector<LoweredFunc> funcs_;
  static bool built_;
  static std::string log_;
};

std::unique_ptr<EmulatedProgram> CudaLowered::program_;
std::vector<LoweredFunc> CudaLowered::funcs_;
bool CudaLowered::built_ = false;
std::string CudaLowered::log_;

NDArray values(std::vector<int64_t> shape, float scale, float offset) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  std::vector<float> v(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    v[static_cast<size_t>(i)] = std::cos(static_cast<float>(i) * scale) * 4.0f + offset;
  return NDArray::from_vector(v, std::move(shape));
}

TEST_F(CudaLowered, VectorAddSplitAndBound) {
  for (int64_t n : {1000, 64, 1, 0}) {
    EmulatedRun r = run_and_compare("lowered_vadd",
                                    {values({n}, 0.1f, 1.0f), values({n}, 0.3f, 0.0f), NDArray::empty({n}, Float(32))});
    EXPECT_EQ(r.launches.size(), n > 0 ? 1u : 0u);
  }
}

TEST_F(CudaLowered, TiledMatmulThroughSharedMemory) {
  EmulatedRun r = run_and_compare(
      "lowered_matmul_64x48x40",
      {values({64, 40}, 0.37f, 0.25f), values({40, 48}, 0.11f, -0.5f), NDArray::empty({64, 48}, Float(32))});
  ASSERT_EQ(r.launches.size(), 1u);
  EXPECT_EQ(r.launches[0], (std::array<unsigned, 6>{6, 8, 1, 8, 8, 1}));
  const CudaModule m = build_cuda(func("lowered_matmul_64x48x40"));
  EXPECT_EQ(m.kernels().at(0).shared_bytes, 2 * 64 * 4);
}

TEST_F(CudaLowered, TiledMatmulWithEdges) {
  run_and_compare("lowered_matmul_20x13x17", {values({20, 17}, 0.37f, 0.25f), values({17, 13}, 0.11f, -0.5f),
                                              NDArray::empty({20, 13}, Float(32))});
}

TEST_F(CudaLowered, MatmulWithLocalAccumulator) {
  run_and_compare("lowered_matmul_local",
                  {values({32, 16}, 0.2f, 0.0f), values({16, 24}, 0.7f, 1.0f), NDArray::empty({32, 24}, Float(32))});
}

TEST_F(CudaLowered, RowReduction) {
  for (auto [n, m] : {std::pair<int64_t, int64_t>{70, 33}, {1, 1}, {32, 5}})
    run_and_compare("lowered_row_max", {values({n, m}, 0.9f, 0.0f), NDArray::empty({n}, Float(32))});
}

TEST_F(CudaLowered, MultiStagePipeline) {
  for (int64_t n : {100, 1}) {
    EmulatedRun r = run_and_compare("lowered_pipeline", {values({n}, 0.05f, 0.0f), NDArray::empty({n}, Float(32))});
    EXPECT_EQ(r.launches.size(), 2u);
    EXPECT_EQ(r.live_allocations, 0) << "the intermediate is freed";
  }
}

TEST_F(CudaLowered, HalfWithVectorizedLoop) {
  for (int64_t n : {64, 50, 7}) {
    std::vector<half> a;
    for (int64_t i = 0; i < n; ++i) a.push_back(half(static_cast<float>(i) * 0.77f - 20.0f));
    run_and_compare("lowered_half_vector", {NDArray::from_vector(a, {n}), NDArray::empty({n}, Float(16))});
  }
}

TEST_F(CudaLowered, NvccCompilesEveryKernel) {
  std::string nvcc = cuda_test::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found (set TE_NVCC or install the CUDA toolkit)";
  cuda_test::TempDir dir;
  for (const LoweredFunc& f : funcs_) {
    CudaModule m = build_cuda(f);
    std::string cu = dir.path() + "/" + m.name() + ".cu";
    cuda_test::write_file(cu, m.source());
    for (const char* arch : {"sm_80", "sm_90"}) {
      cuda_test::CommandResult r = cuda_test::nvcc_compile(nvcc, cu, arch, "-cubin", dir.path() + "/out.cubin");
      EXPECT_EQ(r.status, 0) << m.name() << " for " << arch << ":\n" << r.output << "\n" << m.source();
      EXPECT_EQ(r.output, "") << m.name() << " for " << arch;
    }
  }
}

}  // namespace
}  // namespace te
