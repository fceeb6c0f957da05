// Every rule a schedule primitive (and lower()) checks: each error names the primitive,
// the stage, the axis and the rule.
#include <gtest/gtest.h>

#include <te/te.h>

#include "test_util.h"

using namespace te;

namespace {

// A -> B -> C (a reduction) -> D, with the usual handles.
struct Graph {
  Var n{"n"};
  Tensor A = placeholder({n, n}, Float(32), "A");
  Tensor B = compute(
      {n, n}, [&](Expr i, Expr j) { return A(i, j) * 2.0f; }, "B");
  IterVar k = reduce_axis({0, n}, "k");
  Tensor C = compute(
      {n}, [&](Expr i) { return sum(B(i, k), {k}); }, "C");
  Tensor D = compute(
      {n}, [&](Expr i) { return C(i) + 1.0f; }, "D");
  Schedule s = create_schedule({D});
};

}  // namespace

TEST(ScheduleErrors, Split) {
  Graph g;
  expect_error([&] { g.s[g.A].split(g.B.axis(0), 4); }, {"split", "stage 'A'", "placeholder"});
  expect_error([&] { g.s[g.C].split(g.B.axis(0), 4); },
               {"split", "axis 'i'", "not an axis of stage 'C'", "another stage"});
  g.s[g.C].split(g.C.axis(0), 4);
  expect_error([&] { g.s[g.C].split(g.C.axis(0), 4); }, {"split", "axis 'i'", "stage 'C'", "already split or fused"});
  expect_error([&] { g.s[g.B].split(g.B.axis(0), 0); },
               {"split", "factor", "axis 'i'", "stage 'B'", "must be positive", "got 0"});
  expect_error([&] { g.s[g.B].split_nparts(g.B.axis(0), -2); },
               {"split_nparts", "number of parts", "axis 'i'", "stage 'B'", "must be positive", "got -2"});
  expect_error([&] { g.s[g.B].split(g.B.axis(0), Expr(2.0f)); },
               {"split", "factor", "axis 'i'", "stage 'B'", "must be an integer"});
  g.s[g.B].vectorize(g.B.axis(1));
  expect_error([&] { g.s[g.B].split(g.B.axis(1), 2); }, {"split", "axis 'j'", "stage 'B'", "already vectorized"});
  g.s[g.B].compute_at(g.s[g.D], g.D.axis(0));
  expect_error([&] { g.s[g.D].split(g.D.axis(0), 2); },
               {"split", "stage 'B' is computed at axis 'i' of stage 'D'", "before compute_at"});
}

TEST(ScheduleErrors, FuseReorderTile) {
  Graph g;
  expect_error([&] { g.s[g.B].fuse(g.B.axis(1), g.B.axis(0)); },
               {"fuse", "'j'", "'i'", "stage 'B'", "not adjacent", "'j' directly outside 'i'"});
  expect_error([&] { g.s[g.C].fuse(g.C.axis(0), g.k); },
               {"fuse", "'i'", "'k'", "stage 'C'", "mix a data-parallel and a reduction axis"});
  expect_error([&] { g.s[g.B].fuse(std::vector<IterVar>{}); }, {"fuse", "no axes", "stage 'B'"});
  expect_error(
      [&] {
        g.s[g.B].reorder({g.B.axis(1), g.B.axis(1)});
      },
      {"reorder", "axis 'j'", "stage 'B'", "appears twice"});
  expect_error([&] { g.s[g.B].reorder({g.C.axis(0)}); }, {"reorder", "not an axis of stage 'B'"});
  expect_error([&] { g.s[g.B].tile(g.B.axis(0), g.B.axis(0), 4, 4); }, {"tile", "stage 'B'", "same axis 'i'"});
  expect_error([&] { g.s[g.B].tile(g.B.axis(0), g.B.axis(1), 4, 0); },
               {"tile", "factor", "axis 'j'", "must be positive"});
  EXPECT_EQ(g.s[g.B].leaf_iter_vars().size(), 2u);  // the failed tile split nothing
}

TEST(ScheduleErrors, BindAndAnnotations) {
  Graph g;
  IterVar tx = thread_axis("threadIdx.x");
  expect_error([&] { g.s[g.B].bind(g.B.axis(0), g.B.axis(1)); }, {"bind", "axis 'i'", "stage 'B'", "thread_axis"});
  g.s[g.B].bind(g.B.axis(0), thread_axis("blockIdx.x"));
  expect_error([&] { g.s[g.B].bind(g.B.axis(0), tx); },
               {"bind", "axis 'i'", "stage 'B'", "already bound to blockIdx.x"});
  g.s[g.B].bind(g.B.axis(1), tx);
  auto [xo, xi] = g.s[g.D].split(g.D.axis(0), 32);
  g.s[g.D].bind(xi, tx);
  expect_error([&] { g.s[g.D].bind(xo, thread_axis("threadIdx.x")); },
               {"bind", "thread tag threadIdx.x", "already bound to axis 'i.inner'", "stage 'D'"});
  expect_error([&] { g.s[g.C].bind(g.k, thread_axis("blockIdx.x")); },
               {"bind", "axis 'k'", "stage 'C'", "reduction axis", "threadIdx.x/y/z", "not to blockIdx.x", "rfactor"});
  expect_error([&] { g.s[g.C].bind(g.k, thread_axis("vthread")); },
               {"bind", "axis 'k'", "stage 'C'", "reduction axis", "not to vthread"});
  expect_error([&] { g.s[g.C].vectorize(g.k); }, {"vectorize", "axis 'k'", "stage 'C'", "reduction axis"});
  expect_error([&] { g.s[g.C].parallel(g.k); }, {"parallel", "axis 'k'", "stage 'C'", "reduction axis"});
  expect_error([&] { g.s[g.D].unroll(xi); }, {"unroll", "axis 'i.inner'", "stage 'D'", "already bound to threadIdx.x"});
  g.s[g.C].unroll(g.k);  // unrolling a reduction is fine
  expect_error([&] { g.s[g.C].unroll(g.k); }, {"unroll", "axis 'k'", "stage 'C'", "already unrolled"});
  expect_error([&] { g.s[g.A].vectorize(g.B.axis(0)); }, {"vectorize", "stage 'A'", "placeholder"});
}

TEST(ScheduleErrors, ComputeAt) {
  Graph g;
  expect_error([&] { g.s[g.A].compute_at(g.s[g.C], g.C.axis(0)); }, {"compute_at", "stage 'A'", "placeholder"});
  expect_error([&] { g.s[g.C].compute_at(g.s[g.C], g.C.axis(0)); }, {"compute_at", "stage 'C'", "its own loops"});
  expect_error([&] { g.s[g.D].compute_at(g.s[g.C], g.C.axis(0)); }, {"compute_at", "stage 'D'", "is an output"});
  expect_error([&] { g.s[g.B].compute_at(g.s[g.C], g.D.axis(0)); },
               {"compute_at", "axis 'i'", "not an axis of stage 'C'"});
  Tensor E = compute(
      {g.n}, [&](Expr i) { return g.A(i, i); }, "E");
  Schedule s2 = create_schedule({g.D, E});
  expect_error([&] { s2[g.B].compute_at(s2[E], E.axis(0)); },
               {"compute_at", "stage 'E' does not read stage 'B'", "consumers"});
  s2[g.B].compute_at(s2[g.C], g.C.axis(0));
  expect_error([&] { s2[g.C].compute_at(s2[g.B], g.B.axis(0)); }, {"compute_at", "cycle"});
}

TEST(ScheduleErrors, ComputeInlineAndScope) {
  Graph g;
  expect_error([&] { g.s[g.C].compute_inline(); }, {"compute_inline", "stage 'C'", "reduction"});
  expect_error([&] { g.s[g.D].compute_inline(); }, {"compute_inline", "stage 'D'", "output"});
  expect_error([&] { g.s[g.A].compute_inline(); }, {"compute_inline", "stage 'A'", "placeholder"});
  g.s[g.B].compute_at(g.s[g.C], g.C.axis(0));
  Tensor E = compute(
      {g.n}, [&](Expr i) { return g.D(i) * 3.0f; }, "E");
  Schedule s = create_schedule({E});
  s[g.C].compute_at(s[g.D], g.D.axis(0));
  expect_error([&] { s[g.D].compute_inline(); },
               {"compute_inline", "stage 'C' is computed at axis 'i' of stage 'D'", "cannot be inlined"});
  s[g.B].compute_inline();
  expect_error([&] { s[g.A].compute_at(s[g.B], g.B.axis(0)); }, {"compute_at", "placeholder"});
  Tensor F = compute(
      {g.n}, [&](Expr i) { return g.A(i, 0) + 1.0f; }, "F");
  Tensor G = compute(
      {g.n}, [&](Expr i) { return F(i) * 2.0f; }, "G");
  Tensor H = compute(
      {g.n}, [&](Expr i) { return G(i) * 2.0f; }, "H");
  Schedule t = create_schedule({H});
  t[G].compute_inline();
  expect_error([&] { t[F].compute_at(t[G], G.axis(0)); }, {"compute_at", "stage 'G' is inlined"});
  expect_error([&] { t[F].set_scope("texture"); }, {"set_scope", "'texture'", "stage 'F'", "\"shared\""});
}

TEST(ScheduleErrors, CacheReadWriteAndRfactor) {
  Graph g;
  Tensor X = placeholder({g.n}, Float(32), "X");
  expect_error([&] { g.s.cache_read(X, "shared", {g.C}); }, {"cache_read", "tensor 'X'", "not part of this schedule"});
  expect_error([&] { g.s.cache_read(g.A, "texture", {g.B}); }, {"cache_read", "'texture'", "tensor 'A'"});
  expect_error([&] { g.s.cache_read(g.A, "shared", {}); }, {"cache_read", "no readers", "tensor 'A'"});
  expect_error([&] { g.s.cache_read(g.A, "shared", {g.C}); }, {"cache_read", "stage 'C' does not read tensor 'A'"});
  expect_error([&] { g.s.cache_write(g.A, "local"); }, {"cache_write", "tensor 'A'", "placeholder"});
  g.s[g.D].split(g.D.axis(0), 4);
  expect_error([&] { g.s.cache_write(g.D, "local"); }, {"cache_write", "stage 'D'", "already scheduled"});
  g.s[g.B].compute_at(g.s[g.C], g.k);
  expect_error([&] { g.s.cache_write(g.C, "local"); },
               {"cache_write", "stage 'B' is computed at reduction axis 'k' of stage 'C'"});

  Graph h;
  expect_error([&] { h.s.rfactor(h.D, h.D.axis(0)); }, {"rfactor", "stage 'D'", "not a reduction"});
  expect_error([&] { h.s.rfactor(h.C, h.C.axis(0)); }, {"rfactor", "axis 'i'", "stage 'C'", "not a reduction axis"});
  expect_error([&] { h.s.rfactor(h.C, h.k, 2); }, {"rfactor", "factor_axis 2", "stage 'C'", "between 0 and 1"});
  expect_error([&] { h.s.rfactor(h.C, h.B.axis(0)); }, {"rfactor", "not an axis of stage 'C'"});
  auto [xo, xi] = h.s[h.C].split(h.C.axis(0), 4);
  h.s[h.B].compute_at(h.s[h.C], xo);
  expect_error([&] { h.s.rfactor(h.C, h.k); },
               {"rfactor", "stage 'B' is computed at axis 'i.outer' of stage 'C'", "rfactor removes"});
  expect_error([&] { h.s[X]; }, {"schedule", "tensor 'X'", "not part of this schedule"});
}

TEST(ScheduleErrors, LowerChecksItsArguments) {
  Graph g;
  expect_error([&] { lower(g.s, {g.D}, "f"); }, {"lower", "tensor 'A'", "read by 'B'", "not in the argument list"});
  expect_error([&] { lower(g.s, {g.A, g.D, g.A}, "f"); }, {"lower", "tensor 'A'", "listed twice"});
  expect_error([&] { lower(g.s, {g.A, g.D}, "2f"); }, {"lower", "'2f'", "C identifier"});
  Tensor E = compute(
      {g.n}, [&](Expr i) { return Expr(1.0f) + i; }, "E");
  expect_error([&] { lower(g.s, {g.A, g.D, E}, "f"); }, {"lower", "argument 'E'", "not computed by this schedule"});
  LowerOptions bad_dump;
  bad_dump.dump_ir = "flattening";
  expect_error([&] { lower(g.s, {g.A, g.D}, "f", bad_dump); }, {"TE_DUMP_IR", "'flattening'", "storage_flatten"});
  g.s[g.B].compute_inline();
  expect_error([&] { lower(g.s, {g.A, g.B, g.D}, "f"); }, {"lower", "tensor 'B'", "inlined"});
  g.s[g.B].compute_root();
  g.s[g.B].set_scope("shared");
  expect_error([&] { lower(g.s, {g.A, g.B, g.D}, "f"); }, {"lower", "argument 'B'", "scope shared"});
}

TEST(ScheduleErrors, LowerRejectsAReaderOutsideTheAttachLoop) {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = compute(
      {n}, [&](Expr i) { return A(i) + 1.0f; }, "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return B(i) * 2.0f; }, "C");
  Tensor D = compute(
      {n}, [&](Expr i) { return B(i) + C(i); }, "D");
  Schedule s = create_schedule({D});
  s[B].compute_at(s[C], C.axis(0));
  expect_error(
      [&] {
        lower(s, {A, D}, "f");
      },
      {"lower", "stage 'B' is computed at axis 'i' of stage 'C'", "reader 'D'", "inside that loop"});
}

TEST(ScheduleErrors, RemainingChecks) {
  Graph g;
  expect_error([&] { create_schedule({g.D, Tensor()}); }, {"create_schedule", "undefined"});
  expect_error([&] { g.s[Tensor()]; }, {"schedule", "undefined tensor"});
  expect_error([&] { g.s[g.B].split(IterVar(), 2); }, {"split", "undefined axis", "stage 'B'"});
  Var a("a");
  Tensor A3 = placeholder({a, a, a}, Float(32), "A3");
  Tensor T = compute(
      {a, a, a}, [&](Expr i, Expr j, Expr k) { return A3(i, j, k); }, "T");
  Schedule s3 = create_schedule({T});
  expect_error([&] { s3[T].fuse({T.axis(0), T.axis(2)}); }, {"fuse", "'i'", "'k'", "stage 'T'", "not adjacent"});
  Schedule other = create_schedule({g.D});
  expect_error([&] { g.s[g.B].compute_at(other[g.C], g.C.axis(0)); }, {"compute_at", "same schedule", "'B'"});
  expect_error([&] { g.s[g.A].compute_root(); }, {"compute_root", "stage 'A'", "placeholder"});
  expect_error([&] { g.s[g.A].set_scope("shared"); }, {"set_scope", "stage 'A'", "placeholder"});
  expect_error([&] { g.s.cache_write(g.D, "texture"); }, {"cache_write", "'texture'", "tensor 'D'"});
  Tensor X = placeholder({g.n}, Float(32), "X");
  expect_error([&] { g.s.rfactor(X, g.k); }, {"rfactor", "tensor 'X'", "not part of this schedule"});
  expect_error([&] { g.s.rfactor(Tensor(), g.k); }, {"rfactor", "undefined tensor"});
  expect_error([&] { g.s.cache_read(Tensor(), "shared", {g.B}); }, {"cache_read", "undefined tensor"});
  g.s[g.B].compute_inline();
  expect_error([&] { g.s.cache_write(g.B, "local"); }, {"cache_write", "stage 'B'", "inlined"});
  expect_error([&] { infer_bound(g.s).at(g.B.axis(0)); }, {"bound inference", "axis 'i'"});
  expect_error([&] { lower(Schedule(), {g.A}, "f"); }, {"lower", "schedule is undefined"});
  expect_error([&] { lower(g.s, {g.A, Tensor(), g.D}, "f"); }, {"lower", "argument 1", "undefined"});
}

TEST(ScheduleErrors, LowerRejectsARegionThatDependsOnALoopOutsideTheStage) {
  // B is computed per block, but kept "local": its region follows each thread's loop
  // variable, which has no value where B runs.
  Tensor A = placeholder({1, 3, 2}, Float(32), "A");
  Tensor B = compute(
      {1, 3, 2}, [&](Expr i, Expr j, Expr k) { return A(i, j, k); }, "B");
  Tensor C = compute(
      {1, 3, 2}, [&](Expr i, Expr j, Expr k) { return B(i, j, k); }, "C");
  Schedule s = create_schedule({C});
  s[B].compute_at(s[C], C.axis(0));
  s[B].set_scope("local");
  s[C].bind(C.axis(0), thread_axis("blockIdx.x"));
  s[C].bind(C.axis(1), thread_axis("threadIdx.x"));
  expect_error(
      [&] {
        lower(s, {A, C}, "f");
      },
      {"lower", "region of stage 'B'", "at 'i'", "loop 'j' of stage 'C'", "does not run around it"});
  s[B].set_scope("shared");  // shared by the threads: B covers all of them
  EXPECT_NO_THROW(lower(s, {A, C}, "f"));
}
