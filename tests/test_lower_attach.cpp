// compute_at and thread bindings, lowered and run with interpret() and the LLVM JIT against plain C++:
// the bound inference cases of TVM's suite, end to end.
#include <gtest/gtest.h>

#include <te/te.h>

#include "test_lower_util.h"

using namespace te;
using namespace lower_test;

namespace {

// The shape and scope of every Allocate in s, as "name:scope:size" (size "?" if symbolic).
std::vector<std::string> allocations(const Stmt& s) {
  std::vector<std::string> out;
  count_stmts(s, [&](const Stmt& x) {
    if (const auto* a = x.as<AllocateNode>()) {
      const int64_t* size = as_const_int(a->buffer.shape()[0]);
      out.push_back(a->buffer.name() + ":" + scope_name(a->buffer.scope()) + ":" +
                    (size ? std::to_string(*size) : "?"));
    }
    return false;
  });
  return out;
}

struct Chain {
  Var m{"m"}, l{"l"};
  Tensor A = placeholder({m, l}, Float(32), "A");
  Tensor A1 = compute(
      {m, l}, [&](Expr i, Expr j) { return A(i, j) * 2.0f; }, "A1");
  Tensor A2 = compute(
      {m, l}, [&](Expr i, Expr j) { return A1(i, j) + 3.0f; }, "A2");
};

void check_chain(const Chain& c, const LoweredFunc& f, const std::string& what, std::vector<Argument> extra = {}) {
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {7, 3}, {8, 5}, {20, 9}, {33, 17}}) {
    NDArray a = input({rows, cols}, 1), out = output({rows, cols});
    std::vector<Argument> args = {a, out};
    args.insert(args.end(), extra.begin(), extra.end());
    run_backends(f, args);
    auto av = a.to_vector<float>();
    std::vector<float> want(av.size());
    for (size_t i = 0; i < av.size(); ++i) want[i] = av[i] * 2.0f + 3.0f;
    expect_close(out.to_vector<float>(), want, 1e-6f, what + " " + std::to_string(rows) + "x" + std::to_string(cols));
  }
  (void)c;
}

}  // namespace

TEST(LowerAttach, ProducerAtASplitComputesEightRowsPerIteration) {
  Chain c;
  Schedule s = create_schedule({c.A2});
  auto [xo, xi] = s[c.A2].split(c.A2.axis(0), 8);
  s[c.A1].compute_at(s[c.A2], xo);
  LoweredFunc f = lower(s, {c.A, c.A2}, "attach_split");
  // Allocated per outer iteration, for 8 rows of l columns.
  int allocs = count_stmts(f.body, [&](const Stmt& x) {
    const auto* a = x.as<AllocateNode>();
    return a && equal(simplify(a->buffer.shape()[0] - c.l * 8), 0);
  });
  EXPECT_EQ(allocs, 2) << f;  // in the main loop and in the tail
  check_chain(c, f, "split");
}

TEST(LowerAttach, ProducerAtATileComputesOneTile) {
  Chain c;
  Schedule s = create_schedule({c.A2});
  auto [xo, yo, xi, yi] = s[c.A2].tile(c.A2.axis(0), c.A2.axis(1), 8, 8);
  s[c.A1].compute_at(s[c.A2], yo);
  LoweredFunc f = lower(s, {c.A, c.A2}, "attach_tile");
  for (const std::string& a : allocations(f.body)) EXPECT_EQ(a, "A1:global:64") << f;
  check_chain(c, f, "tile");
}

TEST(LowerAttach, ProducerAtAFusedThenSplitLoopWithASymbolicFactor) {
  Chain c;
  Var factor("s");
  Schedule s = create_schedule({c.A2});
  IterVar fused = s[c.A2].fuse(c.A2.axis(0), c.A2.axis(1));
  auto [xo, xi] = s[c.A2].split(fused, factor);
  s[c.A1].compute_at(s[c.A2], xo);
  LoweredFunc f = lower(s, {c.A, c.A2}, "fuse_split");
  ASSERT_EQ(f.params.size(), 3u);
  EXPECT_EQ(f.params[2].name(), "s");
  for (int sv : {1, 3, 4, 16}) check_chain(c, f, "s=" + std::to_string(sv), {sv});
}

TEST(LowerAttach, Conv1dProducerInsideTheConsumer) {
  Var n("n");
  Tensor X = placeholder({n + 2}, Float(32), "X");
  Tensor A = compute(
      {n + 2}, [&](Expr i) { return X(i) * 0.5f; }, "A");
  Tensor B = compute(
      {n},
      [&](Expr ii) {
        Expr i = ii + 1;
        return A(i - 1) + A(i) + A(i + 1);
      },
      "B");
  Schedule s = create_schedule({B});
  s[A].compute_at(s[B], B.axis(0));
  LoweredFunc f = lower(s, {X, B}, "conv1d");
  EXPECT_EQ(allocations(f.body), (std::vector<std::string>{"A:global:3"})) << f;
  for (int64_t len : {1, 2, 7, 30}) {
    NDArray x = input({len + 2}, 2), b = output({len});
    run_backends(f, {x, b});
    auto xv = x.to_vector<float>();
    std::vector<float> want(static_cast<size_t>(len));
    for (int64_t i = 0; i < len; ++i)
      want[static_cast<size_t>(i)] = xv[static_cast<size_t>(i)] * 0.5f + xv[static_cast<size_t>(i + 1)] * 0.5f +
                                     xv[static_cast<size_t>(i + 2)] * 0.5f;
    expect_close(b.to_vector<float>(), want, 1e-6f, "n=" + std::to_string(len));
  }
}

TEST(LowerAttach, BlurProducerInsideTheConsumer) {
  const int n = 12;
  Tensor X = placeholder({n, n}, Float(32), "X");
  Tensor A = compute(
      {n, n}, [&](Expr i, Expr j) { return X(i, j) + 1.0f; }, "A");
  Tensor B = compute(
      {n - 2, n - 2},
      [&](Expr ii, Expr jj) {
        Expr i = ii + 1, j = jj + 1;
        return A(i, j) + A(i - 1, j) + A(i + 1, j) + A(i, j + 1) + A(i, j - 1);
      },
      "B");
  Schedule s = create_schedule({B});
  s[A].compute_at(s[B], B.axis(1));
  LoweredFunc f = lower(s, {X, B}, "blur");
  EXPECT_EQ(allocations(f.body), (std::vector<std::string>{"A:global:9"})) << f;
  NDArray x = input({n, n}, 3), b = output({n - 2, n - 2});
  run_backends(f, {x, b});
  auto xv = x.to_vector<float>();
  auto at = [&](int i, int j) { return xv[static_cast<size_t>(i * n + j)] + 1.0f; };
  std::vector<float> want;
  for (int i = 1; i < n - 1; ++i)
    for (int j = 1; j < n - 1; ++j)
      want.push_back(at(i, j) + at(i - 1, j) + at(i + 1, j) + at(i, j + 1) + at(i, j - 1));
  expect_close(b.to_vector<float>(), want, 1e-6f, "blur");
}

TEST(LowerAttach, NestedThreadsWithLocalAndSharedProducers) {
  Var m("m");
  Tensor A = placeholder({m}, Float(32), "A");
  Tensor A1 = compute(
      {m}, [&](Expr i) { return A(i) * 2.0f; }, "A1");
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
  LoweredFunc f = lower(s, {A, A3}, "nest_thread");
  // The shared buffer sits outside the thread loop; each thread keeps one local element.
  EXPECT_EQ(allocations(f.body), (std::vector<std::string>{"A2:shared:32", "A1:local:1"})) << f;
  // threadIdx.x is one loop: the shared stage reuses it instead of nesting another.
  EXPECT_EQ(count_stmts(f.body,
                        [](const Stmt& x) {
                          const auto* n = x.as<ForNode>();
                          return n && n->thread_tag == "threadIdx.x";
                        }),
            1)
      << f;
  // Each thread reads the element of A2 it wrote itself: no barrier.
  EXPECT_EQ(count_kind(f.body, StmtKind::Barrier), 0) << f;
  for (int64_t len : {1, 31, 32, 65}) {
    NDArray a = input({len}, 4), out = output({len});
    run_backends(f, {a, out});
    auto av = a.to_vector<float>();
    std::vector<float> want(av.size());
    for (size_t i = 0; i < av.size(); ++i) want[i] = av[i] * 2.0f + 2.0f + 3.0f;
    expect_close(out.to_vector<float>(), want, 1e-6f, "m=" + std::to_string(len));
  }
}

TEST(LowerAttach, ChainOfComputeAtAndAProducerReadByTwoConsumers) {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = compute(
      {n}, [&](Expr i) { return A(i) + 1.0f; }, "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return B(i) * 2.0f; }, "C");
  Tensor D = compute(
      {n}, [&](Expr i) { return C(i) + B(i); }, "D");
  Schedule s = create_schedule({D});
  auto [xo, xi] = s[D].split(D.axis(0), 4);
  s[C].compute_at(s[D], xo);
  s[B].compute_at(s[D], xo);
  LoweredFunc f = lower(s, {A, D}, "chain");
  for (int64_t len : {1, 3, 4, 10}) {
    NDArray a = input({len}, 5), d = output({len});
    run_backends(f, {a, d});
    auto av = a.to_vector<float>();
    std::vector<float> want(av.size());
    for (size_t i = 0; i < av.size(); ++i) want[i] = (av[i] + 1.0f) * 2.0f + (av[i] + 1.0f);
    expect_close(d.to_vector<float>(), want, 1e-6f, "n=" + std::to_string(len));
  }

  // B inside C inside D: B covers what one iteration of C's loop reads.
  Schedule t = create_schedule({D});
  auto [to, ti] = t[D].split(D.axis(0), 4);
  t[C].compute_at(t[D], to);
  t[B].compute_inline();
  LoweredFunc g = lower(t, {A, D}, "chain2");
  NDArray a = input({9}, 6), d = output({9});
  run_backends(g, {a, d});
  auto av = a.to_vector<float>();
  std::vector<float> want(av.size());
  for (size_t i = 0; i < av.size(); ++i) want[i] = (av[i] + 1.0f) * 2.0f + (av[i] + 1.0f);
  expect_close(d.to_vector<float>(), want, 1e-6f, "chain2");
}

TEST(LowerAttach, SharedCacheReadCooperativelyFetchedByTheThreads) {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = compute(
      {n}, [&](Expr i) { return A(i) * A(i) + 1.0f; }, "B");
  Schedule s = create_schedule({B});
  Tensor AS = s.cache_read(A, "shared", {B});
  IterVar tx = thread_axis("threadIdx.x");
  auto [bo, bi] = s[B].split(B.axis(0), 16);
  s[B].bind(bo, thread_axis("blockIdx.x"));
  s[B].bind(bi, tx);
  s[AS].compute_at(s[B], bo);
  auto [ao, ai] = s[AS].split(AS.axis(0), 16);
  s[AS].bind(ai, tx);
  LoweredFunc f = lower(s, {A, B}, "fetch");
  EXPECT_EQ(allocations(f.body), (std::vector<std::string>{"A.shared:shared:16"})) << f;
  EXPECT_EQ(count_kind(f.body, StmtKind::Barrier), 1) << f;
  for (int64_t len : {1, 15, 16, 40}) {
    NDArray a = input({len}, 7), b = output({len});
    run_backends(f, {a, b});
    auto av = a.to_vector<float>();
    std::vector<float> want(av.size());
    for (size_t i = 0; i < av.size(); ++i) want[i] = av[i] * av[i] + 1.0f;
    expect_close(b.to_vector<float>(), want, 1e-6f, "n=" + std::to_string(len));
  }
}
