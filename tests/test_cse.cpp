// Common-subexpression elimination (pass "common_subexpr_elim"): what becomes a local,
// what never moves (guarded values, loads across stores, vectors, index arithmetic, calls
// outside te), the locals' names, the pass list and option, and the CUDA that users read
// (every line of the corpus and of grid_sample's kernels short). Results are checked on
// interpret() and the LLVM JIT against plain C++.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include <te/auto_schedule.h>
#include <te/te.h>

#include "cuda_emulation/kernels.h"
#include "test_lower_util.h"

using namespace te;
using namespace lower_test;

namespace {

std::vector<const LetStmtNode*> lets_of(const Stmt& body) {
  struct Finder : IRVisitor {
    std::vector<const LetStmtNode*> lets;
    void visit_let_stmt(const LetStmtNode* n) override {
      lets.push_back(n);
      IRVisitor::visit_let_stmt(n);
    }
  } f;
  f.visit(body);
  return f.lets;
}

int count_calls(const Stmt& s, Intrinsic op) {
  return count_exprs(s, [op](const Expr& e) {
    const auto* c = e.as<CallNode>();
    return c && c->op == op;
  });
}

int count_loads(const Stmt& s, const std::string& buffer) {
  return count_exprs(s, [&](const Expr& e) {
    const auto* l = e.as<LoadNode>();
    return l && l->buffer.name() == buffer;
  });
}

Schedule plain(const Tensor& t) { return create_schedule({t}); }

// A function of body over the buffers, in order.
LoweredFunc func_of(const std::string& name, const Stmt& body, const std::vector<Buffer>& buffers) {
  LoweredFunc f;
  f.name = name;
  f.body = body;
  for (const Buffer& b : buffers) {
    Param p;
    p.buffer = b;
    f.params.push_back(p);
  }
  return f;
}

TEST(Cse, ARepeatedValueIsComputedOnceIntoANamedLocal) {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  // Two separately built (structurally equal) copies of floor(A[i] * 2).
  Tensor C = compute(
      {n}, [&](Expr i) { return floor(A(i) * 2.0f) * floor(A(i) * 2.0f) + floor(A(i) * 2.0f); }, "C");
  LoweredFunc f = lower(plain(C), {A, C}, "cse_square");
  ASSERT_EQ(count_calls(f.body, Intrinsic::Floor), 1) << f;
  auto lets = lets_of(f.body);
  ASSERT_EQ(lets.size(), 1u) << f;
  EXPECT_EQ(lets[0]->var.name(), "a_floor");
  EXPECT_EQ(count_loads(f.body, "A"), 1) << f;

  for (int64_t len : {1, 7, 33}) {
    NDArray a = input({len}, 3), c = output({len});
    run_backends(f, {a, c});
    std::vector<float> av = a.to_vector<float>(), want;
    for (float x : av) {
      float y = std::floor(x * 2.0f);
      want.push_back(y * y + y);
    }
    expect_close(c.to_vector<float>(), want, 0, "n=" + std::to_string(len));
  }
}

TEST(Cse, ValuesOnlyAGuardComputesStayUnderTheGuard) {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  // log(A[i]) twice, but only where A[i] > 0 (if_then_else evaluates the taken side).
  Tensor C = compute(
      {n}, [&](Expr i) { return if_then_else(A(i) > 0.0f, log(A(i)) * log(A(i)), make_const(Float(32), 0.0)); }, "C");
  LoweredFunc f = lower(plain(C), {A, C}, "cse_guarded");
  EXPECT_TRUE(lets_of(f.body).empty()) << f;
  EXPECT_EQ(count_calls(f.body, Intrinsic::Log), 2) << f;

  // The right side of && is guarded the same way.
  Tensor D = compute(
      {n}, [&](Expr i) { return select((A(i) > 0.0f) && (sqrt(A(i)) + sqrt(A(i)) > 1.0f), A(i), 0.0f); }, "D");
  LoweredFunc g = lower(plain(D), {A, D}, "cse_and");
  for (const LetStmtNode* l : lets_of(g.body)) EXPECT_EQ(count_calls(evaluate(l->value), Intrinsic::Sqrt), 0) << g;
  EXPECT_EQ(count_calls(g.body, Intrinsic::Sqrt), 2) << g;

  for (int64_t len : {5, 40}) {
    NDArray a = input({len}, 4), c = output({len}), d = output({len});
    run_backends(f, {a, c});
    run_backends(g, {a, d});
    std::vector<float> av = a.to_vector<float>(), want_c, want_d;
    for (float x : av) {
      want_c.push_back(x > 0 ? std::log(x) * std::log(x) : 0.0f);
      want_d.push_back(x > 0 && std::sqrt(x) + std::sqrt(x) > 1.0f ? x : 0.0f);
    }
    expect_close(c.to_vector<float>(), want_c, 0, "if_then_else");
    expect_close(d.to_vector<float>(), want_d, 0, "&&");
  }
}

TEST(Cse, AGuardedCopyReadsTheLocalTheUnguardedCodeComputes) {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor C = compute(
      {n},
      [&](Expr i) { return exp(A(i)) + exp(A(i)) * if_then_else(A(i) > 0.0f, exp(A(i)), make_const(Float(32), 1.0)); },
      "C");
  LoweredFunc f = lower(plain(C), {A, C}, "cse_mixed");
  EXPECT_EQ(count_calls(f.body, Intrinsic::Exp), 1) << f;
  NDArray a = input({9}, 5), c = output({9});
  run_backends(f, {a, c});
  std::vector<float> want;
  for (float x : a.to_vector<float>()) want.push_back(std::exp(x) + std::exp(x) * (x > 0 ? std::exp(x) : 1.0f));
  expect_close(c.to_vector<float>(), want, 0, "mixed");
}

TEST(Cse, LoadsNeverMoveAcrossAStoreToTheirBuffer) {
  Buffer A("A", Float(32), {4}), B("B", Float(32), {4}), C("C", Float(32), {4});
  Expr b0 = load(B, {0});
  // A[0] = B[0] * B[0] + B[0];  B[0] = 7;  C[0] = B[0] * B[0] + B[0]
  Stmt body = seq({store(A, load(B, {0}) * load(B, {0}) + load(B, {0}), {0}), store(B, make_const(Float(32), 7.0), {0}),
                   store(C, load(B, {0}) * load(B, {0}) + load(B, {0}), {0})});
  Stmt out = eliminate_common_subexpressions(body);
  const auto* q = out.as<SeqNode>();
  ASSERT_NE(q, nullptr);
  ASSERT_EQ(q->seq.size(), 3u) << out;
  // Each statement that reads B twice reads it once, into its own local, after the store
  // that comes before it.
  EXPECT_NE(q->seq[0].as<LetStmtNode>(), nullptr) << out;
  EXPECT_NE(q->seq[1].as<StoreNode>(), nullptr) << out;
  EXPECT_NE(q->seq[2].as<LetStmtNode>(), nullptr) << out;
  EXPECT_EQ(count_loads(out, "B"), 2) << out;

  LoweredFunc f = func_of("cse_store_order", out, {A, B, C});
  NDArray a = output({4}), bb = NDArray::from_vector(std::vector<float>{3, 0, 0, 0}, {4}), c = output({4});
  run_backends(f, {a, bb, c});
  EXPECT_EQ(a.to_vector<float>()[0], 12.0f);
  EXPECT_EQ(c.to_vector<float>()[0], 56.0f);
}

TEST(Cse, NeighboursShareALocalOfAPureValueButNeverOfALoad) {
  Buffer A("A", Float(32), {4}), B("B", Float(32), {4}), C("C", Float(32), {4});
  Var x("x", Float(32));
  auto square = [&] { return floor(Expr(x) * 2.0f) * floor(Expr(x) * 2.0f); };  // fresh nodes each time
  auto b0_squared = [&] { return load(B, {0}) * load(B, {0}); };
  // let x = B[1] in {A[0] = floor(x*2)^2; A[1] = floor(x*2)^2 + 1; B[0] = B[0]^2; C[0] = B[0]^2}
  Stmt body = let_stmt(x, load(B, {1}),
                       seq({store(A, square(), {0}), store(A, square() + 1.0f, {1}), store(B, b0_squared(), {0}),
                            store(C, b0_squared(), {0})}));
  Stmt out = eliminate_common_subexpressions(body);
  // x, one floor(x*2) for both stores to A, and B[0] read twice: before and after the
  // store to it (neighbours, equal values, but loads).
  EXPECT_EQ(lets_of(out).size(), 4u) << out;
  EXPECT_EQ(count_calls(out, Intrinsic::Floor), 1) << out;
  EXPECT_EQ(count_loads(out, "B"), 3) << out;

  LoweredFunc f = func_of("cse_neighbours", out, {A, B, C});
  NDArray a = output({4}), bb = NDArray::from_vector(std::vector<float>{3, 1.25f, 0, 0}, {4}), c = output({4});
  run_backends(f, {a, bb, c});
  EXPECT_EQ(a.to_vector<float>()[0], 4.0f);  // floor(2.5)^2
  EXPECT_EQ(a.to_vector<float>()[1], 5.0f);
  EXPECT_EQ(bb.to_vector<float>()[0], 9.0f);
  EXPECT_EQ(c.to_vector<float>()[0], 81.0f);
}

TEST(Cse, BothSidesOfAnIfShareALocalOfAPureValueButNeverOfALoad) {
  Buffer A("A", Float(32), {2}), B("B", Float(32), {3}), C("C", Float(32), {2});
  Var x("x", Float(32));
  auto square = [&] { return floor(Expr(x) * 2.0f) * floor(Expr(x) * 2.0f); };  // fresh nodes each time
  auto b0_squared = [&] { return load(B, {0}) * load(B, {0}); };
  Expr positive = load(B, {2}) > 0.0f;
  // let x = B[1] in {if (B[2] > 0) A[0] = floor(x*2)^2 else A[1] = floor(x*2)^2 + 1;
  //                  if (B[2] > 0) C[0] = B[0]^2 else C[1] = B[0]^2 + 1}
  Stmt body = let_stmt(x, load(B, {1}),
                       seq({if_then_else(positive, store(A, square(), {0}), store(A, square() + 1.0f, {1})),
                            if_then_else(positive, store(C, b0_squared(), {0}), store(C, b0_squared() + 1.0f, {1}))}));
  Stmt out = eliminate_common_subexpressions(body);
  // One floor(x*2), taken before the first if; B[0] once in each side of the second.
  EXPECT_EQ(count_calls(out, Intrinsic::Floor), 1) << out;
  EXPECT_EQ(count_loads(out, "B"), 5) << out;  // B[1], B[2] twice, B[0] in each side
  EXPECT_EQ(lets_of(out).size(), 4u) << out;   // x, the floor, B[0] in each side

  LoweredFunc f = func_of("cse_if_sides", out, {A, B, C});
  for (float sign : {1.0f, -1.0f}) {
    NDArray a = output({2}), bb = NDArray::from_vector(std::vector<float>{3, 1.25f, sign}, {3}), c = output({2});
    run_backends(f, {a, bb, c});
    const int side = sign > 0 ? 0 : 1;
    EXPECT_EQ(a.to_vector<float>()[side], 4.0f + side);  // floor(2.5)^2 (+ 1)
    EXPECT_EQ(c.to_vector<float>()[side], 9.0f + side);
  }
}

TEST(Cse, VectorsKeepTheirLanesAndShareOnlyScalarParts) {
  Var n("n");
  Var s("s", Float(32));
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor C = compute(
      {n}, [&](Expr i) { return A(i) * floor(s * 3.0f) + floor(s * 3.0f) + A(i) * floor(s * 3.0f); }, "C");
  Schedule sch = create_schedule({C});
  auto [xo, xi] = sch[C].split(C.axis(0), 8);
  sch[C].vectorize(xi);
  LoweredFunc f = lower(sch, {A, C}, "cse_vector");  // then s, the scalar
  bool vector_store = false;
  count_stmts(f.body, [&](const Stmt& st) {
    if (const auto* w = st.as<StoreNode>()) vector_store = vector_store || w->value.dtype().lanes() == 8;
    return false;
  });
  EXPECT_TRUE(vector_store) << f;
  for (const LetStmtNode* l : lets_of(f.body)) EXPECT_TRUE(l->var.dtype().is_scalar()) << f;
  // Once in the vector body, once in the vector tail, once in the scalar tail.
  EXPECT_EQ(count_calls(f.body, Intrinsic::Floor), 3) << f;

  for (int64_t len : {8, 13, 64}) {
    NDArray a = input({len}, 6), c = output({len});
    run_backends(f, {a, c, 1.7f});
    std::vector<float> want;
    float k = std::floor(1.7f * 3.0f);
    for (float x : a.to_vector<float>()) want.push_back(x * k + k + x * k);
    expect_close(c.to_vector<float>(), want, 0, "n=" + std::to_string(len));
  }
}

TEST(Cse, IndexArithmeticAndCallsOutsideTeStayWhereTheyAre) {
  Var n("n");
  Tensor A = placeholder({n * 2 + 2}, Float(32), "A");
  Tensor C = compute(
      {n}, [&](Expr i) { return A(i * 2) + A(i * 2 + 1) * A(i * 2 + 2); }, "C");
  LoweredFunc f = lower(plain(C), {A, C}, "cse_index");
  EXPECT_TRUE(lets_of(f.body).empty()) << f;

  Buffer X("X", Float(32), {4});
  Expr call = call_extern(Float(32), "my_random", {make_const(Float(32), 1.0)});
  Stmt body = store(X,
                    call_extern(Float(32), "my_random", {make_const(Float(32), 1.0)}) +
                        call_extern(Float(32), "my_random", {make_const(Float(32), 1.0)}),
                    {0});
  Stmt out = eliminate_common_subexpressions(body);
  EXPECT_TRUE(lets_of(out).empty()) << out;
  EXPECT_EQ(count_calls(out, Intrinsic::Extern), 2) << out;
}

TEST(Cse, LocalsAreNamedAfterWhatTheyHold) {
  Buffer grid("net.grid", Float(32), {4}), weights("gs.weights", Float(32), {4}), data("data", Float(32), {4}),
      out("out", Float(32), {4});
  Var i("i");
  Expr w = load(weights, {i}) * load(data, {i});
  Stmt body = store(out,
                    floor(load(grid, {i})) * 2.0f + floor(load(grid, {i})) +
                        load(weights, {i}) * load(data, {i}) * (load(weights, {i}) * load(data, {i})),
                    {i});
  Stmt s = eliminate_common_subexpressions(for_loop(i, 0, 4, ForKind::Serial, body));
  std::vector<std::string> names;
  for (const LetStmtNode* l : lets_of(s)) names.push_back(l->var.name());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"grid_floor", "weights_data"})) << s;
}

TEST(Cse, IsAPassOfLowerThatAnOptionTurnsOff) {
  std::vector<std::string> passes = lower_pass_names();
  auto at = std::find(passes.begin(), passes.end(), "common_subexpr_elim");
  ASSERT_NE(at, passes.end());
  EXPECT_EQ(*(at + 1), "unique_names");
  // The names are lower()'s own: every pass it runs, in order, once.
  EXPECT_EQ(passes.front(), "inline");
  EXPECT_EQ(std::count(passes.begin(), passes.end(), "loop_partition"), 1);

  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor C = compute(
      {n}, [&](Expr i) { return exp(A(i)) + exp(A(i)); }, "C");
  LowerOptions off;
  off.eliminate_common_subexpressions = false;
  EXPECT_EQ(count_calls(lower(plain(C), {A, C}, "cse_off", off).body, Intrinsic::Exp), 2);
  LowerOptions dump;
  dump.dump_ir = "common_subexpr_elim";
  testing::internal::CaptureStderr();
  LoweredFunc f = lower(plain(C), {A, C}, "cse_dump", dump);
  std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_NE(printed.find("// ---- IR after common_subexpr_elim ----"), std::string::npos) << printed;
  EXPECT_NE(printed.find("let a_exp = exp(A[i]);"), std::string::npos) << printed;
}

// The longest statement (a line ending in ';') of a CUDA file.
size_t longest_line(const std::string& source, std::string* which) {
  std::istringstream in(source);
  size_t longest = 0;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line.back() == ';' && line.size() > longest) {
      longest = line.size();
      *which = line;
    }
  return longest;
}

constexpr size_t kReadableLine = 400;

TEST(Cse, EveryCudaLineOfTheCorpusIsReadable) {
  for (const cuda_test::TestModule& m : cuda_test::all_test_modules()) {
    std::string line;
    EXPECT_LE(longest_line(build_cuda(m.func, m.options).source(), &line), kReadableLine)
        << m.func.name << ": " << line;
  }
}

TEST(Cse, GridSampleKernelsReadLikeHandWrittenCode) {
  for (const char* mode : {"bilinear", "bicubic", "nearest"}) {
    for (const char* padding : {"zeros", "border", "reflection"}) {
      Tensor data = placeholder({2, 16, 32, 32}, Float(32), "data");
      Tensor grid = placeholder({2, 24, 24, 2}, Float(32), "grid");
      ops::GridSampleOptions o;
      o.mode = mode;
      o.padding_mode = padding;
      Tensor out = ops::grid_sample(data, grid, o);
      Schedule hand = create_schedule({out});
      ops::schedule_grid_sample_cuda(hand, out);
      AutoScheduleOptions ao;
      ao.target = "cuda";
      Schedule searched = auto_schedule({out}, ao);
      for (const Schedule& s : {hand, searched}) {
        std::string src = build_cuda(lower(s, {data, grid, out}, "gs")).source(), line;
        EXPECT_LE(longest_line(src, &line), kReadableLine) << mode << "/" << padding << ": " << line;
      }
    }
  }
}

}  // namespace
