// Bound inference, translated from TVM's test_te_schedule_bound_inference.py.
#include <gtest/gtest.h>

#include <te/te.h>

using namespace te;

namespace {

int64_t const_extent(const BoundMap& b, const IterVar& iv) {
  const int64_t* v = as_const_int(simplify(b.at(iv).extent));
  EXPECT_NE(v, nullptr) << iv.name() << " has extent " << b.at(iv).extent;
  return v ? *v : -1;
}

// The value of e with the given variables replaced by constants.
int64_t value_of(const Expr& e, const std::vector<std::pair<Var, Expr>>& values) {
  Expr v = simplify(substitute(e, values));
  const int64_t* c = as_const_int(v);
  EXPECT_NE(c, nullptr) << e << " does not fold to a constant: " << v;
  return c ? *c : INT64_MIN;
}

struct Chain {
  Var m{"m"}, l{"l"};
  Tensor A = placeholder({m, l}, Float(32), "A");
  Tensor A1 = compute(
      {m, l}, [&](Expr i, Expr j) { return A(i, j); }, "A1");
  Tensor A2 = compute(
      {m, l}, [&](Expr i, Expr j) { return A1(i, j) + 3.0f; }, "A2");
};

}  // namespace

TEST(Bound, ProducerAtASplitCoversOneOuterIteration) {
  Chain c;
  Schedule s = create_schedule({c.A2});
  auto [xo, xi] = s[c.A2].split(c.A2.axis(0), 8);
  s[c.A1].compute_at(s[c.A2], xo);
  BoundMap b = infer_bound(s);
  EXPECT_EQ(const_extent(b, c.A1.axis(0)), 8);
  EXPECT_TRUE(equal(b.at(c.A1.axis(1)).extent, c.l));
  EXPECT_TRUE(equal(b.at(c.A2.axis(0)).extent, c.m));
}

TEST(Bound, ProducerAtATileCoversOneTile) {
  Chain c;
  Schedule s = create_schedule({c.A2});
  auto [xo, yo, xi, yi] = s[c.A2].tile(c.A2.axis(0), c.A2.axis(1), 8, 8);
  s[c.A1].compute_at(s[c.A2], yo);
  BoundMap b = infer_bound(s);
  EXPECT_EQ(const_extent(b, c.A1.axis(0)), 8);
  EXPECT_EQ(const_extent(b, c.A1.axis(1)), 8);
}

TEST(Bound, SharedProducerCoversTheThreadsThatShareIt) {
  Chain c;
  Schedule s = create_schedule({c.A2});
  s[c.A1].set_scope("shared");
  auto [xo, xi] = s[c.A2].split(c.A2.axis(0), 32);
  auto [xi0, xi1] = s[c.A2].split_nparts(xi, 16);
  s[c.A2].bind(xi0, thread_axis("threadIdx.x"));
  auto [yo, yi] = s[c.A2].split(c.A2.axis(1), 16);
  s[c.A2].reorder({xo, xi0, yo, xi1, yi});
  s[c.A1].compute_at(s[c.A2], yo);
  BoundMap b = infer_bound(s);
  EXPECT_EQ(const_extent(b, c.A1.axis(0)), 32);  // threadIdx.x outside yo is relaxed
  EXPECT_EQ(const_extent(b, c.A1.axis(1)), 16);
}

TEST(Bound, SplitExtentSmallerThanTheFactor) {
  Tensor I = placeholder({8}, Float(32), "I");
  Tensor EF = compute(
      {8}, [&](Expr i) { return I(i) * 2.0f; }, "EF");
  Tensor E = compute(
      {8}, [&](Expr i) { return EF(i) * 2.0f; }, "E");
  {
    Schedule s = create_schedule({E});
    auto [xo, xi] = s[E].split(E.axis(0), 32);
    s[EF].compute_at(s[E], xo);
    BoundMap b = infer_bound(s);
    EXPECT_EQ(const_extent(b, xi), 8);
    EXPECT_EQ(const_extent(b, xo), 1);
  }
  {
    Schedule s = create_schedule({E});
    auto [xo, xi] = s[E].split_nparts(E.axis(0), 32);
    s[EF].compute_at(s[E], xo);
    BoundMap b = infer_bound(s);
    EXPECT_EQ(const_extent(b, xo), 8);
  }
}

TEST(Bound, DivisibleSplitsGiveExactOuterExtents) {
  Var m("m"), l("l");
  Tensor A = placeholder({8 * m, l}, Float(32), "A");
  Tensor B = compute(
      {8 * m, l}, [&](Expr i, Expr j) { return A(i, j); }, "B");
  Schedule s = create_schedule({B});
  auto [xo, xi] = s[B].split(B.axis(0), 8);
  BoundMap b = infer_bound(s);
  EXPECT_TRUE(equal(b.at(xo).extent, m)) << b.at(xo).extent;
  EXPECT_EQ(const_extent(b, xi), 8);

  Tensor A3 = placeholder({8 * m, 32 * l}, Float(32), "A3");
  Tensor B3 = compute(
      {8 * m, 32 * l}, [&](Expr i, Expr j) { return A3(i, j); }, "B3");
  Schedule t = create_schedule({B3});
  auto [to, uo, ti, ui] = t[B3].tile(B3.axis(0), B3.axis(1), 8, 32);
  BoundMap tb = infer_bound(t);
  EXPECT_TRUE(equal(tb.at(to).extent, m)) << tb.at(to).extent;
  EXPECT_EQ(const_extent(tb, ti), 8);
  EXPECT_TRUE(equal(tb.at(uo).extent, l)) << tb.at(uo).extent;
  EXPECT_EQ(const_extent(tb, ui), 32);
}

TEST(Bound, FuseThenSplitWithSymbolicSizes) {
  Chain c;
  Var split("s");
  Schedule s = create_schedule({c.A2});
  IterVar fused = s[c.A2].fuse(c.A2.axis(0), c.A2.axis(1));
  auto [xo, xi] = s[c.A2].split(fused, split);
  s[c.A1].compute_at(s[c.A2], xo);
  BoundMap b = infer_bound(s);
  const Range& r0 = b.at(c.A1.axis(0));
  for (int sv = 1; sv <= 5; ++sv)
    for (int lv = 1; lv <= 5; ++lv)
      for (int xv = 1; xv <= 5; ++xv) {
        std::vector<std::pair<Var, Expr>> at = {{split, sv}, {c.l, lv}, {xo.var(), xv}};
        auto floordiv = [](int a, int d) { return a / d; };  // non-negative here
        EXPECT_EQ(value_of(r0.min, at), floordiv(xv * sv, lv));
        EXPECT_EQ(value_of(r0.extent, at), floordiv((xv + 1) * sv - 1, lv) - floordiv(xv * sv, lv) + 1);
      }
  EXPECT_TRUE(equal(simplify(b.at(c.A1.axis(1)).extent), c.l)) << b.at(c.A1.axis(1)).extent;
}

TEST(Bound, Conv1dProducerInsideTheConsumerNeedsThree) {
  Var n("n");
  Tensor A = compute(
      {n + 2}, [&](Expr) { return Expr(1.0f); }, "A");
  Tensor B = compute(
      {n},
      [&](Expr ii) {
        Expr i = ii + 1;
        return A(i - 1) + A(i) + A(i + 1);
      },
      "B");
  Schedule s = create_schedule({B});
  s[A].compute_at(s[B], B.axis(0));
  BoundMap b = infer_bound(s);
  EXPECT_EQ(const_extent(b, A.axis(0)), 3);
}

TEST(Bound, BlurProducerInsideTheConsumerNeedsThreeByThree) {
  Tensor A = compute(
      {12, 12}, [&](Expr, Expr) { return Expr(1.0f); }, "A");
  Tensor B = compute(
      {10, 10},
      [&](Expr ii, Expr jj) {
        Expr i = ii + 1, j = jj + 1;
        return A(i, j) + A(i - 1, j) + A(i + 1, j) + A(i, j + 1) + A(i, j - 1);
      },
      "B");
  Schedule s = create_schedule({B});
  s[A].compute_at(s[B], B.axis(1));
  BoundMap b = infer_bound(s);
  EXPECT_EQ(const_extent(b, A.axis(0)), 3);
  EXPECT_EQ(const_extent(b, A.axis(1)), 3);
}

TEST(Bound, NestedThreadsLocalVersusShared) {
  Var m("m");
  Tensor A = placeholder({m}, Float(32), "A");
  Tensor A1 = compute(
      {m}, [&](Expr i) { return A(i); }, "A1");
  Tensor A2 = compute(
      {m}, [&](Expr i) { return A1(i) + 2.0f; }, "A2");
  Tensor A3 = compute(
      {m}, [&](Expr i) { return A2(i) + 3.0f; }, "A3");
  Schedule s = create_schedule({A3});
  s[A2].set_scope("shared");
  s[A1].set_scope("local");
  IterVar block_x = thread_axis("blockIdx.x"), thread_x = thread_axis("threadIdx.x");
  auto [bx, tx] = s[A3].split(A3.axis(0), 32);
  s[A3].bind(bx, block_x);
  s[A3].bind(tx, thread_x);
  s[A2].compute_at(s[A3], tx);
  auto [xo, xi] = s[A2].split_nparts(A2.axis(0), 1);
  s[A2].bind(xi, thread_x);
  s[A1].compute_at(s[A3], tx);
  BoundMap b = infer_bound(s);
  EXPECT_EQ(const_extent(b, A1.axis(0)), 1);   // local: one element per thread
  EXPECT_EQ(const_extent(b, A2.axis(0)), 32);  // shared: the whole block's elements
  EXPECT_TRUE(equal(b.at(A3.axis(0)).extent, m));
}

TEST(Bound, GemmWithSharedAndLocalCaches) {
  const int nn = 1024;
  Tensor A = placeholder({nn, nn}, Float(32), "A");
  Tensor B = placeholder({nn, nn}, Float(32), "B");
  IterVar k = reduce_axis({0, nn}, "k");
  Tensor C = compute(
      {nn, nn}, [&](Expr ii, Expr jj) { return sum(A(ii, k) * B(jj, k), {k}); }, "C");
  Schedule s = create_schedule({C});
  const int scale = 8, num_thread = 8, block_factor = scale * num_thread;
  IterVar block_x = thread_axis("blockIdx.x"), thread_x = thread_axis("threadIdx.x");
  IterVar block_y = thread_axis("blockIdx.y"), thread_y = thread_axis("threadIdx.y");
  Tensor CC = s.cache_write(C, "local");
  Tensor AA = s.cache_read(A, "shared", {CC});
  Tensor BB = s.cache_read(B, "shared", {CC});
  auto [by, yi] = s[C].split(C.axis(0), block_factor);
  auto [bx, xi] = s[C].split(C.axis(1), block_factor);
  s[C].reorder({by, bx, yi, xi});
  s[C].bind(by, block_y);
  s[C].bind(bx, block_x);
  auto [ty, yi2] = s[C].split_nparts(yi, num_thread);
  auto [tx, xi2] = s[C].split_nparts(xi, num_thread);
  s[C].reorder({ty, tx, yi2, xi2});
  s[C].bind(ty, thread_y);
  s[C].bind(tx, thread_x);
  s[CC].reorder({k, CC.axis(0), CC.axis(1)});
  s[CC].compute_at(s[C], tx);
  s[AA].compute_at(s[CC], k);
  s[BB].compute_at(s[CC], k);
  for (const Tensor& T : {AA, BB}) {
    auto [t_y, rest] = s[T].split_nparts(T.axis(0), num_thread);
    auto [t_x, rest2] = s[T].split_nparts(rest, num_thread);
    s[T].bind(t_y, thread_y);
    s[T].bind(t_x, thread_x);
  }
  BoundMap b = infer_bound(s);
  EXPECT_EQ(const_extent(b, BB.axis(0)), 64);
  EXPECT_EQ(const_extent(b, AA.axis(0)), 64);
  EXPECT_EQ(const_extent(b, AA.axis(1)), 1);
  EXPECT_EQ(const_extent(b, CC.axis(0)), 8);
  EXPECT_EQ(const_extent(b, CC.axis(1)), 8);
}

TEST(Bound, RfactorStageCoversTheFactoredParts) {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  IterVar k = reduce_axis({0, n}, "k");
  Tensor B = compute(
      {1}, [&](Expr i) { return sum(A(k), {k}, i > 1); }, "B");
  Schedule s = create_schedule({B});
  auto [kf, ki] = s[B].split_nparts(k, 4);
  Tensor BF = s.rfactor(B, kf);
  BoundMap b = infer_bound(s);
  EXPECT_EQ(const_extent(b, BF.axis(0)), 4);
  EXPECT_EQ(const_extent(b, BF.axis(1)), 1);
}

TEST(Bound, ReadsBeyondTheTensorStopAtItsEdges) {
  // A guarded read outside the producer (padding) does not enlarge its region.
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = compute(
      {n}, [&](Expr i) { return A(i) * 2.0f; }, "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return if_then_else(i >= 1, B(i - 1), Expr(0.0f)) + B(i); }, "C");
  Schedule s = create_schedule({C});
  BoundMap b = infer_bound(s);
  EXPECT_TRUE(is_zero(b.at(B.axis(0)).min)) << b.at(B.axis(0)).min;
  EXPECT_TRUE(equal(b.at(B.axis(0)).extent, n)) << b.at(B.axis(0)).extent;
}
