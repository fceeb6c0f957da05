// GPU resource limits reached through schedules (tests/test_cuda_codegen.cpp checks the
// same rules on hand-written loop IR): build_cuda refuses with a te::Error naming the
// kernel, the limit and what exceeds it.
#include <gtest/gtest.h>

#include <te/te.h>

#include "test_util.h"

using namespace te;

TEST(CudaErrors, TooManyThreadsPerBlock) {
  Tensor A = placeholder({4096}, Float(32), "A");
  Tensor C = compute(
      {4096}, [&](Expr i) { return A(i) * 2.0f; }, "C");
  Schedule s = create_schedule({C});
  auto [bx, tx] = s[C].split(C.axis(0), 2048);
  s[C].bind(bx, thread_axis("blockIdx.x"));
  s[C].bind(tx, thread_axis("threadIdx.x"));
  LoweredFunc f = lower(s, {A, C}, "wide");
  expect_error([&] { build_cuda(f); }, {"kernel 'wide_kernel0'", "threadIdx.x", "2048", "at most 1024"});
  // Two axes whose product is over the limit.
  Tensor M = placeholder({64, 64}, Float(32), "M");
  Tensor N = compute(
      {64, 64}, [&](Expr i, Expr j) { return M(i, j) + 1.0f; }, "N");
  Schedule t = create_schedule({N});
  auto [yo, yi] = t[N].split(N.axis(0), 32);
  auto [xo, xi] = t[N].split(N.axis(1), 64);
  t[N].reorder({yo, xo, yi, xi});
  t[N].bind(yo, thread_axis("blockIdx.y"));
  t[N].bind(xo, thread_axis("blockIdx.x"));
  t[N].bind(yi, thread_axis("threadIdx.y"));
  t[N].bind(xi, thread_axis("threadIdx.x"));
  expect_error(
      [&] {
        build_cuda(lower(t, {M, N}, "square"));
      },
      {"kernel 'square_kernel0'", "2048 threads per block", "the limit is 1024"});
}

TEST(CudaErrors, TooMuchSharedMemory) {
  // A 256 x 256 float32 tile in shared memory per block: 256 KiB, over the 227 KiB a block
  // may have (sm_90).
  Tensor A = placeholder({512, 256}, Float(32), "A");
  Tensor C = compute(
      {512, 256}, [&](Expr i, Expr j) { return A(i, j) * 2.0f; }, "C");
  Schedule s = create_schedule({C});
  Tensor AS = s.cache_read(A, "shared", {C});
  auto [bo, bi] = s[C].split(C.axis(0), 256);
  s[C].bind(bo, thread_axis("blockIdx.x"));
  s[C].bind(C.axis(1), thread_axis("threadIdx.x"));
  s[AS].compute_at(s[C], bo);
  s[AS].bind(AS.axis(1), thread_axis("threadIdx.x"));
  LoweredFunc f = lower(s, {A, C}, "tile");
  expect_error([&] { build_cuda(f); },
               {"kernel 'tile_kernel0'", "262144 bytes of shared memory", "A.shared", "227 KiB"});
}
