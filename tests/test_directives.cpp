// No schedule directive is dropped without a word: each one either has its effect or is
// refused with a te::Error naming the stage, the axis and the fix (one test per case).
#include <gtest/gtest.h>

#include <te/te.h>

#include <vector>

#include "test_llvm_util.h"
#include "test_util.h"

using namespace te;
using te::llvm_test::buffer_param;

namespace {

// C = A + 1 over a given shape.
struct AddOne {
  Tensor A, C;
  explicit AddOne(std::vector<Expr> shape) {
    A = placeholder(shape, Float(32), "A");
    C = compute(
        shape, [&](const std::vector<Var>& i) { return A(std::vector<Expr>(i.begin(), i.end())) + 1.0f; }, "C");
  }
};

// B = A * 2 (an intermediate stage), C = B + 1.
struct TwoStages {
  Tensor A, B, C;
  explicit TwoStages(Expr n) {
    A = placeholder({n, 16}, Float(32), "A");
    B = compute(
        {n, 16}, [&](Expr i, Expr j) { return A(i, j) * 2.0f; }, "B");
    C = compute(
        {n, 16}, [&](Expr i, Expr j) { return B(i, j) + 1.0f; }, "C");
  }
};

}  // namespace

TEST(Directives, VectorizeOfASymbolicExtentIsRefused) {
  Var n("n");
  AddOne g({n});
  Schedule s = create_schedule({g.C});
  s[g.C].vectorize(g.C.axis(0));
  expect_error(
      [&] {
        lower(s, {g.A, g.C}, "f");
      },
      {"stage 'C' vectorizes axis 'i'", "extent n is not a constant",
       "split it by a constant factor and vectorize the inner loop"});
}

TEST(Directives, UnrollOfASymbolicExtentIsRefused) {
  Var n("n");
  AddOne g({n});
  Schedule s = create_schedule({g.C});
  s[g.C].unroll(g.C.axis(0));
  expect_error(
      [&] {
        lower(s, {g.A, g.C}, "f");
      },
      {"stage 'C' unrolls axis 'i'", "extent n is not a constant",
       "split it by a constant factor and unroll the inner loop"});
}

TEST(Directives, VectorizeOfASplitOfASymbolicExtentWorks) {
  Var n("n");
  AddOne g({n});
  Schedule s = create_schedule({g.C});
  auto [o, i] = s[g.C].split(g.C.axis(0), 8);
  s[g.C].vectorize(i);
  s[g.C].unroll(s[g.C].split(o, 2).second);
  LoweredFunc f = lower(s, {g.A, g.C}, "f");
  std::vector<float> a(37);
  for (size_t k = 0; k < a.size(); ++k) a[k] = static_cast<float>(k);
  NDArray A = NDArray::from_vector(a, {37}), C1 = NDArray::empty({37}, Float(32)), C2 = NDArray::empty({37}, Float(32));
  interpret(f, {A, C1});
  build(f)("f")(A, C2);
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(C1.to_vector<float>()[k], a[k] + 1);
    EXPECT_EQ(C2.to_vector<float>()[k], a[k] + 1);
  }
}

TEST(Directives, ParallelInsideAVectorizedLoopIsRefused) {
  AddOne g({Expr(8), Expr(64)});
  Schedule s = create_schedule({g.C});
  s[g.C].vectorize(g.C.axis(0));
  s[g.C].parallel(g.C.axis(1));
  expect_error(
      [&] {
        lower(s, {g.A, g.C}, "f");
      },
      {"loop 'j' of stage 'C' is parallel", "inside loop 'i' of stage 'C', which is vectorized",
       "parallelize a loop outside the vectorized one"});
}

TEST(Directives, ParallelInsideAParallelLoopIsRefused) {
  AddOne g({Expr(8), Expr(64)});
  Schedule s = create_schedule({g.C});
  s[g.C].parallel(g.C.axis(0));
  s[g.C].parallel(g.C.axis(1));
  expect_error(
      [&] {
        lower(s, {g.A, g.C}, "f");
      },
      {"loop 'j' of stage 'C' is parallel", "inside loop 'i' of stage 'C', which is parallel",
       "fuse the two loops and parallelize the fused loop"});
}

TEST(Directives, ParallelProducerInsideAParallelConsumerIsRefused) {
  TwoStages g(Expr(8));
  Schedule s = create_schedule({g.C});
  s[g.C].parallel(g.C.axis(0));
  s[g.B].compute_at(s[g.C], g.C.axis(0));
  s[g.B].parallel(g.B.axis(1));
  expect_error(
      [&] {
        lower(s, {g.A, g.C}, "f");
      },
      {"loop 'j' of stage 'B' is parallel", "inside loop 'i' of stage 'C', which is parallel"});
}

TEST(Directives, VectorizedInsideAVectorizedLoopIsRefused) {
  AddOne g({Expr(4), Expr(8)});
  Schedule s = create_schedule({g.C});
  s[g.C].vectorize(g.C.axis(0));
  s[g.C].vectorize(g.C.axis(1));
  expect_error(
      [&] {
        lower(s, {g.A, g.C}, "f");
      },
      {"loop 'j' of stage 'C' is vectorized", "inside loop 'i' of stage 'C', which is vectorized",
       "vectorize only the innermost of the two"});
}

TEST(Directives, ParallelInsideAGpuKernelIsRefused) {
  AddOne g({Expr(8), Expr(64)});
  Schedule s = create_schedule({g.C});
  s[g.C].bind(g.C.axis(0), thread_axis("blockIdx.x"));
  s[g.C].parallel(g.C.axis(1));
  expect_error(
      [&] {
        lower(s, {g.A, g.C}, "f");
      },
      {"loop 'j' of stage 'C' is parallel", "which is bound to blockIdx.x", "bind it to a thread axis"});
}

TEST(Directives, ParallelHostLoopAroundAGpuKernelIsRefused) {
  AddOne g({Expr(8), Expr(64)});
  Schedule s = create_schedule({g.C});
  s[g.C].parallel(g.C.axis(0));
  s[g.C].bind(g.C.axis(1), thread_axis("threadIdx.x"));
  expect_error(
      [&] {
        lower(s, {g.A, g.C}, "f");
      },
      {"loop 'i' of stage 'C' is parallel", "contains the GPU kernel that loop 'j' of stage 'C' starts",
       "leave the host loop serial"});
}

TEST(Directives, VthreadOfASymbolicExtentIsRefused) {
  AddOne g({Expr(8), Var("m")});
  Schedule s = create_schedule({g.C});
  s[g.C].bind(g.C.axis(1), thread_axis("vthread"));
  expect_error(
      [&] {
        lower(s, {g.A, g.C}, "f");
      },
      {"axis 'j' of stage 'C' is bound to vthread, but its extent m is not a constant", "split_nparts"});
  Schedule t = create_schedule({g.C});
  auto [vo, vi] = t[g.C].split_nparts(g.C.axis(1), 100);
  t[g.C].bind(vo, thread_axis("vthread"));
  expect_error([&] { lower(t, {g.A, g.C}, "f"); }, {"bound to vthread with 100 iterations", "at most 64"});
}

// The attach point must stay a loop: split and fuse refuse to replace it (at schedule time).
TEST(Directives, ComputeAtAnAxisSplitAfterwardsIsRefused) {
  TwoStages g(Expr(8));
  Schedule s = create_schedule({g.C});
  s[g.B].compute_at(s[g.C], g.C.axis(0));
  expect_error([&] { s[g.C].split(g.C.axis(0), 4); },
               {"split: stage 'B' is computed at axis 'i' of stage 'C'", "restructure loops before compute_at"});
  expect_error([&] { s[g.C].fuse(g.C.axis(0), g.C.axis(1)); },
               {"fuse: stage 'B' is computed at axis 'i' of stage 'C'", "restructure loops before compute_at"});
}

TEST(Directives, ScheduleOfAnInlinedStageIsRefused) {
  TwoStages g(Expr(8));
  Schedule s = create_schedule({g.C});
  s[g.B].vectorize(g.B.axis(1));
  s[g.B].compute_inline();
  expect_error(
      [&] {
        lower(s, {g.A, g.C}, "f");
      },
      {"stage 'B' is inlined", "'j' vectorized", "remove its loop schedule"});
  Schedule t = create_schedule({g.C});
  t[g.B].split(g.B.axis(0), 2);
  t[g.B].compute_inline();
  expect_error([&] { lower(t, {g.A, g.C}, "f"); }, {"stage 'B' is inlined", "split of 'i'"});
}

TEST(Directives, SetScopeOnAnOutputIsRefused) {
  AddOne g({Expr(8)});
  Schedule s = create_schedule({g.C});
  expect_error([&] { s[g.C].set_scope("local"); },
               {"set_scope: stage 'C' is an output", "outputs live in global memory", "cache_write(C, 'local')"});
  s[g.C].set_scope("global");  // what it is already: fine
}

TEST(Directives, RfactorOfAnAnnotatedStageIsRefused) {
  Tensor A = placeholder({8, 64}, Float(32), "A");
  IterVar k = reduce_axis({0, 64}, "k");
  Tensor C = compute(
      {8}, [&](Expr i) { return sum(A(i, k), {k}); }, "C");
  Schedule s = create_schedule({C});
  s[C].parallel(C.axis(0));
  auto [ko, ki] = s[C].split(k, 16);
  expect_error([&] { s.rfactor(C, ki); },
               {"rfactor: axis 'i' of stage 'C' is parallel", "annotate stage 'C' after rfactor"});
  Schedule t = create_schedule({C});
  t[C].split(C.axis(0), 2);
  auto [ko2, ki2] = t[C].split(k, 16);
  expect_error([&] { t.rfactor(C, ki2); }, {"rfactor: data axis 'i' of stage 'C' is split", "after rfactor"});
}

// A body te cannot make vector code of keeps its Vectorized kind (LLVM's loop vectorizer
// gets it, with the hint) and still computes the right values.
TEST(Directives, VectorizeFallbackKeepsTheHint) {
  Buffer A("A", Float(32), {Expr(8)});
  Buffer T("T", Float(32), {Expr(1)}, MemoryScope::Local);
  Var i("i");
  Stmt body = allocate(T, seq({store(T, cast(Float(32), i), {Expr(0)}), store(A, load(T, {Expr(0)}) + 1.0f, {i})}));
  Stmt s = vectorize_loops(for_loop(i, 0, 8, ForKind::Vectorized, body));
  const auto* loop = s.as<ForNode>();
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->for_kind, ForKind::Vectorized);
  LoweredFunc f{"fallback", {buffer_param(A)}, s};
  EXPECT_NE(llvm_ir(f, /*optimized=*/false).find("llvm.loop.vectorize.enable"), std::string::npos);
  NDArray a = NDArray::empty({8}, Float(32));
  build(f)("fallback")(a);
  std::vector<float> want{1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(a.to_vector<float>(), want);
  NDArray b = NDArray::empty({8}, Float(32));
  interpret(f, {b});
  EXPECT_EQ(b.to_vector<float>(), want);
}
