// double_buffer and pipeline(n): the loop nest they make (n buffers, the attach loop
// unrolled by n, one barrier per iteration), results for trip counts that are and are not
// multiples of n, fewer than n, and symbolic, through interpret() and the LLVM JIT against
// plain C++, and every misuse as a te::Error. The CUDA emulation runs a double-buffered
// GEMM (tests/test_cuda_emulation.cpp) and pipelined TMA GEMMs (tests/test_wgmma.cpp).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <te/te.h>

#include "test_lower_util.h"
#include "test_util.h"

using namespace te;
using namespace lower_test;

namespace {

struct Matmul {
  Tensor A, B, C;
  IterVar k;
  Matmul(Expr M, Expr N, Expr K) {
    A = placeholder({M, K}, Float(32), "A");
    B = placeholder({K, N}, Float(32), "B");
    k = reduce_axis({0, K}, "k");
    C = compute(
        {M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  }
};

// CPU: rows of A copied into a local buffer 4 elements of k at a time.
Schedule cpu_schedule(const Matmul& g, int buffers) {
  Schedule s = create_schedule({g.C});
  Tensor AL = s.cache_read(g.A, "local", {g.C});
  auto [ko, ki] = s[g.C].split(g.k, 4);
  s[g.C].reorder({g.C.axis(0), ko, g.C.axis(1), ki});
  s[AL].compute_at(s[g.C], ko);
  if (buffers == 2) s[AL].double_buffer();
  if (buffers > 2) s[AL].pipeline(buffers);
  return s;
}

// GPU: 16 x 16 tiles of C per block, 4 x 4 threads of 4 x 4 elements, A and B through
// shared tiles 8 wide in k.
// buffers_b: B's count where it differs from A's.
Schedule gpu_schedule(const Matmul& g, int buffers, int buffers_b = 0) {
  Schedule s = create_schedule({g.C});
  Tensor AS = s.cache_read(g.A, "shared", {g.C}), BS = s.cache_read(g.B, "shared", {g.C});
  Tensor CL = s.cache_write(g.C, "local");
  auto [by, bx, yi, xi] = s[g.C].tile(g.C.axis(0), g.C.axis(1), 16, 16);
  auto [ty, yy] = s[g.C].split(yi, 4);
  auto [tx, xx] = s[g.C].split(xi, 4);
  s[g.C].reorder({by, bx, ty, tx, yy, xx});
  s[g.C].bind(by, thread_axis("blockIdx.y"));
  s[g.C].bind(bx, thread_axis("blockIdx.x"));
  s[g.C].bind(ty, thread_axis("threadIdx.y"));
  s[g.C].bind(tx, thread_axis("threadIdx.x"));
  s[CL].compute_at(s[g.C], tx);
  auto [ko, ki] = s[CL].split(s[CL].op()->reduce_axis[0], 8);
  s[CL].reorder({ko, ki, CL.axis(0), CL.axis(1)});
  for (const Tensor& S : {AS, BS}) {
    const int n = S.same_as(BS) && buffers_b > 0 ? buffers_b : buffers;
    s[S].compute_at(s[CL], ko);
    auto [fo, fi] = s[S].split(s[S].fuse(S.axis(0), S.axis(1)), 16);
    auto [fty, ftx] = s[S].split(fi, 4);
    s[S].bind(fty, thread_axis("threadIdx.y"));
    s[S].bind(ftx, thread_axis("threadIdx.x"));
    if (n == 2) s[S].double_buffer();
    if (n > 2) s[S].pipeline(n);
    (void)fo;
  }
  return s;
}

const ForNode* find_loop(const Stmt& body, const std::string& name) {
  const ForNode* found = nullptr;
  count_stmts(body, [&](const Stmt& s) {
    const auto* f = s.as<ForNode>();
    if (f && f->var.name() == name && !found) found = f;
    return false;
  });
  return found;
}

int barriers_in(const Stmt& s) { return count_kind(s, StmtKind::Barrier); }

void run_and_check(const LoweredFunc& f, int M, int N, int K, const std::string& what) {
  NDArray a = input({M, K}, 1), b = input({K, N}, 2), c = output({M, N});
  std::vector<Argument> args{a, b, c};
  bool symbolic = false;
  for (const Param& p : f.params) symbolic = symbolic || !p.is_buffer();
  if (symbolic) args.push_back(Argument(static_cast<int64_t>(K)));
  run_backends(f, args);
  expect_close(c.to_vector<float>(), matmul_reference(a.to_vector<float>(), b.to_vector<float>(), M, N, K), 1e-5f,
               what);
}

}  // namespace

TEST(DoubleBuffer, TwoBuffersAndOneBarrierPerIteration) {
  Matmul g(32, 32, 64);  // 8 iterations of k.outer
  LoweredFunc single = lower(gpu_schedule(g, 1), {g.A, g.B, g.C}, "single");
  LoweredFunc doubled = lower(gpu_schedule(g, 2), {g.A, g.B, g.C}, "doubled");
  const ForNode* k1 = find_loop(single.body, "k.outer");
  const ForNode* k2 = find_loop(doubled.body, "k.outer.outer");
  ASSERT_NE(k1, nullptr);
  ASSERT_NE(k2, nullptr) << doubled.body;
  EXPECT_EQ(*as_const_int(k2->extent), 4);  // two iterations of k.outer per pass
  EXPECT_EQ(barriers_in(k1->body), 2);      // before the fetch and before the reads
  EXPECT_EQ(barriers_in(k2->body), 2);      // one per iteration of k.outer
  const std::string ir = to_string(doubled.body);
  for (const char* alloc :
       {"allocate A.shared[", "allocate A.shared.db[", "allocate B.shared[", "allocate B.shared.db["})
    EXPECT_NE(ir.find(alloc), std::string::npos) << alloc << "\n" << ir;
  // The first tiles are fetched before the loop; 8 is even, so the loop's first half
  // fetches unguarded and its second half guards the fetch past the end.
  EXPECT_EQ(count_kind(doubled.body, StmtKind::IfThenElse), 1) << ir;
}

TEST(DoubleBuffer, GpuScheduleMatchesCppForEvenAndOddTripCounts) {
  for (int K : {64, 40, 8, 20}) {  // k.outer: 8, 5, 1 iterations, and 3 with a partial tile
    Matmul g(20, 24, K);
    LoweredFunc f = lower(gpu_schedule(g, 2), {g.A, g.B, g.C}, "gemm");
    run_and_check(f, 20, 24, K, "gpu K=" + std::to_string(K));
  }
}

TEST(DoubleBuffer, CpuScheduleMatchesCppForSymbolicTripCounts) {
  Var K("K");
  Matmul g(5, 7, K);
  LoweredFunc f = lower(cpu_schedule(g, 2), {g.A, g.B, g.C}, "gemm");
  EXPECT_NE(find_loop(f.body, "k.outer.outer"), nullptr) << f.body;
  for (int k : {0, 1, 3, 4, 5, 8, 12, 13}) run_and_check(f, 5, 7, k, "cpu K=" + std::to_string(k));
}

TEST(DoubleBuffer, ResultsEqualTheSingleBufferedSchedule) {
  Matmul g(6, 9, 18);
  LoweredFunc single = lower(cpu_schedule(g, 1), {g.A, g.B, g.C}, "single");
  LoweredFunc doubled = lower(cpu_schedule(g, 2), {g.A, g.B, g.C}, "doubled");
  NDArray a = input({6, 18}, 3), b = input({18, 9}, 4), c1 = output({6, 9}), c2 = output({6, 9});
  interpret(single, {a, b, c1});
  interpret(doubled, {a, b, c2});
  expect_close(c2.to_vector<float>(), c1.to_vector<float>(), 0.0f, "same order of additions");
}

TEST(DoubleBuffer, MisusesAreErrors) {
  Matmul g(8, 8, 16);
  {
    Schedule s = create_schedule({g.C});
    expect_error([&] { s[g.A].double_buffer(); }, {"double_buffer: stage 'A' is a placeholder", "cache_read"});
    expect_error([&] { s[g.C].double_buffer(); }, {"double_buffer: stage 'C' is an output", "cache_write"});
  }
  {  // computed at the root
    Schedule s = create_schedule({g.C});
    Tensor AL = s.cache_read(g.A, "local", {g.C});
    s[AL].double_buffer();
    expect_error(
        [&] {
          lower(s, {g.A, g.B, g.C}, "f");
        },
        {"stage 'A.local' is double-buffered but computed at the root", "compute_at"});
  }
  {  // inlined
    Schedule s = create_schedule({g.C});
    Tensor AL = s.cache_read(g.A, "local", {g.C});
    s[AL].double_buffer();
    s[AL].compute_inline();
    expect_error(
        [&] {
          lower(s, {g.A, g.B, g.C}, "f");
        },
        {"stage 'A.local' is inlined (compute_inline), so it has no buffer, but double_buffer doubles one"});
  }
  for (bool parallel : {true, false}) {  // at a loop whose iterations do not run one after another
    Schedule s = create_schedule({g.C});
    Tensor AL = s.cache_read(g.A, "local", {g.C});
    if (parallel)
      s[g.C].parallel(g.C.axis(0));
    else
      s[g.C].bind(g.C.axis(0), thread_axis("threadIdx.x"));
    s[AL].compute_at(s[g.C], g.C.axis(0));
    s[AL].double_buffer();
    expect_error(
        [&] {
          lower(s, {g.A, g.B, g.C}, "f");
        },
        {"stage 'A.local' is double-buffered at loop 'i' of stage 'C', which is ",
         parallel ? "which is parallel" : "which is bound to threadIdx.x", "compute the stage at a serial loop"});
  }
  {  // its source is computed in the same loop: the next tile cannot be fetched ahead
    Tensor A2 = compute(
        {8, 16}, [&](Expr i, Expr j) { return g.A(i, j) * 2.0f; }, "A2");
    IterVar k = reduce_axis({0, 16}, "k");
    Tensor C = compute(
        {8, 8}, [&](Expr i, Expr j) { return sum(A2(i, k) * g.B(k, j), {k}); }, "C");
    Schedule s = create_schedule({C});
    Tensor AL = s.cache_read(A2, "local", {C});
    auto [ko, ki] = s[C].split(k, 4);
    s[C].reorder({C.axis(0), ko, C.axis(1), ki});
    s[A2].compute_at(s[C], ko);
    s[AL].compute_at(s[C], ko);
    s[AL].double_buffer();
    expect_error(
        [&] {
          lower(s, {g.A, g.B, C}, "f");
        },
        {"stage 'A2.local' is double-buffered at loop 'k.outer'",
         "it reads 'A2', which the same loop "
         "computes",
         "compute 'A2' outside the loop"});
    (void)ki;
  }
}

TEST(Pipeline, NBuffersAndOneBarrierPerIteration) {
  Matmul g(32, 32, 96);  // 12 iterations of k.outer
  for (int n : {3, 4}) {
    LoweredFunc f = lower(gpu_schedule(g, n), {g.A, g.B, g.C}, "pipelined");
    const ForNode* k = find_loop(f.body, "k.outer.outer");
    ASSERT_NE(k, nullptr) << f.body;
    EXPECT_EQ(*as_const_int(k->extent), 12 / n);  // n iterations of k.outer per pass
    EXPECT_EQ(barriers_in(k->body), n);           // one per iteration of k.outer
    const std::string ir = to_string(f.body);
    for (const char* alloc :
         {"allocate A.shared[", "allocate A.shared.db[", "allocate A.shared.db2[", "allocate B.shared.db2["})
      EXPECT_NE(ir.find(alloc), std::string::npos) << alloc << "\n" << ir;
    EXPECT_EQ(ir.find("allocate A.shared.db3[") != std::string::npos, n == 4) << ir;
    // 12 is a multiple of n: part 0 fetches unguarded, the other n - 1 parts guard the
    // fetch past the end.
    EXPECT_EQ(count_kind(f.body, StmtKind::IfThenElse), n - 1) << ir;
  }
}

TEST(Pipeline, ResultsMatchCppForEveryTripCount) {
  for (int n : {3, 4})
    for (int K : {96, 64, 40, 8, 16, 24, 20}) {  // k.outer: multiples of n, not, fewer than n, a partial tile
      Matmul g(20, 24, K);
      LoweredFunc f = lower(gpu_schedule(g, n), {g.A, g.B, g.C}, "gemm");
      run_and_check(f, 20, 24, K, fmt::format("gpu {} buffers K={}", n, K));
    }
  Var K("K");
  Matmul g(5, 7, K);
  LoweredFunc f = lower(cpu_schedule(g, 3), {g.A, g.B, g.C}, "gemm");
  for (int k : {0, 1, 3, 4, 5, 8, 9, 12, 13}) run_and_check(f, 5, 7, k, "cpu 3 buffers K=" + std::to_string(k));
}

TEST(Pipeline, MisusesAreErrors) {
  Matmul g(8, 8, 16);
  Schedule s = create_schedule({g.C});
  expect_error([&] { s[g.A].pipeline(3); }, {"pipeline: stage 'A' is a placeholder", "pipeline a copy of it"});
  expect_error([&] { s[g.C].pipeline(3); }, {"pipeline: stage 'C' is an output", "pipeline an intermediate stage"});
  Tensor AL = s.cache_read(g.A, "local", {g.C});
  for (int n : {1, 9, 0}) {
    const std::string message = fmt::format("pipeline: stage 'A.local': {} buffers; a pipeline has 2 to 8", n);
    expect_error([&] { s[AL].pipeline(n); }, {message.c_str()});
  }
  {  // inlined
    Schedule t = create_schedule({g.C});
    Tensor TL = t.cache_read(g.A, "local", {g.C});
    t[TL].pipeline(3);
    t[TL].compute_inline();
    expect_error(
        [&] {
          lower(t, {g.A, g.B, g.C}, "f");
        },
        {"stage 'A.local' is inlined (compute_inline), so it has no buffer, but pipeline multiplies one; "
         "remove the pipeline"});
  }
  {  // two stages at one loop with different depths
    Matmul big(32, 32, 64);
    Schedule t = gpu_schedule(big, 3, 2);
    expect_error(
        [&] {
          lower(t, {big.A, big.B, big.C}, "f");
        },
        {"lower: stages 'A.shared' (3 buffers) and 'B.shared' (2) are computed at loop 'k.outer', whose "
         "unrolling gives every stage there the same number of buffers"});
  }
}
