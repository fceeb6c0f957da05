// lower() end to end on element-wise stages: golden loop nests, and every lowered program
// run with interpret() and the LLVM JIT against plain C++ over sizes that no split factor divides, and 1.
#include <gtest/gtest.h>

#include <te/te.h>

#include "test_lower_util.h"
#include "test_util.h"

using namespace te;
using namespace lower_test;

namespace {

struct VAdd {
  Var n{"n"};
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = placeholder({n}, Float(32), "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return A(i) + B(i); }, "C");
};

// Runs f (a vector add over A, B, C) for lengths no split factor divides, and 1.
void check_vadd(const LoweredFunc& f, const std::string& what) { check_vector_add(f, what, {1, 7, 8, 64, 100, 129}); }

struct Add2D {
  Var m{"m"}, n{"n"};
  Tensor A = placeholder({m, n}, Float(32), "A");
  Tensor B = placeholder({m, n}, Float(32), "B");
  Tensor C = compute(
      {m, n}, [&](Expr i, Expr j) { return A(i, j) * B(i, j) + 1.0f; }, "C");
};

void check_add2d(const LoweredFunc& f, const std::string& what) {
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {5, 7}, {16, 16}, {17, 33}}) {
    NDArray a = input({rows, cols}, 3), b = input({rows, cols}, 4), c = output({rows, cols});
    run_backends(f, {a, b, c});
    auto av = a.to_vector<float>(), bv = b.to_vector<float>();
    std::vector<float> want(av.size());
    for (size_t i = 0; i < want.size(); ++i) want[i] = av[i] * bv[i] + 1.0f;
    expect_close(c.to_vector<float>(), want, 1e-6f, what + " " + std::to_string(rows) + "x" + std::to_string(cols));
  }
}

}  // namespace

TEST(Lower, VectorAddGoldenBeforeAndAfterSplitAndBind) {
  VAdd v;
  Schedule s = create_schedule({v.C});
  LoweredFunc plain = lower(s, {v.A, v.B, v.C}, "vadd");
  EXPECT_EQ(to_string(plain),
            "func vadd(A: float32[n], B: float32[n], C: float32[n]) {\n"
            "  for (i, 0, n) {\n"
            "    C[i] = (A[i] + B[i]);\n"
            "  }\n"
            "}\n");
  check_vadd(plain, "plain");

  auto [bx, tx] = s[v.C].split(v.C.axis(0), 64);
  s[v.C].bind(bx, thread_axis("blockIdx.x"));
  s[v.C].bind(tx, thread_axis("threadIdx.x"));
  LoweredFunc gpu = lower(s, {v.A, v.B, v.C}, "vadd");
  EXPECT_EQ(to_string(gpu),
            "func vadd(A: float32[n], B: float32[n], C: float32[n]) {\n"
            "  launch_thread blockIdx.x (i.outer, 0, ((n + 63) / 64)) {\n"
            "    launch_thread threadIdx.x (i.inner, 0, 64) {\n"
            "      if (likely((((i.outer * 64) + i.inner) < n))) {\n"
            "        C[((i.outer * 64) + i.inner)] = (A[((i.outer * 64) + i.inner)] + B[((i.outer * 64) + i.inner)]);\n"
            "      }\n"
            "    }\n"
            "  }\n"
            "}\n");
  check_vadd(gpu, "split+bind");
}

TEST(Lower, VectorAddGoldenSplitVectorizeParallel) {
  VAdd v;
  Schedule s = create_schedule({v.C});
  auto [xo, xi] = s[v.C].split(v.C.axis(0), 8);
  s[v.C].vectorize(xi);
  s[v.C].parallel(xo);
  LoweredFunc f = lower(s, {v.A, v.B, v.C}, "vadd");
  EXPECT_EQ(to_string(f),
            "func vadd(A: float32[n], B: float32[n], C: float32[n]) {\n"
            "  parallel for (i.outer, 0, (n / 8)) {\n"
            "    C[ramp((i.outer * 8), 1, 8)] = (A[ramp((i.outer * 8), 1, 8)] + B[ramp((i.outer * 8), 1, 8)]);\n"
            "  }\n"
            "  parallel for (i.outer, (n / 8), (((n + 7) / 8) - (n / 8))) {\n"
            "    if (likely((((i.outer * 8) + 7) < n))) {\n"
            "      C[ramp((i.outer * 8), 1, 8)] = (A[ramp((i.outer * 8), 1, 8)] + B[ramp((i.outer * 8), 1, 8)]);\n"
            "    } else {\n"
            "      for (i.inner, 0, 8) {\n"
            "        if (likely((((i.outer * 8) + i.inner) < n))) {\n"
            "          C[((i.outer * 8) + i.inner)] = (A[((i.outer * 8) + i.inner)] + B[((i.outer * 8) + i.inner)]);\n"
            "        }\n"
            "      }\n"
            "    }\n"
            "  }\n"
            "}\n");
  check_vadd(f, "split+vectorize+parallel");
}

TEST(Lower, VectorAddUnderManySchedules) {
  using Apply = std::function<void(Schedule&, const VAdd&)>;
  std::vector<std::pair<std::string, Apply>> cases = {
      {"split 3", [](Schedule& s, const VAdd& v) { s[v.C].split(v.C.axis(0), 3); }},
      {"split_nparts 3", [](Schedule& s, const VAdd& v) { s[v.C].split_nparts(v.C.axis(0), 3); }},
      {"split twice, reorder",
       [](Schedule& s, const VAdd& v) {
         auto [xo, xi] = s[v.C].split(v.C.axis(0), 10);
         auto [xi1, xi2] = s[v.C].split(xi, 3);
         s[v.C].reorder({xi2, xo, xi1});
       }},
      {"split, unroll inner",
       [](Schedule& s, const VAdd& v) {
         auto [xo, xi] = s[v.C].split(v.C.axis(0), 4);
         s[v.C].unroll(xi);
       }},
      {"split 8, vectorize inner",
       [](Schedule& s, const VAdd& v) {
         auto [xo, xi] = s[v.C].split(v.C.axis(0), 8);
         s[v.C].vectorize(xi);
       }},
      {"split 16, bind, split 4, vectorize",
       [](Schedule& s, const VAdd& v) {
         auto [bx, rest] = s[v.C].split(v.C.axis(0), 16);
         auto [tx, vi] = s[v.C].split(rest, 4);
         s[v.C].bind(bx, thread_axis("blockIdx.x"));
         s[v.C].bind(tx, thread_axis("threadIdx.x"));
         s[v.C].vectorize(vi);
       }},
  };
  for (auto& [name, apply] : cases) {
    VAdd v;
    Schedule s = create_schedule({v.C});
    apply(s, v);
    check_vadd(lower(s, {v.A, v.B, v.C}, "vadd"), name);
  }
}

TEST(Lower, TwoDimensionalUnderManySchedules) {
  using Apply = std::function<void(Schedule&, const Add2D&)>;
  std::vector<std::pair<std::string, Apply>> cases = {
      {"none", [](Schedule&, const Add2D&) {}},
      {"tile 4x3", [](Schedule& s, const Add2D& g) { s[g.C].tile(g.C.axis(0), g.C.axis(1), 4, 3); }},
      {"reorder",
       [](Schedule& s, const Add2D& g) {
         s[g.C].reorder({g.C.axis(1), g.C.axis(0)});
       }},
      {"fuse", [](Schedule& s, const Add2D& g) { s[g.C].fuse(g.C.axis(0), g.C.axis(1)); }},
      {"fuse then split 5",
       [](Schedule& s, const Add2D& g) {
         IterVar f = s[g.C].fuse(g.C.axis(0), g.C.axis(1));
         s[g.C].split(f, 5);
       }},
      {"tile, fuse outer, parallel, vectorize inner",
       [](Schedule& s, const Add2D& g) {
         auto [xo, yo, xi, yi] = s[g.C].tile(g.C.axis(0), g.C.axis(1), 2, 8);
         IterVar f = s[g.C].fuse(xo, yo);
         s[g.C].parallel(f);
         s[g.C].vectorize(yi);
       }},
      {"split inner, fuse with outer axis",
       [](Schedule& s, const Add2D& g) {
         auto [yo, yi] = s[g.C].split(g.C.axis(1), 4);
         IterVar f = s[g.C].fuse(g.C.axis(0), yo);
         s[g.C].bind(f, thread_axis("blockIdx.x"));
         s[g.C].bind(yi, thread_axis("threadIdx.x"));
       }},
  };
  for (auto& [name, apply] : cases) {
    Add2D g;
    Schedule s = create_schedule({g.C});
    apply(s, g);
    check_add2d(lower(s, {g.A, g.B, g.C}, "add2d"), name);
  }
}

TEST(Lower, ZeroDimensionalStageWithAFusedSingletonLoop) {
  Tensor A = placeholder({}, Float(32), "A");
  Tensor T = compute_from_vars(
      {}, [&](const std::vector<Var>&) { return A({}) * 3.0f + 1.0f; }, "T");
  for (bool fuse : {false, true}) {
    Schedule s = create_schedule({T});
    if (fuse) s[T].fuse(std::vector<IterVar>{});
    LoweredFunc f = lower(s, {A, T}, "scalar");
    NDArray a = NDArray::from_vector(std::vector<float>{2.0f}, {}), t = output({});
    run_backends(f, {a, t});
    EXPECT_EQ(t.to_vector<float>()[0], 7.0f) << f;
  }
}

TEST(Lower, InlinedStagesDisappear) {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor A1 = compute(
      {n}, [&](Expr i) { return A(i) + 1.0f; }, "A1");
  Tensor A2 = compute(
      {n}, [&](Expr i) { return A1(i) * 2.0f; }, "A2");
  Tensor C = compute(
      {n}, [&](Expr i) { return A2(i) + A1(i); }, "C");
  Schedule s = create_schedule({C});
  auto [xo, xi] = s[C].split(C.axis(0), 8);
  s[A1].compute_at(s[C], xo);
  s[A2].compute_inline();
  LoweredFunc f = lower(s, {A, C}, "inline_mixed");
  std::string text = to_string(f);
  EXPECT_EQ(text.find("A2"), std::string::npos) << text;
  EXPECT_NE(text.find("allocate A1"), std::string::npos) << text;
  for (int64_t len : {1, 5, 8, 19}) {
    NDArray a = input({len}, 5), c = output({len});
    run_backends(f, {a, c});
    auto av = a.to_vector<float>();
    std::vector<float> want(av.size());
    for (size_t i = 0; i < av.size(); ++i) want[i] = (av[i] + 1.0f) * 2.0f + (av[i] + 1.0f);
    expect_close(c.to_vector<float>(), want, 1e-6f, "n=" + std::to_string(len));
  }
}

TEST(Lower, ParametersAreTheArgumentsThenUnboundScalars) {
  Var m("m"), n("n"), alpha_n("k");
  Tensor A = placeholder({8 * m, n}, Float(32), "A");
  Tensor B = compute(
      {8 * m, n}, [&](Expr i, Expr j) { return A(i, j) * cast(Float(32), alpha_n); }, "B");
  Schedule s = create_schedule({B});
  LoweredFunc f = lower(s, {A, B}, "scale");
  ASSERT_EQ(f.params.size(), 4u);
  EXPECT_EQ(f.params[0].name(), "A");
  EXPECT_EQ(f.params[1].name(), "B");
  EXPECT_FALSE(f.params[2].is_buffer());
  EXPECT_EQ(f.params[2].name(), "m");  // 8 * m does not bind m
  EXPECT_EQ(f.params[3].name(), "k");
  EXPECT_EQ(f.params[0].buffer.ndim(), 2);  // argument buffers keep their shapes
  NDArray a = input({16, 3}, 6), b = output({16, 3});
  run_backends(f, {a, b, 2, 5});
  auto av = a.to_vector<float>();
  std::vector<float> want(av.size());
  for (size_t i = 0; i < av.size(); ++i) want[i] = av[i] * 5.0f;
  expect_close(b.to_vector<float>(), want, 0, "scale");
}

TEST(Lower, ComputedTensorsNotListedBecomeIntermediates) {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = compute(
      {n}, [&](Expr i) { return A(i) + 1.0f; }, "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return B(i) * B(i); }, "C");
  Schedule s = create_schedule({C});
  LoweredFunc f = lower(s, {A, C}, "f");
  EXPECT_EQ(count_kind(f.body, StmtKind::Allocate), 1) << f;
  // Listing B makes it an output the caller sees.
  LoweredFunc g = lower(s, {A, B, C}, "g");
  EXPECT_EQ(count_kind(g.body, StmtKind::Allocate), 0) << g;
  NDArray a = input({5}, 7), b = output({5}), c = output({5});
  run_backends(g, {a, b, c});
  auto av = a.to_vector<float>(), bv = b.to_vector<float>(), cv = c.to_vector<float>();
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(bv[i], av[i] + 1.0f);
    EXPECT_EQ(cv[i], bv[i] * bv[i]);
  }
}

TEST(Lower, DumpIrPrintsTheIrAfterAPass) {
  VAdd v;
  Schedule s = create_schedule({v.C});
  s[v.C].split(v.C.axis(0), 4);
  LowerOptions opt;
  opt.dump_ir = "storage_flatten";
  testing::internal::CaptureStderr();
  lower(s, {v.A, v.B, v.C}, "vadd", opt);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("// ---- IR after storage_flatten ----"), std::string::npos) << err;
  EXPECT_EQ(err.find("IR after simplify"), std::string::npos) << err;
  EXPECT_NE(err.find("likely"), std::string::npos) << err;

  opt.dump_ir = "all";
  testing::internal::CaptureStderr();
  lower(s, {v.A, v.B, v.C}, "vadd", opt);
  err = testing::internal::GetCapturedStderr();
  for (const std::string& pass : lower_pass_names())
    EXPECT_NE(err.find("// ---- IR after " + pass + " ----"), std::string::npos) << pass;
}

TEST(Lower, DumpIrFromTheEnvironment) {
  VAdd v;
  Schedule s = create_schedule({v.C});
  ASSERT_EQ(setenv("TE_DUMP_IR", "loop_partition", 1), 0);
  testing::internal::CaptureStderr();
  lower(s, {v.A, v.B, v.C}, "vadd");
  std::string err = testing::internal::GetCapturedStderr();
  unsetenv("TE_DUMP_IR");
  EXPECT_NE(err.find("IR after loop_partition"), std::string::npos) << err;
}

TEST(Lower, Int64ShapesAndTwoOutputs) {
  Var n("n", Int(64));
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = compute(
      {n}, [&](Expr i) { return A(i) * 2.0f; }, "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return B(i) + A(i); }, "C");
  Schedule s = create_schedule({B, C});  // B is an output that C also reads
  auto [xo, xi] = s[C].split(C.axis(0), 4);
  s[C].vectorize(xi);
  s[B].split(B.axis(0), 3);
  LoweredFunc f = lower(s, {A, B, C}, "two_outputs");
  for (int64_t len : {1, 5, 12}) {
    NDArray a = input({len}, 8), b = output({len}), c = output({len});
    run_backends(f, {a, b, c});
    auto av = a.to_vector<float>(), bv = b.to_vector<float>(), cv = c.to_vector<float>();
    for (size_t i = 0; i < av.size(); ++i) {
      ASSERT_EQ(bv[i], av[i] * 2.0f) << f;
      ASSERT_EQ(cv[i], av[i] * 2.0f + av[i]) << f;
    }
  }
}

TEST(Lower, GoldenComputeAtAndReductionInit) {
  Var n("n");
  Tensor X = placeholder({n + 2}, Float(32), "X");
  Tensor A = compute(
      {n + 2}, [&](Expr i) { return X(i) * 0.5f; }, "A");
  Tensor B = compute(
      {n}, [&](Expr i) { return A(i) + A(i + 1) + A(i + 2); }, "B");
  Schedule s = create_schedule({B});
  s[A].compute_at(s[B], B.axis(0));
  EXPECT_EQ(to_string(lower(s, {X, B}, "conv1d")),
            "func conv1d(X: float32[(n + 2)], B: float32[n]) {\n"
            "  for (i, 0, n) {\n"
            "    allocate A[float32 * 3] in global {\n"
            "      for (i_1, 0, 3) {\n"
            "        A[i_1] = (X[(i + i_1)] * 0.5f);\n"
            "      }\n"
            "      B[i] = ((A[0] + A[1]) + A[2]);\n"
            "    }\n"
            "  }\n"
            "}\n");

  Var m("m");
  Tensor M = placeholder({n, m}, Float(32), "M");
  IterVar k = reduce_axis({0, m}, "k");
  Tensor R = compute(
      {n}, [&](Expr i) { return sum(M(i, k), {k}); }, "R");
  Schedule t = create_schedule({R});
  t[R].reorder({k, R.axis(0)});
  EXPECT_EQ(to_string(lower(t, {M, R}, "row_sum")),
            "func row_sum(M: float32[n, m], R: float32[n]) {\n"
            "  for (i, 0, n) {\n"
            "    R[i] = 0.0f;\n"
            "  }\n"
            "  for (k, 0, m) {\n"
            "    for (i, 0, n) {\n"
            "      R[i] = (R[i] + M[((i * m) + k)]);\n"
            "    }\n"
            "  }\n"
            "}\n");
}
