// Real schedules through lower() and build(), against interpret() and plain C++:
// TVM's LLVM codegen tests in te's terms (split + parallel + vectorize for n = 3, 4,
// 128; multiply-add pipelines; a vector add with compute_at; vectorized uneven splits;
// reductions under a parallel outer loop; float16 storage), a tiled sgemm and GPU-bound
// schedules run serially.
#include <gtest/gtest.h>

#include <vector>

#include "te/lower.h"
#include "te/schedule.h"
#include "te/te.h"
#include "test_llvm_util.h"

using namespace te;
using namespace te::llvm_test;

namespace {

// Runs f natively and through interpret() on the same inputs (float tolerance for FMA
// contraction) and returns the native arguments.
std::vector<Argument> run_both(const LoweredFunc& f, const std::vector<Argument>& args) {
  return expect_matches_interpreter(f, args, 1e-5, BuildOptions());
}

TEST(LlvmLower, SplitParallelVectorize) {
  for (int64_t n : {3, 4, 128, 1003}) {
    SCOPED_TRACE(n);
    Var len("n");
    Tensor A = placeholder({len}, Float(32), "A"), B = placeholder({len}, Float(32), "B");
    Tensor C = compute(
        {len}, [&](Expr i) { return A(i) + B(i); }, "C");
    Schedule s = create_schedule({C});
    auto [xo, xi] = s[C].split(C.axis(0), 4);
    s[C].parallel(xo);
    s[C].vectorize(xi);
    LoweredFunc f = lower(s, {A, B, C}, "vadd");
    NDArray a = random_array<float>({n}, 1), b = random_array<float>({n}, 2);
    auto out = run_both(f, {a, b, NDArray::empty({n}, Float(32))});
    auto av = a.to_vector<float>(), bv = b.to_vector<float>(), cv = out[2].array().to_vector<float>();
    for (int64_t k = 0; k < n; ++k) ASSERT_EQ(cv[k], av[k] + bv[k]);
  }
}

TEST(LlvmLower, MultiplyAddPipeline) {
  // D = A * B + C through an intermediate, inlined and not.
  for (bool inline_ab : {true, false}) {
    SCOPED_TRACE(inline_ab);
    Var n("n");
    Tensor A = placeholder({n}, Float(32), "A"), B = placeholder({n}, Float(32), "B"),
           C = placeholder({n}, Float(32), "C");
    Tensor AB = compute(
        {n}, [&](Expr i) { return A(i) * B(i); }, "AB");
    Tensor D = compute(
        {n}, [&](Expr i) { return AB(i) + C(i); }, "D");
    Schedule s = create_schedule({D});
    if (inline_ab) s[AB].compute_inline();
    auto [xo, xi] = s[D].split(D.axis(0), 8);
    s[D].vectorize(xi);
    if (!inline_ab) s[AB].compute_at(s[D], xo);
    LoweredFunc f = lower(s, {A, B, C, D}, "muladd");
    int64_t len = 77;
    NDArray a = random_array<float>({len}, 3), b = random_array<float>({len}, 4), c = random_array<float>({len}, 5);
    auto out = run_both(f, {a, b, c, NDArray::empty({len}, Float(32))});
    auto av = a.to_vector<float>(), bv = b.to_vector<float>(), cv = c.to_vector<float>();
    auto dv = out[3].array().to_vector<float>();
    for (int64_t k = 0; k < len; ++k) ASSERT_NEAR(dv[k], av[k] * bv[k] + cv[k], 1e-4);
  }
}

TEST(LlvmLower, VectorAddWithComputeAt) {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = compute(
      {n}, [&](Expr i) { return A(i) + 1.0f; }, "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return B(i) * 2.0f; }, "C");
  Schedule s = create_schedule({C});
  auto [xo, xi] = s[C].split(C.axis(0), 16);
  s[B].compute_at(s[C], xo);
  s[C].vectorize(xi);
  s[C].parallel(xo);
  LoweredFunc f = lower(s, {A, C}, "compute_at");
  for (int64_t len : {1, 16, 100}) {
    NDArray a = random_array<float>({len}, 6);
    auto out = run_both(f, {a, NDArray::empty({len}, Float(32))});
    auto av = a.to_vector<float>(), cv = out[1].array().to_vector<float>();
    for (int64_t k = 0; k < len; ++k) ASSERT_EQ(cv[k], (av[k] + 1.0f) * 2.0f);
  }
}

TEST(LlvmLower, VectorizedUnevenSplits) {
  for (int factor : {3, 5, 8, 16}) {
    SCOPED_TRACE(factor);
    Tensor A = placeholder({37}, Int(32), "A");
    Tensor B = compute(
        {37}, [&](Expr i) { return A(i) * 3 - i; }, "B");
    Schedule s = create_schedule({B});
    auto [xo, xi] = s[B].split(B.axis(0), factor);
    s[B].vectorize(xi);
    LoweredFunc f = lower(s, {A, B}, "uneven");
    NDArray a = random_array<int32_t>({37}, 7);
    auto out = run_both(f, {a, NDArray::empty({37}, Int(32))});
    auto av = a.to_vector<int32_t>(), bv = out[1].array().to_vector<int32_t>();
    for (int k = 0; k < 37; ++k)
      ASSERT_EQ(bv[k], static_cast<int32_t>(static_cast<uint32_t>(av[k]) * 3u - static_cast<uint32_t>(k)));
  }
}

TEST(LlvmLower, ReductionUnderParallelOuterLoop) {
  Var n("n"), m("m");
  Tensor A = placeholder({n, m}, Float(64), "A");
  IterVar k = reduce_axis({0, m}, "k");
  Tensor S = compute(
      {n}, [&](Expr i) { return sum(A(i, k) * 2.0, {k}); }, "S");
  Schedule s = create_schedule({S});
  s[S].parallel(S.axis(0));
  LoweredFunc f = lower(s, {A, S}, "rowsum");
  NDArray a = random_array<double>({33, 41}, 8);
  auto out = run_both(f, {a, NDArray::empty({33}, Float(64))});
  auto av = a.to_vector<double>(), sv = out[1].array().to_vector<double>();
  for (int i = 0; i < 33; ++i) {
    double ref = 0;
    for (int j = 0; j < 41; ++j) ref += av[i * 41 + j] * 2.0;
    ASSERT_NEAR(sv[i], ref, 1e-9);
  }
}

TEST(LlvmLower, Float16Storage) {
  Var n("n");
  Tensor A = placeholder({n}, Float(16), "A"), B = placeholder({n}, Float(16), "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return A(i) * B(i) + A(i); }, "C");
  Schedule s = create_schedule({C});
  auto [xo, xi] = s[C].split(C.axis(0), 8);
  s[C].vectorize(xi);
  LoweredFunc f = lower(s, {A, B, C}, "half_madd");
  // float16 rounds after every operation: the results must match the interpreter exactly.
  expect_matches_interpreter(
      f, {random_array<half>({45}, 9, -4, 4), random_array<half>({45}, 10, -4, 4), NDArray::empty({45}, Float(16))});
}

TEST(LlvmLower, TiledSgemm) {
  const int64_t M = 64, N = 48, K = 40;
  Tensor A = placeholder({M, K}, Float(32), "A"), B = placeholder({K, N}, Float(32), "B");
  IterVar k = reduce_axis({0, K}, "k");
  Tensor C = compute(
      {M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  Schedule s = create_schedule({C});
  auto [xo, yo, xi, yi] = s[C].tile(C.axis(0), C.axis(1), 16, 16);
  auto [ko, ki] = s[C].split(C.reduce_axis(0), 4);
  s[C].reorder({xo, yo, ko, xi, ki, yi});
  s[C].vectorize(yi);
  s[C].parallel(xo);
  LoweredFunc f = lower(s, {A, B, C}, "sgemm");
  NDArray a = random_array<float>({M, K}, 11, -1, 1), b = random_array<float>({K, N}, 12, -1, 1);
  auto out = run_both(f, {a, b, NDArray::empty({M, N}, Float(32))});
  auto av = a.to_vector<float>(), bv = b.to_vector<float>(), cv = out[2].array().to_vector<float>();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double ref = 0;
      for (int64_t q = 0; q < K; ++q) ref += static_cast<double>(av[i * K + q]) * bv[q * N + j];
      ASSERT_NEAR(cv[i * N + j], ref, 1e-4) << i << ", " << j;
    }
}

TEST(LlvmLower, GpuBoundScheduleRunsSeriallyOnTheCpu) {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = compute(
      {n}, [&](Expr i) { return A(i) * A(i); }, "B");
  Schedule s = create_schedule({B});
  auto [bx, tx] = s[B].split(B.axis(0), 32);
  s[B].bind(bx, thread_axis("blockIdx.x"));
  s[B].bind(tx, thread_axis("threadIdx.x"));
  LoweredFunc f = lower(s, {A, B}, "square");
  auto out = run_both(f, {random_array<float>({100}, 13), NDArray::empty({100}, Float(32))});
  EXPECT_EQ(out[1].array().shape(), (std::vector<int64_t>{100}));
}

TEST(LlvmLower, UnrolledAndCachedStages) {
  Var n("n");
  Tensor A = placeholder({n, 8}, Float(32), "A");
  Tensor B = compute(
      {n, 8}, [&](Expr i, Expr j) { return A(i, j) * 0.5f + 1.0f; }, "B");
  Schedule s = create_schedule({B});
  Tensor BL = s.cache_write(B, "local");
  s[BL].compute_at(s[B], B.axis(0));
  s[B].unroll(B.axis(1));
  LoweredFunc f = lower(s, {A, B}, "cached");
  run_both(f, {random_array<float>({9, 8}, 14), NDArray::empty({9, 8}, Float(32))});
}

TEST(LlvmLower, VectorizedPaddingOnlyReadsInsideTheInput) {
  // B has one zero on each side of A; vectorized, the guarded read becomes a masked load,
  // so no lane reads outside A (ASan would see it: A is exactly n long).
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = compute(
      {n + 2}, [&](Expr i) { return if_then_else(i >= 1 && i <= n, A(i - 1), make_zero(Float(32))); }, "B");
  Schedule s = create_schedule({B});
  auto [xo, xi] = s[B].split(B.axis(0), 8);
  s[B].vectorize(xi);
  LoweredFunc f = lower(s, {A, B}, "pad");
  for (int64_t len : {1, 6, 14, 30}) {
    NDArray a = random_array<float>({len}, 15);
    auto out = run_both(f, {a, NDArray::empty({len + 2}, Float(32))});
    auto av = a.to_vector<float>(), bv = out[1].array().to_vector<float>();
    EXPECT_EQ(bv.front(), 0.0f);
    EXPECT_EQ(bv.back(), 0.0f);
    for (int64_t k = 0; k < len; ++k) ASSERT_EQ(bv[k + 1], av[k]);
  }
}

TEST(LlvmLower, PaddingTestSharedByTheLanesIsABranch) {
  // A pad stage vectorized over its channels tests its rows, the same in every lane: a
  // branch around plain loads, not masked loads (whose lanes, all off before the input,
  // cost a microcode assist on AMD: 40x slower for C3D's pad over 3 channels).
  Var n("n");
  Tensor A = placeholder({n, 3}, Float(32), "A");
  Tensor B = compute(
      {n + 4, 3}, [&](Expr h, Expr c) { return if_then_else(h >= 2 && h < n + 2, A(h - 2, c), make_zero(Float(32))); },
      "B");
  Schedule s = create_schedule({B});
  s[B].vectorize(B.axis(1));
  LoweredFunc f = lower(s, {A, B}, "pad_channels");
  EXPECT_EQ(llvm_ir(f, false).find("masked.load"), std::string::npos) << llvm_ir(f, false);
  for (int64_t len : {1, 5}) {
    NDArray a = random_array<float>({len, 3}, 16);
    auto out = run_both(f, {a, NDArray::empty({len + 4, 3}, Float(32))});
    auto av = a.to_vector<float>(), bv = out[1].array().to_vector<float>();
    for (int64_t h = 0; h < len + 4; ++h)
      for (int64_t c = 0; c < 3; ++c)
        ASSERT_EQ(bv[size_t(h * 3 + c)], h >= 2 && h < len + 2 ? av[size_t((h - 2) * 3 + c)] : 0.0f) << h << ", " << c;
  }
}

}  // namespace
