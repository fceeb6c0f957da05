// Schedules lower() must either compile correctly or refuse with a te::Error naming what
// is wrong: vectorize and unroll of absurd extents, splits that need a
// guard (in reductions, under compute_at, on GPU axes), extents beyond int32, and
// empty (zero-size) extents.
#include <gtest/gtest.h>

#include <te/te.h>

#include <vector>

#include "test_util.h"

using namespace te;

namespace {

// Runs f through interpret() and the JIT on copies of the inputs; returns both outputs
// (the last argument).
std::pair<std::vector<float>, std::vector<float>> run_both(const LoweredFunc& f, const std::vector<NDArray>& inputs,
                                                           const std::vector<int64_t>& out_shape) {
  std::vector<Argument> ia, ja;
  for (const NDArray& a : inputs) ia.emplace_back(a), ja.emplace_back(a);
  NDArray io = NDArray::empty(out_shape, Float(32)), jo = NDArray::empty(out_shape, Float(32));
  ia.emplace_back(io);
  ja.emplace_back(jo);
  interpret(f, ia);
  build(f)(f.name).call(ja);
  return {io.to_vector<float>(), jo.to_vector<float>()};
}

std::vector<float> iota(int n, float start = 0) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start + static_cast<float>(i);
  return v;
}

struct AddOne {
  Var n{"n"};
  Tensor A, C;
  explicit AddOne(Expr extent) {
    A = placeholder({extent}, Float(32), "A");
    C = compute(
        {extent}, [&](Expr i) { return A(i) + 1.0f; }, "C");
  }
};

}  // namespace

// Symbolic extents of vectorize and unroll: tests/test_directives.cpp.
TEST(LowerErrors, VectorizeOfMoreThan64LanesIsRefused) {
  AddOne g(Expr(65));
  Schedule s = create_schedule({g.C});
  s[g.C].vectorize(g.C.axis(0));
  expect_error(
      [&] {
        lower(s, {g.A, g.C}, "f");
      },
      {"vectorize", "loop 'i'", "65 iterations", "at most 64 lanes", "split the axis"});
  AddOne big(Expr(100000));  // would not even fit the 16-bit lane count of a type
  Schedule t = create_schedule({big.C});
  t[big.C].vectorize(big.C.axis(0));
  expect_error([&] { lower(t, {big.A, big.C}, "f"); }, {"vectorize", "100000 iterations", "at most 64 lanes"});
  // 64 lanes are fine.
  AddOne ok(Expr(64));
  Schedule u = create_schedule({ok.C});
  u[ok.C].vectorize(ok.C.axis(0));
  auto [interp, jit] = run_both(lower(u, {ok.A, ok.C}, "f"), {NDArray::from_vector(iota(64), {64})}, {64});
  EXPECT_EQ(jit, iota(64, 1));
}

TEST(LowerErrors, UnrollOfMoreThan4096IterationsIsRefused) {
  AddOne g(Expr(4097));
  Schedule s = create_schedule({g.C});
  s[g.C].unroll(g.C.axis(0));
  expect_error(
      [&] {
        lower(s, {g.A, g.C}, "f");
      },
      {"unroll", "loop 'i'", "4097 iterations", "at most 4096", "split the axis"});
  // Split first: fine.
  Schedule t = create_schedule({g.C});
  t[g.C].unroll(t[g.C].split(g.C.axis(0), 8).second);
  auto [interp, jit] = run_both(lower(t, {g.A, g.C}, "f"), {NDArray::from_vector(iota(4097), {4097})}, {4097});
  EXPECT_EQ(jit, iota(4097, 1));
}

// Splits by factors that do not divide the extent need a guard; te adds one wherever
// the split is: a reduction axis, a stage computed at another's loop, GPU axes.
TEST(LowerErrors, NonDividingSplitsAreGuardedEverywhere) {
  {  // A reduction axis of 10 split by 3: the last chunk holds 1 element.
    Tensor A = placeholder({10}, Float(32), "A");
    IterVar k = reduce_axis({0, 10}, "k");
    Tensor C = compute(
        {1}, [&](Expr) { return sum(A(k), {k}); }, "C");
    Schedule s = create_schedule({C});
    s[C].split(k, 3);
    auto [interp, jit] = run_both(lower(s, {A, C}, "f"), {NDArray::from_vector(iota(10), {10})}, {1});
    EXPECT_EQ(interp, std::vector<float>{45});
    EXPECT_EQ(jit, std::vector<float>{45});
  }
  {  // B computed per chunk of 3 of C, and split by 2 there.
    Tensor A = placeholder({10}, Float(32), "A");
    Tensor B = compute(
        {10}, [&](Expr i) { return A(i) * 2.0f; }, "B");
    Tensor C = compute(
        {10}, [&](Expr i) { return B(i) + 1.0f; }, "C");
    Schedule s = create_schedule({C});
    IterVar o = s[C].split(C.axis(0), 3).first;
    s[B].compute_at(s[C], o);
    s[B].split(B.axis(0), 2);
    std::vector<float> want;
    for (float x : iota(10)) want.push_back(2 * x + 1);
    auto [interp, jit] = run_both(lower(s, {A, C}, "f"), {NDArray::from_vector(iota(10), {10})}, {10});
    EXPECT_EQ(interp, want);
    EXPECT_EQ(jit, want);
  }
  {  // GPU axes: 10 elements over blocks of 4 threads.
    AddOne g(Expr(10));
    Schedule s = create_schedule({g.C});
    auto [bx, tx] = s[g.C].split(g.C.axis(0), 4);
    s[g.C].bind(bx, thread_axis("blockIdx.x"));
    s[g.C].bind(tx, thread_axis("threadIdx.x"));
    LoweredFunc f = lower(s, {g.A, g.C}, "f");
    NDArray a = NDArray::from_vector(iota(10), {10}), c = NDArray::empty({10}, Float(32));
    interpret(f, {a, c});
    EXPECT_EQ(c.to_vector<float>(), iota(10, 1));
    EXPECT_NE(build_cuda(f).source().find("< 10"), std::string::npos) << "no guard in the CUDA source";
  }
}

TEST(LowerErrors, ExtentsBeyondInt32AreRefused) {
  Tensor A = placeholder({100000, 100000}, Float(32), "A");
  Tensor C = compute(
      {100000, 100000}, [&](Expr i, Expr j) { return A(i, j) + 1.0f; }, "C");
  Schedule s = create_schedule({C});
  s[C].fuse(C.axis(0), C.axis(1));
  expect_error(
      [&] {
        lower(s, {A, C}, "f");
      },
      {"fuse", "axis 'i.j.fused'", "100000 x 100000", "beyond int32", "int64"});
  Schedule t = create_schedule({C});
  expect_error([&] { lower(t, {A, C}, "f"); }, {"lower", "buffer 'A'", "100000 x 100000", "int32 indices", "int64"});
  // An intermediate buffer too.
  Tensor X = placeholder({100000}, Float(32), "X");
  Tensor B = compute(
      {100000, 100000}, [&](Expr i, Expr j) { return X(i) * X(j); }, "B");
  IterVar k = reduce_axis({0, 100000}, "k");
  Tensor D = compute(
      {100000}, [&](Expr i) { return sum(B(i, k), {k}); }, "D");
  expect_error([&] { lower(create_schedule({D}), {X, D}, "f"); }, {"buffer 'B'", "beyond what int32 indices reach"});
  // int64 extents lower.
  Expr big = make_const(Int(64), 100000);
  Tensor A64 = placeholder({big, big}, Float(32), "A64");
  Tensor C64 = compute(
      {big, big}, [&](Expr i, Expr j) { return A64(i, j) + 1.0f; }, "C64");
  EXPECT_NO_THROW(lower(create_schedule({C64}), {A64, C64}, "f"));
}

// Empty extents run nothing (a reduction over none gives its identity), through the
// interpreter and the JIT, with vectorized, parallel and unrolled loops.
TEST(LowerErrors, ZeroSizeExtentsWork) {
  Var n("n");
  Tensor A = placeholder({n, 3}, Float(32), "A");
  IterVar k = reduce_axis({0, n}, "k");
  Tensor S = compute(
      {3}, [&](Expr j) { return sum(A(k, j), {k}); }, "S");
  Tensor D = compute(
      {n, 3}, [&](Expr i, Expr j) { return A(i, j) + 1.0f; }, "D");
  Schedule s = create_schedule({S, D});
  auto [o, in] = s[D].split(D.axis(0), 4);
  s[D].parallel(o);
  s[D].vectorize(D.axis(1));
  s[S].unroll(S.axis(0));
  LoweredFunc f = lower(s, {A, S, D}, "f");
  for (int64_t rows : {0, 5}) {
    NDArray a = NDArray::from_vector(iota(static_cast<int>(rows * 3)), {rows, 3});
    NDArray si = NDArray::empty({3}, Float(32)), sj = NDArray::empty({3}, Float(32));
    NDArray di = NDArray::empty({rows, 3}, Float(32)), dj = NDArray::empty({rows, 3}, Float(32));
    interpret(f, {a, si, di});
    build(f)("f")(a, sj, dj);
    EXPECT_EQ(si.to_vector<float>(), sj.to_vector<float>());
    EXPECT_EQ(di.to_vector<float>(), dj.to_vector<float>());
    if (rows == 0) {
      EXPECT_EQ(sj.to_vector<float>(), (std::vector<float>{0, 0, 0}));
    }
  }
  // Constant zero extents, too.
  Tensor Z = placeholder({0}, Float(32), "Z");
  Tensor E = compute(
      {0}, [&](Expr i) { return Z(i) * 2.0f; }, "E");
  Schedule t = create_schedule({E});
  t[E].vectorize(t[E].split(E.axis(0), 8).second);
  LoweredFunc g = lower(t, {Z, E}, "g");
  NDArray z = NDArray::empty({0}, Float(32)), e = NDArray::empty({0}, Float(32));
  interpret(g, {z, e});
  build(g)("g")(z, e);
}
