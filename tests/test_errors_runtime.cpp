// Bad inputs at run time: indices read from data that leave the buffer (a gather into
// an input of unknown size) and argument mismatches, through interpret() and the JIT.
// Each ends in a te::Error naming the function and the buffer; nothing is read out of
// bounds.
#include <gtest/gtest.h>

#include <te/te.h>

#include <vector>

#include "test_util.h"

using namespace te;

namespace {

// C[i] = A[B[i]] for A of symbolic size m: the index comes from data.
struct Gather {
  Var n{"n"}, m{"m"};
  Tensor A = placeholder({m}, Float(32), "A");
  Tensor B = placeholder({n}, Int(32), "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return A(B(i)); }, "C");
};

NDArray floats(std::vector<float> v) {
  int64_t size = static_cast<int64_t>(v.size());
  return NDArray::from_vector(std::move(v), {size});
}
NDArray ints(std::vector<int32_t> v) {
  int64_t size = static_cast<int64_t>(v.size());
  return NDArray::from_vector(std::move(v), {size});
}

}  // namespace

TEST(RuntimeErrors, GatherWithAnIndexOutsideTheInputFails) {
  Gather g;
  NDArray a = floats({1, 2, 3});
  for (int schedule = 0; schedule < 3; ++schedule) {
    Schedule s = create_schedule({g.C});
    if (schedule == 1) s[g.C].vectorize(s[g.C].split(g.C.axis(0), 8).second);
    if (schedule == 2) s[g.C].parallel(s[g.C].split(g.C.axis(0), 4).first);
    LoweredFunc f = lower(s, {g.A, g.B, g.C}, "gather");
    Module m = build(f);
    for (int32_t bad : {3, -1, 1000000, -2147483647 - 1}) {
      std::vector<int32_t> idx(16, 1);
      idx[13] = bad;
      NDArray b = ints(idx), c = NDArray::empty({16}, Float(32));
      expect_error([&] { interpret(f, {a, b, c}); }, {"gather", "out-of-bounds load from buffer 'A'"});
      expect_error([&] { m("gather")(a, b, c); }, {"gather", "out-of-bounds load from buffer 'A'", "read from memory"});
    }
    NDArray b = ints({2, 0, 1, 2, 2, 1, 0, 0, 1, 2, 0, 1, 1, 2, 0, 0}), c = NDArray::empty({16}, Float(32));
    m("gather")(a, b, c);
    EXPECT_EQ(c.to_vector<float>()[0], 3.0f);
    EXPECT_EQ(c.to_vector<float>()[2], 2.0f);
  }
}

// The check sits where the load runs: a gather the user guards with if_then_else
// reads nothing for the indices the guard rejects, and the function succeeds.
TEST(RuntimeErrors, GuardedGatherOfBadIndicesSucceeds) {
  Gather g;
  Tensor D = compute(
      {g.n}, [&](Expr i) { return if_then_else(g.B(i) >= 0 && g.B(i) < g.m, g.A(g.B(i)), -1.0f); }, "D");
  for (bool vec : {false, true}) {
    Schedule s = create_schedule({D});
    if (vec) s[D].vectorize(s[D].split(D.axis(0), 4).second);
    LoweredFunc f = lower(s, {g.A, g.B, D}, "guarded");
    NDArray a = floats({1, 2, 3}), b = ints({0, 5, -7, 2, 1, 3, 2, 100}), c = NDArray::empty({8}, Float(32));
    build(f)("guarded")(a, b, c);
    EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{1, -1, -1, 3, 2, -1, 3, -1}));
    NDArray ci = NDArray::empty({8}, Float(32));
    interpret(f, {a, b, ci});
    EXPECT_EQ(ci.to_vector<float>(), c.to_vector<float>());
  }
}

// The same checks as the JIT's calls (test_llvm_basic), for interpret().
TEST(RuntimeErrors, InterpretChecksItsArguments) {
  Var n("n");
  Tensor A = placeholder({n, 4}, Float(32), "A");
  Tensor C = compute(
      {n, 4}, [&](Expr i, Expr j) { return A(i, j) * 2.0f; }, "C");
  LoweredFunc f = lower(create_schedule({C}), {A, C}, "twice");
  NDArray a = NDArray::empty({3, 4}, Float(32)), c = NDArray::empty({3, 4}, Float(32));
  expect_error([&] { interpret(f, {a}); }, {"twice", "2", "1"});
  expect_error([&] { interpret(f, {NDArray::empty({3, 4}, Int(32)), c}); }, {"twice", "'A'", "float32", "int32"});
  expect_error([&] { interpret(f, {NDArray::empty({12}, Float(32)), c}); }, {"twice", "'A'"});
  expect_error([&] { interpret(f, {a, NDArray::empty({2, 4}, Float(32))}); }, {"twice", "'C'"});
  expect_error([&] { interpret(f, {a, NDArray::empty({3, 5}, Float(32))}); }, {"twice", "'C'"});
  expect_error([&] { interpret(f, {NDArray(), c}); }, {"twice", "'A'"});
  expect_error([&] { interpret(f, {a, 3}); }, {"twice", "'C'"});
  Module m = build(f);
  expect_error([&] { m("twice")(a, NDArray::empty({2, 4}, Float(32))); }, {"'C'"});  // smaller than needed
  expect_error([&] { m("twice")(a, a); }, {"share memory"});                         // output aliases input
}

// Arrays beyond what int32 indices reach are refused at the call (a view of a small
// buffer under a lying shape: nothing is read). int64 extents take them.
TEST(RuntimeErrors, ArraysBeyondInt32IndicesAreRefused) {
  Var n("n"), m("m");
  Tensor A = placeholder({n, m}, UInt(8), "A");
  Tensor C = compute(
      {n, m}, [&](Expr i, Expr j) { return A(i, j); }, "C");
  Module mod = build(lower(create_schedule({C}), {A, C}, "copy"));
  std::vector<uint8_t> small(16);
  int64_t shape[2] = {65536, 65536};
  dlpack::DLTensor huge{small.data(), {dlpack::kDLCPU, 0}, 2, {dlpack::kDLUInt, 8, 1}, shape, nullptr, 0};
  expect_error([&] { mod("copy")(&huge, &huge); },
               {"copy", "argument 1 ('A')", "65536", "more than 2147483647 elements", "int64"});
  expect_error(
      [&] {
        interpret(lower(create_schedule({C}), {A, C}, "copy"), {&huge, &huge});
      },
      {"copy", "parameter 'A'", "65536", "more than 2147483647 elements", "int64"});
}

// Hand-built loop IR can scatter through indices read from memory (compute() cannot):
// the JIT checks them as it checks gathers, writes nothing outside the buffer and fails.
TEST(RuntimeErrors, ScatterWithAnIndexOutsideTheOutputFails) {
  Var n("n"), i("i"), io("io");
  Buffer A("A", Float(32), {4}), B("B", Int(32), {n});
  Param pa, pb;
  pa.buffer = A;
  pb.buffer = B;
  Stmt scalar = for_loop(i, 0, n, ForKind::Serial, store(A, cast(Float(32), i), {load(B, {i})}));
  Stmt vector =
      for_loop(io, 0, n / 4, ForKind::Serial, store(A, broadcast(Expr(1.0f), 4), {load(B, {ramp(io * 4, 1, 4)})}));
  for (const Stmt& body : {scalar, vector}) {
    LoweredFunc f{"scatter", {pa, pb}, body};
    Module m = build(f);
    NDArray a = floats({0, 0, 0, 0});
    for (int32_t bad : {4, -1, 1000000}) {
      expect_error(
          [&] {
            m("scatter")(a, ints({0, 1, bad, 3}));
          },
          {"scatter", "out-of-bounds store to buffer 'A'", "read from memory"});
      expect_error([&] { interpret(f, {a, ints({0, 1, bad, 3})}); }, {"out-of-bounds store to buffer 'A'"});
    }
    m("scatter")(a, ints({3, 2, 1, 0}));  // in range: no error
  }
}
