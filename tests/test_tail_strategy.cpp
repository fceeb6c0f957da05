// split(..., TailStrategy::ShiftInwards): the last outer iteration starts at extent - factor
// (no guard, the vector stays whole), falls back to guards where the extent may be smaller
// than the factor, keeps producers computed at the split correct, and refuses reductions.
#include <gtest/gtest.h>

#include <te/te.h>

#include "test_lower_util.h"
#include "test_util.h"

using namespace te;
using namespace lower_test;

namespace {

struct VAdd {
  explicit VAdd(Expr n) : A(placeholder({n}, Float(32), "A")), B(placeholder({n}, Float(32), "B")) {
    C = compute(
        {n}, [&](Expr i) { return A(i) + B(i); }, "C");
  }
  Tensor A, B, C;
};

void check_vadd(const LoweredFunc& f, int64_t len, const std::string& what) { check_vector_add(f, what, {len}); }

int count_min(const Stmt& s) {
  return count_exprs(s, [](const Expr& e) {
    const auto* b = e.as<BinaryNode>();
    return b && b->op == BinOp::Min;
  });
}

}  // namespace

TEST(TailStrategy, ShiftInwardsKeepsTheLastVectorWhole) {
  VAdd v(20);
  Schedule s = create_schedule({v.C});
  auto [xo, xi] = s[v.C].split(v.C.axis(0), 8, TailStrategy::ShiftInwards);
  s[v.C].vectorize(xi);
  LoweredFunc f = lower(s, {v.A, v.B, v.C}, "vadd");
  EXPECT_EQ(to_string(f),
            "func vadd(A: float32[20], B: float32[20], C: float32[20]) {\n"
            "  for (i.outer, 0, 3) {\n"
            "    let idx = min((i.outer * 8), 12);\n"
            "    C[ramp(idx, 1, 8)] = (A[ramp(idx, 1, 8)] + B[ramp(idx, 1, 8)]);\n"
            "  }\n"
            "}\n");
  check_vadd(f, 20, "shift inwards, vectorized");
}

TEST(TailStrategy, GuardWithIfIsTheDefault) {
  VAdd v(20);
  Schedule s = create_schedule({v.C});
  auto [xo, xi] = s[v.C].split(v.C.axis(0), 8);
  EXPECT_EQ(std::get<SplitRelation>(s[v.C].relations().at(0)).tail, TailStrategy::GuardWithIf);
  LoweredFunc f = lower(s, {v.A, v.B, v.C}, "vadd");
  EXPECT_EQ(count_guards(f.body), 1);
  EXPECT_EQ(count_min(f.body), 0);
  check_vadd(f, 20, "guard with if");
}

TEST(TailStrategy, EvenSplitsAndShortExtentsNeedNoShift) {
  for (int64_t len : {16, 5}) {  // 8 divides 16; 5 < 8 makes the inner loop 5 long
    VAdd v(make_const(Int(32), len));
    Schedule s = create_schedule({v.C});
    s[v.C].split(v.C.axis(0), 8, TailStrategy::ShiftInwards);
    LoweredFunc f = lower(s, {v.A, v.B, v.C}, "vadd");
    EXPECT_EQ(count_min(f.body), 0) << to_string(f);
    EXPECT_EQ(count_guards(f.body), 0) << to_string(f);
    check_vadd(f, len, "no shift needed");
  }
}

TEST(TailStrategy, SymbolicExtentFallsBackToGuards) {
  // n may be smaller than the factor: shifting could start below 0, so the split guards.
  Var n("n");
  VAdd v(n);
  Schedule s = create_schedule({v.C});
  auto [xo, xi] = s[v.C].split(v.C.axis(0), 8, TailStrategy::ShiftInwards);
  s[v.C].vectorize(xi);
  LoweredFunc f = lower(s, {v.A, v.B, v.C}, "vadd");
  EXPECT_GT(count_guards(f.body), 0) << to_string(f);
  for (int64_t len : {1, 7, 8, 20, 129}) check_vadd(f, len, "symbolic");
}

TEST(TailStrategy, ShiftedSplitsNestAndFuse) {
  // 2-D: both axes shifted, then fused and parallel; a producer computed inside the shifted
  // loop gets the shifted region.
  Tensor A = placeholder({13, 21}, Float(32), "A");
  Tensor B = compute(
      {13, 21}, [&](Expr i, Expr j) { return A(i, j) * 2.0f; }, "B");
  Tensor C = compute(
      {13, 21}, [&](Expr i, Expr j) { return B(i, j) + B(i, j) * B(i, j); }, "C");
  Schedule s = create_schedule({C});
  auto [io, ii] = s[C].split(C.axis(0), 4, TailStrategy::ShiftInwards);
  auto [jo, ji] = s[C].split(C.axis(1), 8, TailStrategy::ShiftInwards);
  s[C].reorder({io, jo, ii, ji});
  IterVar outer = s[C].fuse(io, jo);
  s[C].parallel(outer);
  s[C].vectorize(ji);
  s[B].compute_at(s[C], outer);
  LoweredFunc f = lower(s, {A, C}, "shifted2d");
  EXPECT_EQ(count_guards(f.body), 0) << to_string(f);
  NDArray a = input({13, 21}, 3), c = output({13, 21});
  run_backends(f, {a, c});
  auto av = a.to_vector<float>();
  std::vector<float> want(av.size());
  for (size_t i = 0; i < want.size(); ++i) want[i] = av[i] * 2.0f + (av[i] * 2.0f) * (av[i] * 2.0f);
  expect_close(c.to_vector<float>(), want, 1e-6f, "shifted 2-D");
}

TEST(TailStrategy, ReductionsRefuseShiftInwards) {
  Tensor A = placeholder({10, 10}, Float(32), "A");
  IterVar k = reduce_axis({0, 10}, "k");
  Tensor S = compute(
      {10}, [&](Expr i) { return sum(A(i, k.var()), {k}); }, "S");
  Schedule s = create_schedule({S});
  expect_error([&] { s[S].split(S.axis(0), 4, TailStrategy::ShiftInwards); },
               {"split", "ShiftInwards", "axis 'i'", "stage 'S'", "reduction", "GuardWithIf"});
  expect_error([&] { s[S].split(k, 4, TailStrategy::ShiftInwards); }, {"split", "ShiftInwards", "axis 'k'"});
  // The stage is unchanged, and the default still works.
  EXPECT_TRUE(s[S].relations().empty());
  s[S].split(S.axis(0), 4);
}

// GuardWholeTiles: the inner loop keeps the factor's iterations even where the extent is
// smaller, so a producer computed inside a tile covers the whole tile (a tensor core's 16
// rows, attention's queries padded to whole tiles); the points past the extent are
// guarded off (and a loop part where the guard never holds is dropped).
TEST(TailStrategy, GuardWholeTilesKeepsShortTilesWhole) {
  Tensor A = placeholder({5}, Float(32), "A");
  Tensor P = compute(
      {8}, [&](Expr i) { return if_then_else(i < 5, A(i) * 2.0f, 0.0f); }, "P");  // padded to a tile
  Tensor C = compute(
      {5}, [&](Expr i) { return P(i) + 1.0f; }, "C");
  for (TailStrategy tail : {TailStrategy::GuardWithIf, TailStrategy::GuardWholeTiles}) {
    Schedule s = create_schedule({C});
    auto [xo, xi] = s[C].split(C.axis(0), 8, tail);
    s[P].compute_at(s[C], xo);
    LoweredFunc f = lower(s, {A, C}, "whole_tiles");
    const bool whole = tail == TailStrategy::GuardWholeTiles;
    // The producer covers what the loop reads: 5 elements, or the whole tile of 8.
    EXPECT_NE(to_string(f).find(whole ? "P[float32 * 8]" : "P[float32 * 5]"), std::string::npos) << to_string(f);
    EXPECT_NE(to_string(f).find("for (i.inner, 0, 5)"), std::string::npos) << to_string(f);
    EXPECT_EQ(count_guards(f.body), 0) << to_string(f);
    NDArray a = NDArray::from_vector(std::vector<float>{1, 2, 3, 4, 5}, {5}), c = NDArray::empty({5}, Float(32));
    interpret(f, {a, c});
    EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{3, 5, 7, 9, 11}));
  }
}
