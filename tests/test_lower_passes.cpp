// The statement passes of lower(): bound guards and loop partitioning, vectorization
// with its scalar tail, unrolling, barriers, no-op removal and storage flattening, both
// through lower() (run with interpret() and the LLVM JIT) and on hand-written loop IR.
#include <gtest/gtest.h>

#include <te/te.h>

#include "test_lower_util.h"

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

void check_vadd(const LoweredFunc& f, const std::string& what, std::vector<int64_t> lengths = {1, 3, 4, 5, 8, 13, 67}) {
  check_vector_add(f, what, lengths);
}

// The loops at the top level of a function body.
std::vector<const ForNode*> top_loops(const Stmt& body) {
  std::vector<const ForNode*> out;
  if (const auto* q = body.as<SeqNode>()) {
    for (const Stmt& s : q->seq)
      if (const auto* f = s.as<ForNode>()) out.push_back(f);
  } else if (const auto* f = body.as<ForNode>()) {
    out.push_back(f);
  }
  return out;
}

Buffer buf(const std::string& name, std::vector<Expr> shape, MemoryScope scope = MemoryScope::Global) {
  return Buffer(name, Float(32), std::move(shape), scope);
}

// Runs hand-written loop IR over float32 buffers (filled with deterministic values) and
// returns their contents afterwards.
std::vector<std::vector<float>> run(const Stmt& body, const std::vector<Buffer>& buffers, int64_t size) {
  LoweredFunc f;
  f.name = "hand_written";
  f.body = body;
  std::vector<Argument> args;
  std::vector<NDArray> arrays;
  for (size_t i = 0; i < buffers.size(); ++i) {
    Param p;
    p.buffer = buffers[i];
    f.params.push_back(p);
    arrays.push_back(input({size}, static_cast<int>(i) + 10));
    args.emplace_back(arrays.back());
  }
  run_backends(f, args);
  std::vector<std::vector<float>> out;
  for (const NDArray& a : arrays) out.push_back(a.to_vector<float>());
  return out;
}

}  // namespace

TEST(LowerPasses, SixteenSplitByFiveHasExactlyOneGuard) {
  Tensor a = placeholder({16, 16}, Float(32), "a");
  Tensor b = placeholder({16, 16}, Float(32), "b");
  Tensor c = compute(
      {16, 16}, [&](Expr x, Expr y) { return a(x, y) + b(x, y); }, "c");
  Schedule s = create_schedule({c});
  s[c].split(c.axis(0), 5);
  LowerOptions no_partition;
  no_partition.partition_loops = false;
  LoweredFunc guarded = lower(s, {a, b, c}, "f", no_partition);
  EXPECT_EQ(count_guards(guarded.body), 1) << guarded;
  LoweredFunc f = lower(s, {a, b, c}, "f");
  EXPECT_EQ(count_guards(f.body), 1) << f;
  auto loops = top_loops(f.body);
  ASSERT_EQ(loops.size(), 2u) << f;
  EXPECT_TRUE(is_const_int(loops[0]->extent, 3)) << f;  // rows 0..14 need no guard
  EXPECT_EQ(count_guards(loops[0]->body), 0) << f;
  for (const LoweredFunc& g : {guarded, f}) {
    NDArray av = input({16, 16}, 3), bv = input({16, 16}, 4), cv = output({16, 16});
    run_backends(g, {av, bv, cv});
    auto x = av.to_vector<float>(), y = bv.to_vector<float>();
    std::vector<float> want(x.size());
    for (size_t i = 0; i < x.size(); ++i) want[i] = x[i] + y[i];
    expect_close(cv.to_vector<float>(), want, 0, g.name);
  }
}

TEST(LowerPasses, SymbolicSplitByFourGivesAGuardFreeMainLoopAndAGuardedTail) {
  VAdd v;
  Schedule s = create_schedule({v.C});
  s[v.C].split(v.C.axis(0), 4);
  LoweredFunc f = lower(s, {v.A, v.B, v.C}, "vadd");
  auto loops = top_loops(f.body);
  ASSERT_EQ(loops.size(), 2u) << f;
  EXPECT_EQ(count_guards(loops[0]->body), 0) << f;
  EXPECT_EQ(count_guards(loops[1]->body), 1) << f;
  EXPECT_EQ(to_string(loops[0]->extent), "(n / 4)");
  check_vadd(f, "split 4");
}

TEST(LowerPasses, SplitBindVectorizeKeepsTheVectorVariableOutOfTheGuard) {
  VAdd v;
  Schedule s = create_schedule({v.C});
  auto [bx, rest] = s[v.C].split(v.C.axis(0), 64);
  auto [tx, vi] = s[v.C].split(rest, 4);
  s[v.C].bind(bx, thread_axis("blockIdx.x"));
  s[v.C].bind(tx, thread_axis("threadIdx.x"));
  s[v.C].vectorize(vi);
  LoweredFunc f = lower(s, {v.A, v.B, v.C}, "vadd");
  const std::string vec = vi.name();
  // The guard in front of the vector store checks the last lane without the vector variable.
  int vector_guards = count_stmts(f.body, [&](const Stmt& x) {
    const auto* n = x.as<IfThenElseNode>();
    if (!n || !is_guard(x) || !n->then_case.as<StoreNode>()) return false;
    return n->then_case.as<StoreNode>()->value.dtype().lanes() == 4;
  });
  EXPECT_EQ(vector_guards, 1) << f;
  count_stmts(f.body, [&](const Stmt& x) {
    const auto* n = x.as<IfThenElseNode>();
    if (n && n->then_case.as<StoreNode>() && n->then_case.as<StoreNode>()->value.dtype().lanes() == 4) {
      EXPECT_FALSE(mentions(n->cond, vec)) << n->cond;
    }
    return false;
  });
  // The scalar tail keeps the per-element guard.
  EXPECT_EQ(count_stmts(f.body,
                        [&](const Stmt& x) {
                          const auto* n = x.as<ForNode>();
                          return n && n->var.name() == vec && n->for_kind == ForKind::Serial;
                        }),
            1)
      << f;
  check_vadd(f, "split+bind+vectorize", {1, 3, 4, 63, 64, 65, 130});
}

TEST(LowerPasses, VectorizedLoopOfConstantSizeKeepsAScalarTail) {
  Tensor A = placeholder({20}, Float(32), "A");
  Tensor C = compute(
      {20}, [&](Expr i) { return A(i) * 2.0f; }, "C");
  Schedule s = create_schedule({C});
  auto [xo, xi] = s[C].split(C.axis(0), 8);
  s[C].vectorize(xi);
  LoweredFunc f = lower(s, {A, C}, "f");
  EXPECT_GT(count_exprs(f.body, [](const Expr& e) { return e.kind() == ExprKind::Ramp; }), 0) << f;
  NDArray a = input({20}, 5), c = output({20});
  run_backends(f, {a, c});
  auto av = a.to_vector<float>();
  std::vector<float> want(av.size());
  for (size_t i = 0; i < av.size(); ++i) want[i] = av[i] * 2.0f;
  expect_close(c.to_vector<float>(), want, 0, "20 by 8");
}

// lower() refuses it (tests/test_directives.cpp); a hand-built loop keeps the hint.
TEST(LowerPasses, VectorizingASymbolicExtentKeepsTheLoopForTheBackend) {
  Var n("n"), i("i");
  Buffer A = buf("A", {n});
  Stmt loop = for_loop(i, 0, n, ForKind::Vectorized, store(A, load(A, {i}) + make_const(Float(32), 1.0), {i}));
  Stmt out = vectorize_loops(loop);
  EXPECT_EQ(count_exprs(out, [](const Expr& e) { return e.kind() == ExprKind::Ramp; }), 0) << out;
  const auto* f = out.as<ForNode>();
  ASSERT_NE(f, nullptr) << out;
  EXPECT_EQ(f->for_kind, ForKind::Vectorized);
  EXPECT_EQ(run(let_stmt(n, 5, out), {A}, 5), run(let_stmt(n, 5, loop), {A}, 5));
}

TEST(LowerPasses, UnrollCopiesConstantLoopsOnly) {
  VAdd v;
  Schedule s = create_schedule({v.C});
  auto [xo, xi] = s[v.C].split(v.C.axis(0), 4);
  s[v.C].unroll(xi);
  LoweredFunc f = lower(s, {v.A, v.B, v.C}, "vadd");
  EXPECT_EQ(count_stmts(f.body,
                        [](const Stmt& x) {
                          const auto* n = x.as<ForNode>();
                          return n && n->var.name() == "i.inner";
                        }),
            0)
      << f;
  check_vadd(f, "unroll 4");

  Var n("n"), i("i");
  Buffer A = buf("A", {n});
  Stmt loop = for_loop(i, 0, n, ForKind::Unrolled, store(A, make_const(Float(32), 1.0), {i}));
  Stmt out = unroll_loops(loop);
  ASSERT_NE(out.as<ForNode>(), nullptr);
  EXPECT_EQ(out.as<ForNode>()->for_kind, ForKind::Serial);
  Stmt three = unroll_loops(for_loop(i, 2, 3, ForKind::Unrolled, store(A, make_const(Float(32), 1.0), {i})));
  EXPECT_EQ(to_string(three), "A[2] = 1.0f;\nA[3] = 1.0f;\nA[4] = 1.0f;\n");
}

TEST(LowerPasses, PartitionOnALowerBoundGuardsTheHead) {
  Var n("n"), i("i");
  Buffer A = buf("A", {n});
  Stmt body = store(A, make_const(Float(32), 1.0), {i});
  Stmt loop = for_loop(i, 0, 10, ForKind::Serial, if_then_else(likely(i >= 3), body));
  Stmt out = partition_loops(loop);
  EXPECT_EQ(run(out, {A}, 10), run(loop, {A}, 10));
  // (The head, where the guard never holds, is dropped.)
  EXPECT_EQ(to_string(out),
            "for (i, 3, 7) {\n"
            "  A[i] = 1.0f;\n"
            "}\n");
  // Conditions on the thread index of an enclosing thread loop stay as they are.
  Var tx("tx");
  Stmt threaded = for_loop(tx, 0, 32, ForKind::ThreadBinding,
                           for_loop(i, 0, 10, ForKind::Serial, if_then_else(likely(i + tx < 20), body)), "threadIdx.x");
  EXPECT_TRUE(partition_loops(threaded).same_as(threaded));
  // A loop that allocates shared memory stays whole: two copies would declare it twice.
  Buffer S = buf("S", {10}, MemoryScope::Shared);
  Stmt shared = for_loop(i, 0, 10, ForKind::Serial,
                         allocate(S, if_then_else(likely(i >= 3), store(S, make_const(Float(32), 1.0), {i}))));
  EXPECT_TRUE(partition_loops(shared).same_as(shared));
}

// A lane nest (a loop over "warp" or "warpgroup" fragments, spread over the lanes by the
// CUDA backend) is only narrowed: a split whose guarded part does nothing (rows past a
// tile's end) is taken, one into two loops that both run (a causal mask) is not.
TEST(LowerPasses, PartitionOnlyNarrowsALaneNest) {
  Var i("i"), j("j");
  for (MemoryScope scope : {MemoryScope::Warp, MemoryScope::Warpgroup}) {
    Buffer F = buf("F", {64}, scope);
    Stmt past_end =
        for_loop(i, 0, 64, ForKind::Serial, if_then_else(likely(i < 40), store(F, make_const(Float(32), 1.0), {i})));
    EXPECT_EQ(to_string(partition_loops(past_end)),
              "for (i, 0, 40) {\n"
              "  F[i] = 1.0f;\n"
              "}\n");
    Stmt diagonal = for_loop(
        i, 0, 8, ForKind::Serial,
        for_loop(
            j, 0, 8, ForKind::Serial,
            store(F, select(likely(i >= 4), make_const(Float(32), 1.0), make_const(Float(32), 0.0)), {i * 8 + j})));
    EXPECT_EQ(to_string(partition_loops(diagonal)),
              "for (i, 0, 8) {\n"
              "  for (j, 0, 8) {\n"
              "    F[((i * 8) + j)] = select((i >= 4), 1.0f, 0.0f);\n"
              "  }\n"
              "}\n");
  }
  // The same loop over a local buffer splits in two.
  Buffer L = buf("L", {64}, MemoryScope::Local);
  Stmt diagonal = for_loop(
      i, 0, 8, ForKind::Serial,
      for_loop(j, 0, 8, ForKind::Serial,
               store(L, select(likely(i >= 4), make_const(Float(32), 1.0), make_const(Float(32), 0.0)), {i * 8 + j})));
  EXPECT_NE(to_string(partition_loops(diagonal)).find("for (i, 4, 4)"), std::string::npos)
      << to_string(partition_loops(diagonal));
}

// A select(likely(cond), a, b) partitions its loop as a guard does: the blocks where cond
// holds for every inner iteration take a (a causal mask below its diagonal), the rest keep
// the select.
TEST(LowerPasses, PartitionOnALikelySelectTakesItsFirstValue) {
  Var b("b"), j("j");
  Buffer A = buf("A", {16});
  Expr at = b * 4 + j;
  Stmt loop = for_loop(
      b, 0, 4, ForKind::Serial,
      for_loop(j, 0, 4, ForKind::Serial,
               store(A, select(likely(at <= 9), make_const(Float(32), 1.0), make_const(Float(32), -1.0)), {at})));
  Stmt out = partition_loops(loop);
  EXPECT_EQ(run(out, {A}, 16), run(loop, {A}, 16));
  EXPECT_EQ(to_string(out),
            "for (b, 0, 2) {\n"
            "  for (j, 0, 4) {\n"
            "    A[((b * 4) + j)] = 1.0f;\n"
            "  }\n"
            "}\n"
            "for (b, 2, 2) {\n"
            "  for (j, 0, 4) {\n"
            "    A[((b * 4) + j)] = select((((b * 4) + j) <= 9), 1.0f, -1.0f);\n"
            "  }\n"
            "}\n");
  // A condition on a let's variable has no split point outside the let: the loop stays
  // whole.
  Var t("t");
  Stmt in_let = for_loop(
      b, 0, 4, ForKind::Serial,
      for_loop(
          j, 0, 4, ForKind::Serial,
          store(A, let(t, j, select(likely(b * 4 + t <= 9), make_const(Float(32), 1.0), make_const(Float(32), -1.0))),
                {at})));
  Stmt kept = partition_loops(in_let);
  EXPECT_EQ(run(kept, {A}, 16), run(in_let, {A}, 16));
  EXPECT_EQ(to_string(kept).rfind("for (b, 0, 4)", 0), 0u) << to_string(kept);
  // A select without likely() stays where it is.
  Stmt plain = for_loop(b, 0, 4, ForKind::Serial,
                        store(A, select(b <= 1, make_const(Float(32), 1.0), make_const(Float(32), -1.0)), {b}));
  EXPECT_TRUE(partition_loops(plain).same_as(plain));
}

TEST(LowerPasses, VectorizeHandWrittenLoops) {
  Var n("n"), x("x"), i("i");
  Buffer A = buf("A", {n});
  // A condition that does not depend on the lane stays a scalar if around vector code.
  Stmt loop = for_loop(i, 0, 4, ForKind::Vectorized,
                       if_then_else(x < n, store(A, load(A, {i}) + make_const(Float(32), 1.0), {i})));
  Stmt out = vectorize_loops(loop);
  Stmt with_x = let_stmt(x, 2, out), with_x_before = let_stmt(x, 2, loop);
  EXPECT_EQ(run(with_x, {A}, 4), run(with_x_before, {A}, 4));
  const auto* top = out.as<IfThenElseNode>();
  ASSERT_NE(top, nullptr) << out;
  const auto* st = top->then_case.as<StoreNode>();
  ASSERT_NE(st, nullptr) << out;
  EXPECT_NE(st->indices[0].as<RampNode>(), nullptr) << out;
  EXPECT_EQ(st->value.dtype(), Float(32, 4));
  // A lane-dependent condition that is not a guard keeps the loop, marked for the backend.
  Stmt odd =
      for_loop(i, 0, 4, ForKind::Vectorized, if_then_else(i % 2 == 0, store(A, make_const(Float(32), 2.0), {i})));
  Stmt odd_out = vectorize_loops(odd);
  const auto* serial = odd_out.as<ForNode>();
  ASSERT_NE(serial, nullptr);
  EXPECT_EQ(serial->for_kind, ForKind::Vectorized);
}

TEST(LowerPasses, LaneConditionOnAPrivateAccumulatorBlendsIntoVectorCode) {
  // A conditional reduction's update (a convolution's input gradient: the taps its window
  // reaches) into a local accumulator: acc[i] += A[i - x] where 0 <= i - x < 6. The lane
  // condition becomes a blend (the load runs on the lanes that take it: A[i - x] for
  // i < x lies before A), the lane-free part stays an if around it.
  Var i("i"), x("x"), y("y"), t("t", Float(32));
  Buffer A = buf("A", {16}), Out = buf("Out", {16}), acc = buf("acc", {8}, MemoryScope::Local);
  auto body = [&](ForKind kind) {
    Stmt update = for_loop(i, 0, 8, kind,
                           if_then_else(y > 0 && i - x >= 0 && i - x < 6,
                                        let_stmt(t, load(A, {i - x}) * 2.0f, store(acc, load(acc, {i}) + t, {i}))));
    Stmt init = for_loop(i, 0, 8, ForKind::Serial, store(acc, make_const(Float(32), 0.5), {i}));
    Stmt out = for_loop(i, 0, 8, ForKind::Serial, store(Out, load(acc, {i}), {i}));
    return let_stmt(x, 3, let_stmt(y, 1, allocate(acc, seq({init, update, out}))));
  };
  Stmt vec = vectorize_loops(body(ForKind::Vectorized));
  EXPECT_EQ(count_stmts(vec,
                        [](const Stmt& s) {
                          const auto* f = s.as<ForNode>();
                          return f && f->for_kind == ForKind::Vectorized;
                        }),
            0)
      << vec;
  EXPECT_EQ(count_exprs(vec,
                        [](const Expr& e) {
                          const auto* c = e.as<CallNode>();
                          return c && c->op == Intrinsic::IfThenElse && c->dtype.lanes() == 8;
                        }),
            1)
      << vec;
  EXPECT_NE(to_string(vec).find("if ((y > 0))"), std::string::npos) << vec;
  EXPECT_EQ(run(vec, {A, Out}, 16), run(body(ForKind::Serial), {A, Out}, 16));

  // The same update of a global buffer stays a loop: writing back the lanes the condition
  // skips could undo another thread's store.
  Buffer G = buf("G", {16});
  Stmt global = for_loop(i, 0, 8, ForKind::Vectorized,
                         if_then_else(i - x >= 0 && i - x < 6, store(G, load(G, {i}) + load(A, {i - x}), {i})));
  const Stmt kept_loop = vectorize_loops(global);
  const auto* kept = kept_loop.as<ForNode>();
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->for_kind, ForKind::Vectorized);
}

TEST(LowerPasses, VectorOfAnotherWidthThanAPowerOfTwoIsPowerOfTwoPieces) {
  // 56 lanes: pieces of 32, 16 and 8 (LLVM widens a 56-lane vector, and a register tile
  // of them spills); 8 and fewer lanes or a power of two stay one vector.
  Var i("i");
  Buffer A = buf("A", {64});
  auto loop = [&](int lanes) {
    return for_loop(i, 4, lanes, ForKind::Vectorized, store(A, load(A, {i}) * make_const(Float(32), 2.0), {i}));
  };
  Stmt out = vectorize_loops(loop(56));
  EXPECT_EQ(to_string(out),
            "A[ramp(4, 1, 32)] = (A[ramp(4, 1, 32)] * broadcast(2.0f, 32));\n"
            "A[ramp(36, 1, 16)] = (A[ramp(36, 1, 16)] * broadcast(2.0f, 16));\n"
            "A[ramp(52, 1, 8)] = (A[ramp(52, 1, 8)] * broadcast(2.0f, 8));\n");
  EXPECT_EQ(run(out, {A}, 64), run(loop(56), {A}, 64));
  for (int lanes : {7, 8, 32}) {
    Stmt one = vectorize_loops(loop(lanes));
    const auto* st = one.as<StoreNode>();
    ASSERT_NE(st, nullptr) << one;
    EXPECT_EQ(st->value.dtype(), Float(32, lanes));
  }
  // 13 = 8 + 4 + 1: the last piece is a scalar statement.
  Stmt odd = vectorize_loops(loop(13));
  EXPECT_EQ(count_exprs(odd, [](const Expr& e) { return e.kind() == ExprKind::Ramp; }), 4) << odd;
  EXPECT_EQ(run(odd, {A}, 64), run(loop(13), {A}, 64));
}

TEST(LowerPasses, BarriersSeparateSharedWritesFromReadsOfOtherThreads) {
  Var tx("tx"), k("k");
  Buffer S = buf("S", {32}, MemoryScope::Shared);
  Buffer A = buf("A", {32}), B = buf("B", {32});
  Stmt write = store(S, load(A, {tx}), {tx});
  Stmt read = store(B, load(S, {(tx + 1) % 32}), {tx});
  Stmt body = for_loop(tx, 0, 32, ForKind::ThreadBinding, seq({write, read}), "threadIdx.x");
  Stmt out = insert_barriers(body);
  // Run in lockstep, the barrier makes every thread see the others' writes.
  auto results = run(allocate(S, out), {A, B}, 32);
  for (int t = 0; t < 32; ++t)
    EXPECT_EQ(results[1][static_cast<size_t>(t)], results[0][static_cast<size_t>((t + 1) % 32)]);
  EXPECT_EQ(to_string(out),
            "launch_thread threadIdx.x (tx, 0, 32) {\n"
            "  S[tx] = A[tx];\n"
            "  barrier();\n"
            "  B[tx] = S[((tx + 1) % 32)];\n"
            "}\n");
  // In a loop, the next iteration's write waits for this iteration's reads.
  Stmt looped = for_loop(tx, 0, 32, ForKind::ThreadBinding, for_loop(k, 0, 4, ForKind::Serial, seq({write, read})),
                         "threadIdx.x");
  EXPECT_EQ(count_kind(insert_barriers(looped), StmtKind::Barrier), 2);
  // Outside thread loops (CPU code) nothing is inserted.
  Stmt cpu = for_loop(tx, 0, 32, ForKind::Serial, seq({write, read}));
  EXPECT_EQ(count_kind(insert_barriers(cpu), StmtKind::Barrier), 0);
  // Under a condition on the thread index a barrier would be reached by part of the block.
  Stmt divergent =
      for_loop(tx, 0, 32, ForKind::ThreadBinding, if_then_else(tx < 16, seq({write, read})), "threadIdx.x");
  EXPECT_EQ(count_kind(insert_barriers(divergent), StmtKind::Barrier), 0);
}

// A thread that reads back only what it wrote itself needs no barrier: one index for every
// access, a one-to-one sum of thread and loop variables (a running value per thread, a
// row of a shared accumulator per thread). Anything else keeps its barrier.
TEST(LowerPasses, BarriersSkipElementsEachThreadOwns) {
  Var tx("tx"), e("e"), r("r"), t("t", Float(32));
  Buffer S = buf("S", {32 * 33}, MemoryScope::Shared);
  Buffer A = buf("A", {32 * 33}), B = buf("B", {32 * 33});
  auto barriers = [&](const Expr& write_at, const Expr& read_at) {
    // Per e: S[write_at] = A + S[read_at] (a read-modify-write through a let, as a row
    // reduction's element update is), then the next e.
    Stmt update = let_stmt(t, load(S, {read_at}), store(S, t + load(A, {write_at}), {write_at}));
    Stmt body = for_loop(tx, 0, 32, ForKind::ThreadBinding, for_loop(e, 0, 32, ForKind::Serial, update), "threadIdx.x");
    return count_kind(insert_barriers(body), StmtKind::Barrier);
  };
  EXPECT_EQ(barriers(tx * 33 + e, tx * 33 + e), 0);      // each thread's own row of 33
  EXPECT_EQ(barriers(tx + e * 32, tx + e * 32), 0);      // each thread's own column
  EXPECT_EQ(barriers(tx * 16 + e, tx * 16 + e), 1);      // rows of 16 overlap the next thread's
  EXPECT_EQ(barriers(tx * 33 + e, tx * 33 + e + 1), 1);  // reads the element written next
  EXPECT_EQ(barriers(e * 32, e * 32), 1);                // every thread on one element
  {
    // Two loops of one variable (a partitioned loop's parts) span both ranges: e in [0, 10)
    // reaches the next thread's row of 4.
    Stmt update = let_stmt(t, load(S, {tx * 4 + e}), store(S, t + 1.0f, {tx * 4 + e}));
    Stmt parts = seq({for_loop(e, 3, 7, ForKind::Serial, update), for_loop(e, 0, 3, ForKind::Serial, update)});
    Stmt body = for_loop(tx, 0, 32, ForKind::ThreadBinding, for_loop(r, 0, 2, ForKind::Serial, parts), "threadIdx.x");
    EXPECT_GE(count_kind(insert_barriers(body), StmtKind::Barrier), 1) << body;
  }
  // A let's value reads shared memory too: a later statement waits for the writes.
  Stmt write = store(S, load(A, {tx}), {tx});
  Stmt read = let_stmt(t, load(S, {(tx + 1) % 32}), store(B, t, {tx}));
  Stmt body = for_loop(tx, 0, 32, ForKind::ThreadBinding, seq({write, read}), "threadIdx.x");
  EXPECT_EQ(count_kind(insert_barriers(body), StmtKind::Barrier), 1);
}

TEST(LowerPasses, RemoveNoOps) {
  Var n("n"), i("i"), j("j");
  Buffer A = buf("A", {n});
  Stmt keep = store(A, make_const(Float(32), 1.0), {i});
  Stmt body = seq({
      for_loop(j, 0, 0, ForKind::Serial, keep),
      for_loop(j, 0, n, ForKind::Serial, evaluate(j + 1)),
      if_then_else(i < n, evaluate(0), evaluate(1)),
      allocate(buf("T", {4}), evaluate(0)),
      if_then_else(i < 3, evaluate(0), keep),
      store(A, load(A, {i}), {i}),         // an element's own value
      store(A, load(A, {i}, i < 2), {i}),  // not: 0 where i >= 2
      store(A, load(A, {i + 1}), {i}),     // not: the next element's
      keep,
  });
  Stmt out = remove_no_ops(for_loop(i, 0, n, ForKind::Serial, body));
  EXPECT_EQ(to_string(out),
            "for (i, 0, n) {\n"
            "  if (!(i < 3)) {\n"
            "    A[i] = 1.0f;\n"
            "  }\n"
            "  A[i] = A[i if (i < 2)];\n"
            "  A[i] = A[(i + 1)];\n"
            "  A[i] = 1.0f;\n"
            "}\n");
}

TEST(LowerPasses, StorageFlattenKeepsArgumentShapesAndFlattensIntermediates) {
  Var m("m"), n("n");
  Tensor A = placeholder({m, n}, Float(32), "A");
  Tensor B = compute(
      {m, n}, [&](Expr i, Expr j) { return A(i, j) + 1.0f; }, "B");
  Tensor C = compute(
      {m, n}, [&](Expr i, Expr j) { return B(i, j) * B(i, j); }, "C");
  Schedule s = create_schedule({C});
  auto [xo, xi] = s[C].split(C.axis(0), 2);
  s[B].compute_at(s[C], xo);
  LoweredFunc f = lower(s, {A, C}, "f");
  EXPECT_EQ(f.params[0].buffer.ndim(), 2);
  // Every access has one index; B's buffer covers two rows.
  EXPECT_EQ(count_exprs(f.body,
                        [](const Expr& e) {
                          const auto* l = e.as<LoadNode>();
                          return l && l->indices.size() != 1;
                        }),
            0)
      << f;
  EXPECT_EQ(count_stmts(f.body,
                        [](const Stmt& x) {
                          const auto* st = x.as<StoreNode>();
                          return st && st->indices.size() != 1;
                        }),
            0)
      << f;
  int two_rows = count_stmts(f.body, [&](const Stmt& x) {
    const auto* a = x.as<AllocateNode>();
    return a && a->buffer.ndim() == 1 && equal(simplify(a->buffer.shape()[0] - n * 2), 0);
  });
  EXPECT_GE(two_rows, 1) << f;
  NDArray a = input({5, 3}, 6), c = output({5, 3});
  run_backends(f, {a, c});
  auto av = a.to_vector<float>();
  std::vector<float> want(av.size());
  for (size_t i = 0; i < av.size(); ++i) want[i] = (av[i] + 1.0f) * (av[i] + 1.0f);
  expect_close(c.to_vector<float>(), want, 1e-6f, "flatten");
}

TEST(LowerPasses, ShadowedLoopVariablesAreRenamed) {
  Var n("n");
  Tensor X = placeholder({n + 2}, Float(32), "X");
  Tensor A = compute(
      {n + 2}, [&](Expr i) { return X(i) * 2.0f; }, "A");
  Tensor B = compute(
      {n}, [&](Expr i) { return A(i) + A(i + 2); }, "B");
  Schedule s = create_schedule({B});
  s[A].compute_at(s[B], B.axis(0));
  LoweredFunc f = lower(s, {X, B}, "f");
  std::string text = to_string(f);
  EXPECT_NE(text.find("for (i_1, 0, 3)"), std::string::npos) << text;
}
