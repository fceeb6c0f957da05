// Schedules as data: the leaf order and relations each primitive leaves behind
// (translated from TVM's test_te_schedule.py), and the stages cache_read, cache_write
// and rfactor create.
#include <gtest/gtest.h>

#include <te/te.h>

#include "test_util.h"

using namespace te;

namespace {

// True if the leaves are exactly `expected`, in order (by identity).
::testing::AssertionResult leaves_are(const Stage& st, const std::vector<IterVar>& expected) {
  const auto& leaves = st.leaf_iter_vars();
  std::string got;
  for (const IterVar& iv : leaves) got += iv.name() + " ";
  if (leaves.size() != expected.size()) return ::testing::AssertionFailure() << "leaves: " << got;
  for (size_t i = 0; i < leaves.size(); ++i)
    if (!leaves[i].same_as(expected[i])) return ::testing::AssertionFailure() << "leaves: " << got;
  return ::testing::AssertionSuccess();
}

template <typename R>
int count_relations(const Stage& st) {
  int n = 0;
  for (const Relation& r : st.relations()) n += std::holds_alternative<R>(r) ? 1 : 0;
  return n;
}

struct TwoD {
  Var m{"m"}, n{"n"};
  Tensor A = placeholder({m, n}, Float(32), "A");
  Tensor T = compute(
      {m, n}, [&](Expr i, Expr j) { return A(i, j); }, "T");
};

}  // namespace

TEST(Schedule, CreateMakesOneStagePerOperationInDependencyOrder) {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = compute(
      {n}, [&](Expr i) { return A(i) * 2.0f; }, "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return B(i) + A(i); }, "C");
  Schedule s = create_schedule({C});
  std::vector<Stage> stages = s.stages();
  ASSERT_EQ(stages.size(), 3u);
  EXPECT_EQ(stages[0].name(), "A");
  EXPECT_EQ(stages[1].name(), "B");
  EXPECT_EQ(stages[2].name(), "C");
  EXPECT_TRUE(s[C].is_output());
  EXPECT_FALSE(s[B].is_output());
  EXPECT_EQ(s[B].attach_type(), AttachType::Root);
  EXPECT_TRUE(leaves_are(s[C], {C.axis(0)}));
  EXPECT_TRUE(s[A].leaf_iter_vars().empty());
}

TEST(Schedule, SplitReplacesTheAxisByOuterAndInner) {
  TwoD g;
  Schedule s = create_schedule({g.T});
  auto [xo, xi] = s[g.T].split(g.T.axis(0), 10);
  EXPECT_TRUE(leaves_are(s[g.T], {xo, xi, g.T.axis(1)}));
  EXPECT_EQ(xo.name(), "i.outer");
  EXPECT_EQ(xi.name(), "i.inner");
  EXPECT_EQ(count_relations<SplitRelation>(s[g.T]), 1);
  EXPECT_EQ(s[g.T].all_iter_vars().size(), 4u);
  auto [po, pi] = s[g.T].split_nparts(g.T.axis(1), 4);
  EXPECT_TRUE(leaves_are(s[g.T], {xo, xi, po, pi}));
  EXPECT_TRUE(is_const_int(po.dom().extent, 4));
}

TEST(Schedule, TileGivesOuterOuterInnerInner) {
  TwoD g;
  Schedule s = create_schedule({g.T});
  auto [xo, yo, xi, yi] = s[g.T].tile(g.T.axis(0), g.T.axis(1), 10, 5);
  EXPECT_TRUE(leaves_are(s[g.T], {xo, yo, xi, yi}));
  EXPECT_EQ(yi.name(), "j.inner");
}

TEST(Schedule, FuseAfterTile) {
  TwoD g;
  Schedule s = create_schedule({g.T});
  auto [xo, yo, xi, yi] = s[g.T].tile(g.T.axis(0), g.T.axis(1), 10, 5);
  IterVar fused = s[g.T].fuse(xo, yo);
  EXPECT_EQ(count_relations<FuseRelation>(s[g.T]), 1);
  EXPECT_TRUE(leaves_are(s[g.T], {fused, xi, yi}));
  EXPECT_EQ(fused.name(), "i.outer.j.outer.fused");
}

TEST(Schedule, FuseWithSplit) {
  TwoD g;
  Schedule s = create_schedule({g.T});
  IterVar y = g.T.axis(1);
  auto [xo, xi] = s[g.T].split(g.T.axis(0), 10);
  IterVar fused = s[g.T].fuse(xi, y);
  EXPECT_EQ(count_relations<FuseRelation>(s[g.T]), 1);
  EXPECT_TRUE(leaves_are(s[g.T], {xo, fused}));
}

TEST(Schedule, FuseWithOutOfOrderAxesRaises) {
  TwoD g;
  Schedule s = create_schedule({g.T});
  IterVar y = g.T.axis(1);
  auto [xo, xi] = s[g.T].split(g.T.axis(0), 10);
  expect_error([&] { s[g.T].fuse(xo, y); }, {"fuse", "'i.outer'", "'j'", "stage 'T'", "not adjacent"});
  // Reversed adjacent axes are out of order too.
  expect_error([&] { s[g.T].fuse(xi, xo); }, {"fuse", "not adjacent", "'i.inner' directly outside 'i.outer'"});
  EXPECT_TRUE(leaves_are(s[g.T], {xo, xi, y}));  // a failed primitive changes nothing
}

TEST(Schedule, FuseWithOutOfOrderAxesAfterReorder) {
  TwoD g;
  Schedule s = create_schedule({g.T});
  IterVar y = g.T.axis(1);
  auto [xo, xi] = s[g.T].split(g.T.axis(0), 10);
  s[g.T].reorder({y, xo, xi});
  IterVar fused = s[g.T].fuse(y, xo);
  EXPECT_TRUE(leaves_are(s[g.T], {fused, xi}));

  Schedule t = create_schedule({g.T});
  auto [xo2, xi2] = t[g.T].split(g.T.axis(0), 10);
  t[g.T].reorder({y, xo2, xi2});
  expect_error([&] { t[g.T].fuse(y, xi2); }, {"fuse", "not adjacent"});
}

TEST(Schedule, FuseOfManyAxes) {
  Var a("a"), b("b"), c("c");
  Tensor A = placeholder({a, b, c}, Float(32), "A");
  Tensor T = compute(
      {a, b, c}, [&](Expr i, Expr j, Expr k) { return A(i, j, k); }, "T");
  Schedule s = create_schedule({T});
  IterVar f = s[T].fuse({T.axis(0), T.axis(1), T.axis(2)});
  EXPECT_TRUE(leaves_are(s[T], {f}));
  EXPECT_EQ(f.name(), "i.j.fused.k.fused");
  EXPECT_EQ(count_relations<FuseRelation>(s[T]), 2);
}

TEST(Schedule, FuseAndReorderTakeTheStagesOwnLeaves) {
  // The stage's leaves passed as they are (a reference to what the primitive changes).
  Tensor A = placeholder({4, 5, 6}, Float(32), "A");
  Tensor T = compute(
      {4, 5, 6}, [&](Expr i, Expr j, Expr k) { return A(i, j, k); }, "T");
  Schedule s = create_schedule({T});
  s[T].reorder(s[T].leaf_iter_vars());
  EXPECT_TRUE(leaves_are(s[T], {T.axis(0), T.axis(1), T.axis(2)}));
  IterVar f = s[T].fuse(s[T].leaf_iter_vars());
  EXPECT_TRUE(leaves_are(s[T], {f}));
  EXPECT_EQ(f.name(), "i.j.fused.k.fused");
}

TEST(Schedule, FuseOfAZeroDimensionalStageGivesASingleton) {
  Tensor A = placeholder({}, Float(32), "A");
  Tensor T = compute_from_vars(
      {}, [&](const std::vector<Var>&) { return A({}) + 1.0f; }, "T");
  Schedule s = create_schedule({T});
  EXPECT_TRUE(s[T].leaf_iter_vars().empty());
  IterVar fused = s[T].fuse(std::vector<IterVar>{});
  EXPECT_EQ(count_relations<SingletonRelation>(s[T]), 1);
  EXPECT_TRUE(leaves_are(s[T], {fused}));
  EXPECT_TRUE(is_one(fused.dom().extent));
}

TEST(Schedule, ReorderPutsTheGivenOrderInTheirPositions) {
  Var m("m");
  Tensor A = placeholder({m}, Float(32), "A");
  Tensor T = compute(
      {m}, [&](Expr i) { return A(i + 1); }, "T");
  Schedule s = create_schedule({T});
  auto [xo, xi] = s[T].split(T.axis(0), 10);
  auto [xi1, xi2] = s[T].split(xi, 2);
  EXPECT_FALSE(leaves_are(s[T], {xi2, xi1, xo}));
  s[T].reorder({xi2, xi1, xo});
  EXPECT_TRUE(leaves_are(s[T], {xi2, xi1, xo}));
  expect_error([&] { s[T].reorder({xi2, xi1, xi2}); }, {"reorder", "'i.inner.inner'", "appears twice"});
  // A partial reorder only permutes the positions of the axes it names.
  s[T].reorder({xo, xi2});
  EXPECT_TRUE(leaves_are(s[T], {xo, xi1, xi2}));
}

TEST(Schedule, AnnotationsAreRecordedPerLoop) {
  TwoD g;
  Schedule s = create_schedule({g.T});
  auto [xo, yo, xi, yi] = s[g.T].tile(g.T.axis(0), g.T.axis(1), 10, 5);
  s[g.T].vectorize(yi);
  s[g.T].unroll(xi);
  s[g.T].parallel(xo);
  IterVar bx = thread_axis("blockIdx.x");
  s[g.T].bind(yo, bx);
  EXPECT_EQ(s[g.T].for_kind(yi), ForKind::Vectorized);
  EXPECT_EQ(s[g.T].for_kind(xi), ForKind::Unrolled);
  EXPECT_EQ(s[g.T].for_kind(xo), ForKind::Parallel);
  EXPECT_EQ(s[g.T].for_kind(yo), ForKind::ThreadBinding);
  EXPECT_TRUE(s[g.T].bound_thread(yo).same_as(bx));
  EXPECT_FALSE(s[g.T].bound_thread(xo).defined());
}

TEST(Schedule, VectorizeOfAReductionAxisRaises) {
  Tensor V = placeholder({128}, Float(32), "V");
  IterVar ax = reduce_axis({0, 128}, "ax");
  Tensor O = compute(
      {1}, [&](Expr) { return sum(V(ax), {ax}); }, "O");
  Schedule s = create_schedule({O});
  expect_error([&] { s[O].vectorize(ax); }, {"vectorize", "'ax'", "stage 'O'", "reduction axis"});
}

TEST(Schedule, ComputeAtRecordsTheAttachPoint) {
  TwoD g;
  Tensor U = compute(
      {g.m, g.n}, [&](Expr i, Expr j) { return g.T(i, j) + 1.0f; }, "U");
  Schedule s = create_schedule({U});
  auto [xo, xi] = s[U].split(U.axis(0), 8);
  s[g.T].compute_at(s[U], xo);
  EXPECT_EQ(s[g.T].attach_type(), AttachType::Scope);
  EXPECT_TRUE(s[g.T].attach_stage().same_as(s[U]));
  EXPECT_TRUE(s[g.T].attach_ivar().same_as(xo));
  s[g.T].compute_root();
  EXPECT_EQ(s[g.T].attach_type(), AttachType::Root);
  s[g.T].compute_inline();
  EXPECT_EQ(s[g.T].attach_type(), AttachType::Inline);
}

TEST(Schedule, ComputeAtOntoItselfOrIntoACycleRaises) {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = compute(
      {n}, [&](Expr i) { return A(i) + 1.0f; }, "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return B(i) * 2.0f; }, "C");
  Tensor D = compute(
      {n}, [&](Expr i) { return C(i) - 1.0f; }, "D");
  Schedule s = create_schedule({D});
  expect_error([&] { s[B].compute_at(s[B], B.axis(0)); }, {"compute_at", "stage 'B'", "its own loops"});
  s[B].compute_at(s[C], C.axis(0));
  expect_error([&] { s[C].compute_at(s[B], B.axis(0)); },
               {"compute_at", "stage 'C'", "stage 'B'", "cycle", "'B' is itself computed inside 'C'"});
  expect_error([&] { s[D].compute_at(s[C], C.axis(0)); }, {"compute_at", "'D' is an output"});
}

TEST(Schedule, CacheReadRedirectsOnlyTheGivenReaders) {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = compute(
      {n}, [&](Expr i) { return A(i) + 1.0f; }, "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return A(i) * B(i); }, "C");
  Schedule s = create_schedule({C});
  Tensor AS = s.cache_read(A, "shared", {C});
  EXPECT_EQ(AS.name(), "A.shared");
  EXPECT_EQ(s[AS].scope(), MemoryScope::Shared);
  std::vector<Stage> st = s.stages();
  ASSERT_EQ(st.size(), 4u);
  EXPECT_EQ(st[1].name(), "A.shared");  // right after its source
  // C reads the copy (and the rewritten B); B still reads A.
  auto reads = [](const Operation& op) {
    std::vector<std::string> names;
    for (const Operation& in : op->inputs) names.push_back(in->name);
    return names;
  };
  EXPECT_EQ(reads(s[C].op()), (std::vector<std::string>{"A.shared", "B"}));
  EXPECT_EQ(reads(s[B].op()), (std::vector<std::string>{"A"}));
  // The readers keep their axes, so axes taken before cache_read still schedule them.
  EXPECT_TRUE(s[C].op()->axis[0].same_as(C.axis(0)));
  s[C].split(C.axis(0), 4);
}

TEST(Schedule, CacheWriteMovesTheExpressionToTheCacheStage) {
  Var n("n");
  Tensor A = placeholder({n, n}, Float(32), "A");
  IterVar k = reduce_axis({0, n}, "k");
  Tensor C = compute(
      {n}, [&](Expr i) { return sum(A(i, k), {k}); }, "C");
  Tensor D = compute(
      {n}, [&](Expr i) { return C(i) + 1.0f; }, "D");
  Schedule s = create_schedule({D});
  Tensor CL = s.cache_write(C, "local");
  EXPECT_EQ(CL.name(), "C.local");
  std::vector<Stage> st = s.stages();
  ASSERT_EQ(st.size(), 4u);
  EXPECT_EQ(st[1].name(), "C.local");
  EXPECT_EQ(st[2].name(), "C");
  // The reduction (and its axis k) moved to C.local; C copies it out over C's own axes.
  EXPECT_TRUE(CL.reduce_axis(0).same_as(k));
  EXPECT_TRUE(s[C].op()->reduce_axis.empty());
  EXPECT_TRUE(leaves_are(s[C], {C.axis(0)}));
  EXPECT_TRUE(leaves_are(s[CL], {CL.axis(0), k}));
  EXPECT_EQ(CL.axis(0).name(), "i.c");
  EXPECT_EQ(s[D].op()->inputs[0], s[C].op());  // D reads the new C
}

TEST(Schedule, RfactorShapesForFactorAxisZeroAndOne) {
  Var n("n");
  IterVar k1 = reduce_axis({0, n}, "k1");
  IterVar k2 = reduce_axis({0, n}, "k2");
  Tensor A = placeholder({n, n, n}, Float(32), "A");
  Tensor B = compute(
      {n},
      [&](Expr i) {
        return sum(A(i, k1, k2), {k1, k2});
      },
      "B");
  {
    Schedule s = create_schedule({B});
    Tensor BF = s.rfactor(B, k1);
    ASSERT_EQ(BF.ndim(), 2);
    EXPECT_TRUE(equal(BF.shape()[0], n));
    EXPECT_TRUE(equal(BF.shape()[1], n));
    ASSERT_EQ(BF.op()->reduce_axis.size(), 1u);
    EXPECT_TRUE(BF.op()->reduce_axis[0].same_as(k2));
    ASSERT_EQ(s[B].op()->reduce_axis.size(), 1u);
    EXPECT_TRUE(equal(s[B].op()->reduce_axis[0].dom().extent, n));
    EXPECT_EQ(s[B].all_iter_vars().size(), 2u);
  }
  {
    Schedule s = create_schedule({B});
    auto [ko, ki] = s[B].split(k1, 4);
    Tensor BF = s.rfactor(B, ki);
    EXPECT_TRUE(is_const_int(BF.shape()[0], 4));
    EXPECT_TRUE(equal(BF.shape()[1], n));
    ASSERT_EQ(BF.op()->reduce_axis.size(), 2u);
    EXPECT_TRUE(BF.op()->reduce_axis[0].same_as(k2));
    EXPECT_TRUE(BF.op()->reduce_axis[1].var().same_as(ko.var()));
    EXPECT_TRUE(is_const_int(s[B].op()->reduce_axis[0].dom().extent, 4));
    EXPECT_TRUE(s[B].relations().empty());  // rfactor resets the reduced stage's loops
  }
  {
    Schedule s = create_schedule({B});
    auto [ko, ki] = s[B].split(k1, 4);
    Tensor BF = s.rfactor(B, ki, 1);
    EXPECT_TRUE(equal(BF.shape()[0], n));
    EXPECT_TRUE(is_const_int(BF.shape()[1], 4));
    EXPECT_TRUE(BF.op()->reduce_axis[0].same_as(k2));
    EXPECT_TRUE(BF.op()->reduce_axis[1].var().same_as(ko.var()));
    EXPECT_TRUE(is_const_int(s[B].op()->reduce_axis[0].dom().extent, 4));
  }
}

TEST(Schedule, CopyIsIndependent) {
  TwoD g;
  Schedule s = create_schedule({g.T});
  Schedule t = s.copy();
  t[g.T].split(g.T.axis(0), 4);
  EXPECT_TRUE(leaves_are(s[g.T], {g.T.axis(0), g.T.axis(1)}));
  EXPECT_EQ(t[g.T].leaf_iter_vars().size(), 3u);
}
