// GPU thread loops in lowering: a stage's thread axis inside an enclosing loop of the
// same tag, sibling thread loops of different extents, virtual threads, and the errors
// for shapes a block cannot hold.
#include <gtest/gtest.h>

#include <te/te.h>

#include "test_lower_util.h"
#include "test_util.h"

using namespace te;
using namespace lower_test;

namespace {

struct Square {
  Var n{"n"};
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = compute(
      {n}, [&](Expr i) { return A(i) * A(i) - 0.5f; }, "B");
};

void check_square(const LoweredFunc& f, const std::string& what) {
  for (int64_t len : {1, 31, 32, 33, 70}) {
    NDArray a = input({len}, 1), b = output({len});
    run_backends(f, {a, b});
    auto av = a.to_vector<float>();
    std::vector<float> want(av.size());
    for (size_t i = 0; i < av.size(); ++i) want[i] = av[i] * av[i] - 0.5f;
    expect_close(b.to_vector<float>(), want, 1e-6f, what + " n=" + std::to_string(len));
  }
}

// Thread loops with this tag, as "extent" strings, in order.
std::vector<std::string> thread_loops(const Stmt& s, const std::string& tag) {
  std::vector<std::string> out;
  count_stmts(s, [&](const Stmt& x) {
    const auto* f = x.as<ForNode>();
    if (f && f->thread_tag == tag) out.push_back(to_string(f->extent));
    return false;
  });
  return out;
}

// A 32-thread block whose shared copy of A is fetched by `fetch_threads` threads, either
// before the block's thread loop (at blockIdx) or inside it (at threadIdx).
Schedule fetch_schedule(const Square& q, int fetch_threads, bool inside) {
  Schedule s = create_schedule({q.B});
  Tensor AS = s.cache_read(q.A, "shared", {q.B});
  IterVar tx = thread_axis("threadIdx.x");
  auto [bo, bi] = s[q.B].split(q.B.axis(0), 32);
  s[q.B].bind(bo, thread_axis("blockIdx.x"));
  s[q.B].bind(bi, tx);
  s[AS].compute_at(s[q.B], inside ? bi : bo);
  auto [ao, ai] = s[AS].split_nparts(AS.axis(0), fetch_threads);
  s[AS].bind(ao, tx);
  return s;
}

}  // namespace

TEST(LowerThreads, SiblingThreadLoopsRunOverTheBlocksWidestExtent) {
  Square q;
  LoweredFunc f = lower(fetch_schedule(q, 16, false), {q.A, q.B}, "fetch16");
  // Both loops span the 32 threads; the fetch guards its 16.
  EXPECT_EQ(thread_loops(f.body, "threadIdx.x"), (std::vector<std::string>{"32", "32"})) << f;
  check_square(f, "16 of 32 threads fetch");
}

TEST(LowerThreads, AThreadAxisInsideALoopOfTheSameTagSharesIt) {
  Square q;
  LoweredFunc f = lower(fetch_schedule(q, 16, true), {q.A, q.B}, "fetch_inside");
  EXPECT_EQ(thread_loops(f.body, "threadIdx.x"), (std::vector<std::string>{"32"})) << f;
  check_square(f, "16 of 32 threads fetch inside the thread loop");

  LoweredFunc g = lower(fetch_schedule(q, 32, true), {q.A, q.B}, "fetch_all");
  check_square(g, "32 threads fetch inside the thread loop");

  // A 16-thread block that reads 32 elements cannot fetch them with 32 threads.
  Var n("n");
  Tensor A = placeholder({n + 16}, Float(32), "A");
  Tensor B = compute(
      {n}, [&](Expr i) { return A(i) + A(i + 16); }, "B");
  Schedule s = create_schedule({B});
  Tensor AS = s.cache_read(A, "shared", {B});
  IterVar tx = thread_axis("threadIdx.x");
  auto [bo, bi] = s[B].split(B.axis(0), 16);
  s[B].bind(bo, thread_axis("blockIdx.x"));
  s[B].bind(bi, tx);
  s[AS].compute_at(s[B], bi);
  auto [ao, ai] = s[AS].split_nparts(AS.axis(0), 32);
  s[AS].bind(ao, tx);
  expect_error(
      [&] {
        lower(s, {A, B}, "too_wide");
      },
      {"lower", "stage 'A.shared'", "threadIdx.x", "32 iterations", "stage 'B'", "only 16 threads"});
}

// vthread: the loop is gone; its iterations are interleaved copies inside the inner loop.
TEST(LowerThreads, VirtualThreadsInterleaveInsideTheInnerLoop) {
  Square q;
  Schedule s = create_schedule({q.B});
  auto [vo, vi] = s[q.B].split_nparts(q.B.axis(0), 2);
  s[q.B].bind(vo, thread_axis("vthread"));
  LoweredFunc f = lower(s, {q.A, q.B}, "vthread");
  EXPECT_EQ(count_stmts(f.body,
                        [](const Stmt& x) {
                          const auto* n = x.as<ForNode>();
                          return n && n->var.name() == "i.outer";
                        }),
            0)
      << f;
  // One loop (over i.inner) holding both vthreads' stores.
  const ForNode* inner = nullptr;
  count_stmts(f.body, [&](const Stmt& x) {
    if (x.as<ForNode>()) inner = x.as<ForNode>();
    return false;
  });
  ASSERT_NE(inner, nullptr) << f;
  EXPECT_EQ(inner->var.name(), "i.inner") << f;
  EXPECT_EQ(count_stmts(inner->body, [](const Stmt& x) { return x.as<StoreNode>() != nullptr; }), 2) << f;
  check_square(f, "vthread");
}

// A buffer computed inside a vthread loop gets one copy per vthread.
TEST(LowerThreads, VirtualThreadsGetTheirOwnCopyOfInnerBuffers) {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor T = compute(
      {n}, [&](Expr i) { return A(i) + 1.0f; }, "T");
  Tensor B = compute(
      {n}, [&](Expr i) { return T(i) * T(i); }, "B");
  Schedule s = create_schedule({B});
  auto [vo, rest] = s[B].split_nparts(B.axis(0), 3);
  auto [mid, in] = s[B].split(rest, 4);
  s[B].bind(vo, thread_axis("vthread"));
  s[T].compute_at(s[B], mid);
  s[T].set_scope("local");  // a global or shared T would be one buffer for all vthreads
  LoweredFunc f = lower(s, {A, B}, "vthread_buffers");
  int allocations = count_stmts(f.body, [](const Stmt& x) {
    const auto* a = x.as<AllocateNode>();
    return a && a->buffer.name() == "T" && is_const_int(a->buffer.shape()[0], 12);  // 3 vthreads x 4
  });
  EXPECT_EQ(allocations, 1) << f;
  for (int64_t len : {1, 5, 12, 13, 40}) {
    NDArray a = input({len}, 3), b = output({len});
    run_backends(f, {a, b});
    auto av = a.to_vector<float>();
    std::vector<float> want;
    for (float x : av) want.push_back((x + 1.0f) * (x + 1.0f));
    expect_close(b.to_vector<float>(), want, 1e-6f, "n=" + std::to_string(len));
  }
}

// As TVM's: a global (or shared) buffer computed inside vthreads holds the region of all
// of them (its bounds are relaxed over the vthread loops) and is computed once.
TEST(LowerThreads, VirtualThreadsShareGlobalAndSharedBuffers) {
  Tensor A = placeholder({24}, Float(32), "A");
  Tensor T = compute(
      {24}, [&](Expr i) { return A(i) + 1.0f; }, "T");
  Tensor B = compute(
      {24}, [&](Expr i) { return T(i) * T(i); }, "B");
  Schedule s = create_schedule({B});
  auto [vo, rest] = s[B].split_nparts(B.axis(0), 3);
  auto [mid, in] = s[B].split(rest, 4);
  s[B].bind(vo, thread_axis("vthread"));
  s[T].compute_at(s[B], mid);
  LoweredFunc f = lower(s, {A, B}, "vthread_shared_buffer");
  int stores = count_stmts(f.body, [](const Stmt& x) {
    const auto* st = x.as<StoreNode>();
    return st && st->buffer.name() == "T";
  });
  EXPECT_EQ(stores, 1) << f;  // not one copy per vthread
  NDArray a = input({24}, 3), b = output({24});
  run_backends(f, {a, b});
  std::vector<float> want;
  for (float x : a.to_vector<float>()) want.push_back((x + 1.0f) * (x + 1.0f));
  expect_close(b.to_vector<float>(), want, 1e-6f, "vthreads sharing T");
  (void)in;
}

TEST(LowerThreads, ASharedBufferSizedByAnInnerLoopIsAnError) {
  Var m("m"), l("l"), factor("s");
  Tensor X = placeholder({m, l}, Float(32), "X");
  Tensor A1 = compute(
      {m, l}, [&](Expr i, Expr j) { return X(i, j) * 2.0f; }, "A1");
  Tensor A2 = compute(
      {m, l}, [&](Expr i, Expr j) { return A1(i, j) + 3.0f; }, "A2");
  Schedule s = create_schedule({A2});
  IterVar fused = s[A2].fuse(A2.axis(0), A2.axis(1));
  auto [xo, xi] = s[A2].split(fused, factor);
  auto [t, xo2] = s[A2].split_nparts(xo, 4);
  s[A2].bind(t, thread_axis("threadIdx.x"));
  s[A1].set_scope("shared");
  s[A1].compute_at(s[A2], xo2);
  expect_error(
      [&] {
        lower(s, {X, A2}, "g");
      },
      {"lower", "shared buffer 'A1'", "outside loop 'i.j.fused.outer.inner'", "depends on that loop"});
}
