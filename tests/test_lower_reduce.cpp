// Reductions lowered and run with interpret() and the JIT and the LLVM JIT against plain C++: reduction schedules and
// the placement of the initialisation, every reducer, rfactor, cache_write, and the GEMM
// of TVM's suite with shared and local caches on GPU threads.
#include <gtest/gtest.h>

#include <te/te.h>

#include <algorithm>
#include <array>
#include <limits>

#include "test_lower_util.h"
#include "test_util.h"

using namespace te;
using namespace lower_test;

namespace {

struct RowSum {
  Var n{"n"}, m{"m"};
  Tensor A = placeholder({n, m}, Float(32), "A");
  IterVar k = reduce_axis({0, m}, "k");
  Tensor C = compute(
      {n}, [&](Expr i) { return sum(A(i, k), {k}); }, "C");
};

void check_row_sum(const LoweredFunc& f, const std::string& what) {
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {5, 7}, {16, 9}, {3, 33}}) {
    NDArray a = input({rows, cols}, 1), c = output({rows});
    run_backends(f, {a, c});
    auto av = a.to_vector<float>();
    std::vector<float> want(static_cast<size_t>(rows), 0.0f);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) want[static_cast<size_t>(i)] += av[static_cast<size_t>(i * cols + j)];
    expect_close(c.to_vector<float>(), want, 1e-5f, what + " " + std::to_string(rows) + "x" + std::to_string(cols));
  }
}

struct MatMul {
  Var M{"M"}, N{"N"}, K{"K"};
  Tensor A = placeholder({M, K}, Float(32), "A");
  Tensor B = placeholder({K, N}, Float(32), "B");
  IterVar k = reduce_axis({0, K}, "k");
  Tensor C = compute(
      {M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
};

std::vector<float> matmul_reference(const NDArray& a, const NDArray& b) {
  int64_t M = a.shape()[0], K = a.shape()[1], N = b.shape()[1];
  auto av = a.to_vector<float>(), bv = b.to_vector<float>();
  std::vector<float> c(static_cast<size_t>(M * N), 0.0f);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float acc = 0;
      for (int64_t p = 0; p < K; ++p) acc += av[static_cast<size_t>(i * K + p)] * bv[static_cast<size_t>(p * N + j)];
      c[static_cast<size_t>(i * N + j)] = acc;
    }
  return c;
}

void check_matmul(const LoweredFunc& f, const std::string& what,
                  std::vector<std::array<int64_t, 3>> sizes = {{1, 1, 1}, {5, 7, 3}, {16, 16, 16}, {17, 9, 33}}) {
  for (auto [M, K, N] : sizes) {
    NDArray a = input({M, K}, 2), b = input({K, N}, 3), c = output({M, N});
    run_backends(f, {a, b, c});
    expect_close(c.to_vector<float>(), matmul_reference(a, b), 1e-4f,
                 what + " " + std::to_string(M) + "x" + std::to_string(K) + "x" + std::to_string(N));
  }
}

}  // namespace

TEST(LowerReduce, RowSumUnderManySchedules) {
  using Apply = std::function<void(Schedule&, const RowSum&)>;
  std::vector<std::pair<std::string, Apply>> cases = {
      {"none", [](Schedule&, const RowSum&) {}},
      {"split k by 4", [](Schedule& s, const RowSum& r) { s[r.C].split(r.k, 4); }},
      {"reduction outermost",
       [](Schedule& s, const RowSum& r) {
         auto [ko, ki] = s[r.C].split(r.k, 3);
         s[r.C].reorder({ko, r.C.axis(0), ki});
       }},
      {"unroll inner reduction",
       [](Schedule& s, const RowSum& r) {
         auto [ko, ki] = s[r.C].split(r.k, 4);
         s[r.C].unroll(ki);
       }},
      {"split rows, parallel, vectorize rows inside k",
       [](Schedule& s, const RowSum& r) {
         auto [io, ii] = s[r.C].split(r.C.axis(0), 4);
         s[r.C].reorder({io, r.k, ii});
         s[r.C].parallel(io);
         s[r.C].vectorize(ii);
       }},
      {"rows on threads",
       [](Schedule& s, const RowSum& r) {
         auto [io, ii] = s[r.C].split(r.C.axis(0), 4);
         s[r.C].bind(io, thread_axis("blockIdx.x"));
         s[r.C].bind(ii, thread_axis("threadIdx.x"));
       }},
  };
  for (auto& [name, apply] : cases) {
    RowSum r;
    Schedule s = create_schedule({r.C});
    apply(s, r);
    check_row_sum(lower(s, {r.A, r.C}, "row_sum"), name);
  }
}

TEST(LowerReduce, InitGoesJustOutsideTheOutermostReductionLoop) {
  RowSum r;
  Schedule s = create_schedule({r.C});
  s[r.C].reorder({r.k, r.C.axis(0)});
  LoweredFunc f = lower(s, {r.A, r.C}, "row_sum");
  // The init runs in its own loop over i, before the reduction loop.
  const auto* q = f.body.as<SeqNode>();
  ASSERT_NE(q, nullptr) << f;
  ASSERT_EQ(q->seq.size(), 2u) << f;
  const auto* init = q->seq[0].as<ForNode>();
  const auto* update = q->seq[1].as<ForNode>();
  ASSERT_TRUE(init && update) << f;
  EXPECT_EQ(init->var.name(), "i");
  EXPECT_EQ(update->var.name(), "k");
  EXPECT_TRUE(init->body.as<StoreNode>() && is_zero(init->body.as<StoreNode>()->value)) << f;
  check_row_sum(f, "k outermost");
}

TEST(LowerReduce, MatMulTiledVectorizedParallel) {
  MatMul g;
  Schedule s = create_schedule({g.C});
  auto [mo, no, mi, ni] = s[g.C].tile(g.C.axis(0), g.C.axis(1), 8, 8);
  auto [ko, ki] = s[g.C].split(g.k, 4);
  s[g.C].reorder({mo, ko, no, mi, ki, ni});
  s[g.C].vectorize(ni);
  s[g.C].parallel(mo);
  LoweredFunc f = lower(s, {g.A, g.B, g.C}, "matmul");
  EXPECT_GT(count_exprs(f.body, [](const Expr& e) { return e.kind() == ExprKind::Ramp; }), 0) << f;
  check_matmul(f, "tiled");
}

TEST(LowerReduce, EveryReducerWithACondition) {
  Var n("n");
  Tensor A = placeholder({n, n}, Float(32), "A");
  for (Reducer red : {Reducer::Sum, Reducer::Prod, Reducer::Min, Reducer::Max}) {
    IterVar k = reduce_axis({0, n}, "k");
    Tensor C = compute(
        {n}, [&](Expr i) { return reduce(red, A(i, k) * 0.5f + 1.0f, {k}, k <= i); }, "C");
    Schedule s = create_schedule({C});
    auto [ko, ki] = s[C].split(k, 3);
    LoweredFunc f = lower(s, {A, C}, "reduce");
    for (int64_t len : {1, 4, 7}) {
      NDArray a = input({len, len}, 4), c = output({len});
      run_backends(f, {a, c});
      auto av = a.to_vector<float>();
      std::vector<float> want;
      for (int64_t i = 0; i < len; ++i) {
        float acc = red == Reducer::Sum    ? 0.0f
                    : red == Reducer::Prod ? 1.0f
                    : red == Reducer::Min  ? std::numeric_limits<float>::infinity()
                                           : -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j <= i; ++j) {
          float x = av[static_cast<size_t>(i * len + j)] * 0.5f + 1.0f;
          acc = red == Reducer::Sum    ? acc + x
                : red == Reducer::Prod ? acc * x
                : red == Reducer::Min  ? std::min(acc, x)
                                       : std::max(acc, x);
        }
        want.push_back(acc);
      }
      expect_close(c.to_vector<float>(), want, 1e-5f, std::string(reducer_name(red)) + " n=" + std::to_string(len));
    }
  }
}

TEST(LowerReduce, RfactorWithFactorAxisZeroAndOne) {
  for (int factor_axis : {0, 1}) {
    for (bool nparts : {false, true}) {
      RowSum r;
      Schedule s = create_schedule({r.C});
      auto [ko, ki] = nparts ? s[r.C].split_nparts(r.k, 3) : s[r.C].split(r.k, 4);
      Tensor CF = s.rfactor(r.C, ki, factor_axis);
      EXPECT_EQ(CF.ndim(), 2);
      check_row_sum(lower(s, {r.A, r.C}, "rf"),
                    "rfactor axis " + std::to_string(factor_axis) + (nparts ? " nparts" : " factor"));
    }
  }
}

TEST(LowerReduce, RfactorOfTheOuterPartWithAConditionOnTheOutput) {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  IterVar k = reduce_axis({0, n}, "k");
  Tensor B = compute(
      {2}, [&](Expr i) { return sum(A(k), {k}, i > 0); }, "B");
  Schedule s = create_schedule({B});
  auto [kf, ki] = s[B].split_nparts(k, 4);
  Tensor BF = s.rfactor(B, kf);
  s[BF].parallel(BF.axis(0));
  LoweredFunc f = lower(s, {A, B}, "rf_where");
  for (int64_t len : {1, 5, 12}) {
    NDArray a = input({len}, 5), b = output({2});
    run_backends(f, {a, b});
    auto av = a.to_vector<float>();
    float total = 0;
    for (float x : av) total += x;
    expect_close(b.to_vector<float>(), {0.0f, total}, 1e-5f, "n=" + std::to_string(len));
  }
}

TEST(LowerReduce, CacheWriteLocalComputedAtTheOutput) {
  MatMul g;
  Schedule s = create_schedule({g.C});
  Tensor CL = s.cache_write(g.C, "local");
  auto [io, ii] = s[g.C].split(g.C.axis(0), 4);
  s[CL].compute_at(s[g.C], io);
  LoweredFunc f = lower(s, {g.A, g.B, g.C}, "matmul_cw");
  EXPECT_EQ(count_stmts(f.body,
                        [](const Stmt& x) {
                          const auto* a = x.as<AllocateNode>();
                          return a && a->buffer.scope() == MemoryScope::Local;
                        }),
            2)
      << f;  // main part and tail of the partitioned outer loop
  check_matmul(f, "cache_write");
}

TEST(LowerReduce, ProducerComputedAtAReductionLoop) {
  MatMul g;
  Schedule s = create_schedule({g.C});
  Tensor AL = s.cache_read(g.A, "global", {g.C});
  auto [ko, ki] = s[g.C].split(g.k, 4);
  s[g.C].reorder({g.C.axis(0), ko, g.C.axis(1), ki});
  s[AL].compute_at(s[g.C], ko);
  LoweredFunc f = lower(s, {g.A, g.B, g.C}, "matmul_at_k");
  check_matmul(f, "cache_read at k.outer");
}

TEST(LowerReduce, GemmWithSharedAndLocalCachesOnGpuThreads) {
  const int n = 64;
  Tensor A = placeholder({n, n}, Float(32), "A");
  Tensor B = placeholder({n, n}, Float(32), "B");
  IterVar k = reduce_axis({0, n}, "k");
  Tensor C = compute(
      {n, n}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  Schedule s = create_schedule({C});
  const int block = 16, threads = 4;
  IterVar block_x = thread_axis("blockIdx.x"), thread_x = thread_axis("threadIdx.x");
  IterVar block_y = thread_axis("blockIdx.y"), thread_y = thread_axis("threadIdx.y");
  Tensor CC = s.cache_write(C, "local");
  Tensor AA = s.cache_read(A, "shared", {CC});
  Tensor BB = s.cache_read(B, "shared", {CC});
  auto [by, yi] = s[C].split(C.axis(0), block);
  auto [bx, xi] = s[C].split(C.axis(1), block);
  s[C].reorder({by, bx, yi, xi});
  s[C].bind(by, block_y);
  s[C].bind(bx, block_x);
  auto [ty, yi2] = s[C].split_nparts(yi, threads);
  auto [tx, xi2] = s[C].split_nparts(xi, threads);
  s[C].reorder({ty, tx, yi2, xi2});
  s[C].bind(ty, thread_y);
  s[C].bind(tx, thread_x);
  auto [ko, ki] = s[CC].split(k, 8);
  s[CC].reorder({ko, ki, CC.axis(0), CC.axis(1)});
  s[CC].compute_at(s[C], tx);
  s[AA].compute_at(s[CC], ko);
  s[BB].compute_at(s[CC], ko);
  for (const Tensor& T : {AA, BB}) {
    auto [t_y, rest_y] = s[T].split_nparts(T.axis(0), threads);
    auto [t_x, rest_x] = s[T].split_nparts(T.axis(1), threads);
    s[T].reorder({t_y, t_x, rest_y, rest_x});
    s[T].bind(t_y, thread_y);
    s[T].bind(t_x, thread_x);
  }
  LoweredFunc f = lower(s, {A, B, C}, "gemm");
  std::vector<std::string> scopes;
  count_stmts(f.body, [&](const Stmt& x) {
    if (const auto* a = x.as<AllocateNode>())
      scopes.push_back(a->buffer.name() + ":" + scope_name(a->buffer.scope()) + ":" + to_string(a->buffer.shape()[0]));
    return false;
  });
  EXPECT_EQ(scopes, (std::vector<std::string>{"A.shared:shared:128", "B.shared:shared:128", "C.local:local:16"})) << f;
  // A barrier before the tiles are overwritten and one before they are read.
  EXPECT_EQ(count_kind(f.body, StmtKind::Barrier), 2) << f;
  check_matmul(f, "gemm", {{n, n, n}});
}

// A reduction whose extent depends on a data axis (a triangular sum: row i adds its first
// i + 1 elements) with the rows moved inside the reduction: the loop runs to the largest
// extent over the rows inside it (a block of 4 rows: up to the block's last row's), each
// row guarded to its own.
TEST(LowerReduce, ExtentFromAnInnerDataLoopRunsToItsLargestWithAGuard) {
  const int n = 10;
  Tensor A = placeholder({n, n}, Float(32), "A");
  Tensor C = compute(
      {n},
      [&](Expr i) {
        IterVar k = reduce_axis({0, i + 1}, "k");
        return sum(A(i, k), {k});
      },
      "C");
  Schedule s = create_schedule({C});
  auto [io, ii] = s[C].split(C.axis(0), 4);
  const IterVar k = C.op()->reduce_axis[0];
  s[C].reorder({io, k, ii});
  LoweredFunc f = lower(s, {A, C}, "triangle");
  const std::string ir = to_string(f);
  EXPECT_NE(ir.find("for (k, 0, "), std::string::npos) << ir;
  EXPECT_NE(ir.find("(k < ("), std::string::npos) << ir;  // each row's own extent
  NDArray a = input({n, n}, 3), c = output({n});
  run_backends(f, {a, c});
  const std::vector<float> av = a.to_vector<float>(), got = c.to_vector<float>();
  for (int i = 0; i < n; ++i) {
    float want = 0;
    for (int k2 = 0; k2 <= i; ++k2) want += av[size_t(i * n + k2)];
    EXPECT_NEAR(got[size_t(i)], want, 1e-5f) << i;
  }
}

TEST(LowerReduce, ExtentFromAnInnerLoopThatCannotBeBoundedIsRefused) {
  const int n = 6;
  Tensor A = placeholder({n, n}, Float(32), "A");
  Tensor C = compute(
      {n},
      [&](Expr i) {
        IterVar k = reduce_axis({0, cast(Int(32), sin(cast(Float(32), i)) * 3.0f) + 3}, "k");
        return sum(A(i, k), {k});
      },
      "C");
  Schedule s = create_schedule({C});
  s[C].reorder({C.op()->reduce_axis[0], C.axis(0)});
  expect_error(
      [&] {
        lower(s, {A, C}, "f");
      },
      {"lower: stage 'C' loops over axis 'k' with extent",
       "which depends on loops inside it whose largest "
       "value te cannot bound; reorder them outside 'k'"});
}
