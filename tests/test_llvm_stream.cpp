// Streaming (non-temporal) stores (BuildOptions::streaming_store_min_bytes): used for
// vector stores into outputs the function never reads, at least that large, at indices
// that are multiples of the vector, when the output's start is aligned at run time; the
// results never change, whichever store runs.
#include <gtest/gtest.h>

#include <te/te.h>
#include <te/dlpack.h>

#include <string>
#include <vector>

#include "test_lower_util.h"
#include "test_util.h"

using namespace te;
using namespace lower_test;

namespace {

// x86 (the only target with streaming stores): its features name SSE2.
bool x86_host() { return host_cpu_features().find("+sse2") != std::string::npos; }

BuildOptions streaming(int64_t min_bytes) {
  BuildOptions o;
  o.streaming_store_min_bytes = min_bytes;
  return o;
}

bool streams(const LoweredFunc& f, const BuildOptions& o) { return assembly(f, o).find("movnt") != std::string::npos; }

// C = A + B in chunks of 4096 over the thread pool, 16-lane vectors.
LoweredFunc vadd(Expr n, int lanes = 16) {
  Tensor A = placeholder({n}, Float(32), "A"), B = placeholder({n}, Float(32), "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return A(i) + B(i); }, "C");
  Schedule s = create_schedule({C});
  auto [chunk, rest] = s[C].split(C.axis(0), 4096);
  auto [ro, ri] = s[C].split(rest, lanes);
  (void)ro;
  s[C].parallel(chunk);
  s[C].vectorize(ri);
  return lower(s, {A, B, C}, "vadd");
}

// Runs f on n floats with C starting `offset` bytes into its allocation; compares with C++.
void check_sum(const LoweredFunc& f, const BuildOptions& o, int64_t n, uint64_t offset) {
  NDArray a = input({n}, 1), b = input({n}, 2);
  NDArray storage = NDArray::empty({n + 16}, Float(32));
  int64_t shape[1] = {n};
  dlpack::DLTensor t{storage.data(), {dlpack::kDLCPU, 0}, 1, {dlpack::kDLFloat, 32, 1}, shape, nullptr, offset};
  NDArray c = NDArray::borrow_dlpack(t);
  build(f, o)(f.name)(a, b, c);
  auto av = a.to_vector<float>(), bv = b.to_vector<float>(), cv = c.to_vector<float>();
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(cv[size_t(i)], av[size_t(i)] + bv[size_t(i)]) << "element " << i << " of " << n << ", offset " << offset;
}

}  // namespace

TEST(LlvmStream, WriteOnlyOutputsStreamAndGiveTheSameResults) {
  LoweredFunc f = vadd(1 << 16);
  if (x86_host()) {
    EXPECT_TRUE(streams(f, streaming(1)));
    EXPECT_FALSE(streams(f, streaming(-1)));  // never
    EXPECT_FALSE(streams(f, {}));             // 256 KB: below any last-level cache
  }
  for (int64_t min_bytes : {int64_t(1), int64_t(-1)}) {
    for (uint64_t offset : {0u, 4u, 32u}) check_sum(f, streaming(min_bytes), 1 << 16, offset);  // 4, 32: unaligned
  }
}

TEST(LlvmStream, SymbolicSizesAreComparedAtRunTime) {
  Var n("n");
  LoweredFunc f = vadd(n);
  const BuildOptions o = streaming(1 << 20);
  if (x86_host()) {
    EXPECT_TRUE(streams(f, o));
  }
  for (int64_t len : {int64_t(1000), int64_t(1) << 19})  // 4 KB (plain) and 2 MB (streamed)
    check_sum(f, o, len, 0);
}

TEST(LlvmStream, OnlyWhereEveryStoreOfTheLoopCanStream) {
  if (!x86_host()) GTEST_SKIP() << "streaming stores are x86 only";
  const BuildOptions o = streaming(1);
  // An output the function also reads (a reduction accumulates into it).
  Tensor A = placeholder({64, 256}, Float(32), "A");
  IterVar k = reduce_axis({0, 64}, "k");
  Tensor S = compute(
      {256}, [&](Expr j) { return sum(A(k, j), {k}); }, "S");
  Schedule s = create_schedule({S});
  auto [jo, ji] = s[S].split(S.axis(0), 16);
  s[S].reorder({jo, k, ji});
  s[S].vectorize(ji);
  EXPECT_FALSE(streams(lower(s, {A, S}, "colsum"), o));
  // Indices that are not multiples of the vector: rows of 100 floats in 16-lane vectors,
  // the last one shifted inwards.
  Tensor X = placeholder({8, 100}, Float(32), "X");
  Tensor Y = compute(
      {8, 100}, [&](Expr i, Expr j) { return X(i, j) * 2.0f; }, "Y");
  Schedule t = create_schedule({Y});
  auto [yo, yi] = t[Y].split(Y.axis(1), 16, TailStrategy::ShiftInwards);
  (void)yo;
  t[Y].vectorize(yi);
  EXPECT_FALSE(streams(lower(t, {X, Y}, "rows"), o));
  // A scalar loop.
  EXPECT_FALSE(streams(lower(create_schedule({Y}), {X, Y}, "scalar"), o));
}
