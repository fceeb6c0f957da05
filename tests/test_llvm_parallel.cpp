// Parallel loops on te's thread pool: the C runtime itself (chunks cover the range once,
// nested calls run serially, errors reach the caller), and generated parallel code with
// vectors, allocations, reductions, nested parallel loops and failing asserts.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "te/runtime/c_runtime_api.h"
#include "te/te.h"
#include "test_llvm_util.h"

using namespace te;
using namespace te::llvm_test;

namespace {

struct Coverage {
  std::vector<std::atomic<int>> hits;
  std::mutex mutex;
  std::set<std::thread::id> threads;
  explicit Coverage(int64_t n) : hits(static_cast<size_t>(n)) {}
};

int32_t count_hits(int64_t begin, int64_t end, void* closure) {
  auto* c = static_cast<Coverage*>(closure);
  for (int64_t k = begin; k < end; ++k) c->hits[static_cast<size_t>(k)]++;
  std::lock_guard<std::mutex> lock(c->mutex);
  c->threads.insert(std::this_thread::get_id());
  return 0;
}

TEST(LlvmParallel, RuntimeCoversTheRangeExactlyOnce) {
  EXPECT_GE(te_num_threads(), 1);
  for (int64_t n : {0, 1, 2, 3, 17, 1000}) {
    Coverage c(n);
    EXPECT_EQ(te_parallel_for(n, count_hits, &c), 0);
    for (int64_t k = 0; k < n; ++k) EXPECT_EQ(c.hits[static_cast<size_t>(k)].load(), 1) << k;
  }
  EXPECT_EQ(te_parallel_for(-5, count_hits, nullptr), 0);  // nothing to do, body not called
}

int32_t nested_body(int64_t begin, int64_t end, void* closure) {
  auto* c = static_cast<Coverage*>(closure);
  // A parallel loop inside a chunk runs on this thread alone.
  for (int64_t k = begin; k < end; ++k) {
    Coverage inner(4);
    if (te_parallel_for(4, count_hits, &inner) != 0) return 1;
    if (inner.threads.size() != 1 || *inner.threads.begin() != std::this_thread::get_id()) return 2;
    c->hits[static_cast<size_t>(k)]++;
  }
  return 0;
}

TEST(LlvmParallel, RuntimeRunsNestedLoopsSerially) {
  Coverage c(64);
  EXPECT_EQ(te_parallel_for(64, nested_body, &c), 0);
  for (auto& h : c.hits) EXPECT_EQ(h.load(), 1);
}

int32_t fail_at_13(int64_t begin, int64_t end, void*) {
  for (int64_t k = begin; k < end; ++k) {
    if (k == 13) {
      te_set_last_error("chunk saw 13");
      return 7;
    }
  }
  return 0;
}

TEST(LlvmParallel, RuntimeMovesTheErrorToTheCaller) {
  te_set_last_error("");
  EXPECT_EQ(te_parallel_for(100, fail_at_13, nullptr), 7);
  EXPECT_STREQ(te_get_last_error(), "chunk saw 13");
}

TEST(LlvmParallel, RuntimeServesSeveralCallersAtOnce) {
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    callers.emplace_back([&] {
      for (int r = 0; r < 50; ++r) {
        Coverage c(97);
        if (te_parallel_for(97, count_hits, &c) != 0) failures++;
        for (auto& h : c.hits)
          if (h.load() != 1) failures++;
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0);
}

// Records, per iteration, the thread that ran it; the iterations of the shares after the
// caller's wait (up to 10 s) until iteration 0 has run, and the caller's are slow, so a
// worker starts on its own share while the caller is still on iteration 0's.
struct ShareRecord {
  int64_t share_size = 0;
  std::vector<std::thread::id> ran_on;
  std::mutex mutex;
  std::vector<std::pair<std::thread::id, int64_t>> first_of_thread;
  std::atomic<bool> zero_done{false};
};

int32_t record_share(int64_t begin, int64_t end, void* closure) {
  auto* r = static_cast<ShareRecord*>(closure);
  {
    std::lock_guard<std::mutex> lock(r->mutex);
    bool seen = false;
    for (const auto& [id, first] : r->first_of_thread) seen = seen || id == std::this_thread::get_id();
    if (!seen) r->first_of_thread.emplace_back(std::this_thread::get_id(), begin);
  }
  for (int64_t k = begin; k < end; ++k) {
    if (k < r->share_size) {
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    } else {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!r->zero_done.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    }
    r->ran_on[static_cast<size_t>(k)] = std::this_thread::get_id();
    if (k == 0) r->zero_done.store(true);
  }
  return 0;
}

TEST(LlvmParallel, EachThreadStartsOnItsOwnShare) {
  // The chunks are dealt out in contiguous shares, the caller's first (OpenMP's static
  // schedule: consecutive parallel loops give a thread the same part of their items, so
  // it reads back from its own cache what it wrote), and a thread that is done takes
  // from the others' shares. A worker's first chunk is therefore the start of a share,
  // never the chunk after the caller's.
  const int64_t threads = te_num_threads();
  if (threads < 2) GTEST_SKIP() << "te's pool has one thread here";
  const int64_t n = threads * 16 * 2;  // 16 chunks of 2 iterations per thread
  ShareRecord r;
  r.share_size = n / threads;
  r.ran_on.resize(static_cast<size_t>(n));
  ASSERT_EQ(te_parallel_for(n, record_share, &r), 0);
  EXPECT_EQ(r.ran_on[0], std::this_thread::get_id());
  for (const auto& [id, first] : r.first_of_thread) {
    if (id == std::this_thread::get_id()) continue;
    EXPECT_EQ(first % r.share_size, 0) << "a worker began at iteration " << first;
  }
  for (const std::thread::id& id : r.ran_on) EXPECT_NE(id, std::thread::id());
}

TEST(LlvmParallel, AForkedChildRunsOnItsOwnPool) {
  // The parent's pool is running; a forked child (an auto-tuner's worker) has none of its
  // threads, yet its parallel loops must run on as many threads, not serially or hung.
  if (te_num_threads() < 2) GTEST_SKIP() << "te's pool has one thread here";
  std::atomic<int> warm{0};
  te_parallel_for(
      64,
      [](int64_t b, int64_t e, void* c) {
        *static_cast<std::atomic<int>*>(c) += int(e - b);
        return 0;
      },
      &warm);
  ASSERT_EQ(warm.load(), 64);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    static std::mutex m;
    static std::set<std::thread::id> ids;
    te_parallel_for(
        64,
        [](int64_t, int64_t, void*) {
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
          std::lock_guard<std::mutex> lock(m);
          ids.insert(std::this_thread::get_id());
          return 0;
        },
        nullptr);
    _exit(int(ids.size()));
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_GE(WEXITSTATUS(status), 2) << "the child ran its parallel loop on one thread";
}

TEST(LlvmParallel, RuntimeAllocatesAlignedZeroedMemory) {
  auto* p = static_cast<uint8_t*>(te_alloc(1000));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  for (int k = 0; k < 1000; ++k) ASSERT_EQ(p[k], 0);
  te_free(p);
  EXPECT_EQ(te_alloc(UINT64_MAX - 3), nullptr);
  EXPECT_NE(std::string(te_get_last_error()).find("cannot allocate"), std::string::npos);
  // Without the zero-fill (for buffers stored before they are loaded): aligned alike.
  void* q = te_alloc_uninitialized(1000);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % 64, 0u);
  te_free(q);
  te_set_last_error("");
  EXPECT_EQ(te_alloc_uninitialized(UINT64_MAX - 3), nullptr);
  EXPECT_NE(std::string(te_get_last_error()).find("cannot allocate"), std::string::npos);
}

// C[i] = A[i] * 2 + B[i], split by 4: parallel outer loop, vectorized inner (TVM's
// test_llvm_add_pipeline shape), for n = 3, 4, 128 and more.
LoweredFunc parallel_vector_pipeline() {
  Var n("n"), xo("xo");
  Buffer A("A", Float(32), {n}), B("B", Float(32), {n}), C("C", Float(32), {n});
  Expr idx = ramp(xo * 4, 1, 4);
  Expr live = idx < broadcast(n, 4);
  Stmt body = parallel(xo, 0, (n + 3) / 4,
                       store(C, load(A, {idx}, live) * broadcast(2.0f, 4) + load(B, {idx}, live), {idx}, live));
  return make_func("pipeline", {buffer_param(A), buffer_param(B), buffer_param(C)}, body);
}

TEST(LlvmParallel, SplitParallelVectorizedPipeline) {
  Module m = build(parallel_vector_pipeline());
  for (int64_t n : {3, 4, 128, 1001}) {
    SCOPED_TRACE(n);
    NDArray a = random_array<float>({n}, 1), b = random_array<float>({n}, 2);
    NDArray c = NDArray::empty({n}, Float(32));
    m("pipeline")(a, b, c);
    auto av = a.to_vector<float>(), bv = b.to_vector<float>(), cv = c.to_vector<float>();
    for (int64_t k = 0; k < n; ++k) ASSERT_FLOAT_EQ(cv[k], av[k] * 2 + bv[k]);
    expect_matches_interpreter(parallel_vector_pipeline(), {a, b, c}, 1e-6, BuildOptions());
  }
  EXPECT_TRUE(contains(llvm_ir(parallel_vector_pipeline(), false), "te_parallel_for"));
}

TEST(LlvmParallel, ReductionUnderParallelOuterLoopWithScratch) {
  // Row sums through a per-row scratch buffer (stack when constant, heap otherwise),
  // rows in parallel.
  Var n("n"), m("m"), i("i"), k("k");
  Buffer A("A", Float(64), {n, m}), C("C", Float(64), {n});
  for (bool on_stack : {true, false}) {
    SCOPED_TRACE(on_stack ? "stack" : "heap");
    Buffer acc("acc", Float(64), {on_stack ? Expr(1) : m}, MemoryScope::Local);
    Stmt row = allocate(
        acc, seq({store(acc, 0.0, {0}), serial(k, 0, m, store(acc, load(acc, {0}) + load(A, {i * m + k}), {0})),
                  store(C, load(acc, {0}), {i})}));
    LoweredFunc f = make_func("rowsum", {buffer_param(A), buffer_param(C)}, parallel(i, 0, n, row));
    expect_matches_interpreter(f, {random_array<double>({37, 53}, 3), NDArray::empty({37}, Float(64))});
  }
}

TEST(LlvmParallel, NestedParallelLoopsRunTheInnerSerially) {
  Var h("h"), w("w"), y("y"), x("x");
  Buffer A("A", Int(32), {h, w}), B("B", Int(32), {h, w});
  LoweredFunc f =
      make_func("nested", {buffer_param(A), buffer_param(B)},
                parallel(y, 0, h, parallel(x, 0, w, store(B, load(A, {y * w + x}) * (y + x), {y * w + x}))));
  expect_matches_interpreter(f, {random_array<int32_t>({19, 23}, 4), NDArray::empty({19, 23}, Int(32))});
  std::string ir = llvm_ir(f, false);
  size_t first = ir.find("call i32 @te_parallel_for");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(ir.find("call i32 @te_parallel_for", first + 1), std::string::npos) << ir;
}

TEST(LlvmParallel, FailedAssertInsideAParallelBody) {
  Var n("n"), i("i");
  Buffer A("A", Int(32), {n}), tmp("tmp", Int(32), {n}, MemoryScope::Local);
  Stmt body =
      parallel(i, 0, n, allocate(tmp, assert_stmt(load(A, {i}) != 13, "found 13", store(tmp, load(A, {i}), {0}))));
  Function fn = build(make_func("find", {buffer_param(A)}, body))("find");
  std::vector<int32_t> v(500);
  for (int k = 0; k < 500; ++k) v[k] = k;
  expect_error([&] { fn(NDArray::from_vector(v, {500})); }, {"find: found 13"});
  v[13] = 0;
  fn(NDArray::from_vector(v, {500}));
}

TEST(LlvmParallel, CapturesLetsScalarsAndOuterLoopVariables) {
  // for t: let base = t * n; parallel for i: C[base + i] = A[base + i] * s + t
  Var n("n"), t("t"), i("i"), base("base"), s("s", Float(32));
  Buffer A("A", Float(32), {4, n}), C("C", Float(32), {4, n});
  Stmt body = serial(
      t, 0, 4,
      let_stmt(base, t * n, parallel(i, 1, n - 1, store(C, load(A, {base + i}) * s + cast(Float(32), t), {base + i}))));
  LoweredFunc f = make_func("capture", {buffer_param(A), buffer_param(C), scalar_param(s)}, body);
  expect_matches_interpreter(f, {random_array<float>({4, 50}, 5), NDArray::empty({4, 50}, Float(32)), 1.5f});
}

}  // namespace
