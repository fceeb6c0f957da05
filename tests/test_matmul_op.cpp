// te::ops::matmul and its reference CUDA schedule: results through interpret() (and the
// JIT for the CPU default schedule) against plain C++, the loop nest the schedule makes
// (shared tiles shared by the vthreads, fetched once per tile, double-buffered), and the
// errors. The CUDA emulation and nvcc run the kernel (test_cuda_emulation, test_cuda_nvcc).
#include <gtest/gtest.h>

#include <te/ops/matmul.h>
#include <te/ops/matmul_cuda.h>
#include <te/te.h>

#include "test_lower_util.h"
#include "test_util.h"

using namespace te;
using namespace lower_test;

namespace {

ops::MatmulCudaOptions small_tiles() {
  ops::MatmulCudaOptions o;
  o.block_m = o.block_n = 32;
  o.threads_y = o.threads_x = 8;
  return o;
}

LoweredFunc cuda_matmul(Expr M, Expr N, Expr K, const ops::MatmulCudaOptions& o) {
  Tensor A = placeholder({M, K}, Float(32), "A"), B = placeholder({K, N}, Float(32), "B");
  Tensor C = ops::matmul(A, B, "C");
  Schedule s = create_schedule({C});
  ops::schedule_matmul_cuda(s, C, o);
  return lower(s, {A, B, C}, "gemm");
}

int stores_to(const Stmt& body, const std::string& buffer) {
  return count_stmts(body, [&](const Stmt& s) {
    const auto* st = s.as<StoreNode>();
    return st && st->buffer.name() == buffer;
  });
}

int64_t allocated_size(const Stmt& body, const std::string& buffer) {
  int64_t size = -1;
  count_stmts(body, [&](const Stmt& s) {
    const auto* a = s.as<AllocateNode>();
    if (a && a->buffer.name() == buffer) size = *as_const_int(simplify(a->buffer.shape()[0]));
    return false;
  });
  return size;
}

}  // namespace

TEST(MatmulOp, DefaultScheduleOnTheCpu) {
  const int M = 7, N = 5, K = 9;
  Tensor A = placeholder({M, K}, Float(32), "A"), B = placeholder({K, N}, Float(32), "B");
  Tensor C = ops::matmul(A, B);
  EXPECT_EQ(C.op()->name, "matmul");
  LoweredFunc f = lower(create_schedule({C}), {A, B, C}, "mm");
  NDArray a = input({M, K}, 1), b = input({K, N}, 2), c = output({M, N});
  run_backends(f, {a, b, c});
  expect_close(c.to_vector<float>(), matmul_reference(a.to_vector<float>(), b.to_vector<float>(), M, N, K), 1e-5f,
               "cpu");
}

TEST(MatmulOp, Float16InputsAccumulateInFloat32) {
  Tensor A = placeholder({2, 3}, Float(16), "A"), B = placeholder({3, 2}, Float(16), "B");
  Tensor C = ops::matmul(A, B);
  EXPECT_EQ(C.dtype(), Float(32));
}

TEST(MatmulOp, CudaScheduleMatchesCppOnEveryEdge) {
  struct Case {
    int M, N, K;
  };
  // Whole tiles; M, N and K cut (K: 3 tiles of 8, the last partial, an odd count for the
  // double buffer); one tile of k.
  for (const Case& c : {Case{64, 96, 48}, Case{50, 40, 20}, Case{33, 31, 8}}) {
    LoweredFunc f = cuda_matmul(c.M, c.N, c.K, small_tiles());
    NDArray a = input({c.M, c.K}, 3), b = input({c.K, c.N}, 4), out = output({c.M, c.N});
    run_backends(f, {a, b, out});
    const auto want = matmul_reference(a.to_vector<float>(), b.to_vector<float>(), c.M, c.N, c.K);
    expect_close(out.to_vector<float>(), want, 1e-4f,
                 std::to_string(c.M) + "x" + std::to_string(c.N) + "x" + std::to_string(c.K));
  }
}

TEST(MatmulOp, CudaScheduleWithoutDoubleBufferOrVectors) {
  ops::MatmulCudaOptions o = small_tiles();
  o.double_buffer = false;
  o.vector = 1;
  LoweredFunc f = cuda_matmul(64, 64, 24, o);
  EXPECT_EQ(count_exprs(f.body, [](const Expr& e) { return e.dtype().lanes() > 1; }), 0) << f.body;
  EXPECT_EQ(allocated_size(f.body, "A.shared.db"), -1);
  NDArray a = input({64, 24}, 5), b = input({24, 64}, 6), out = output({64, 64});
  run_backends(f, {a, b, out});
  expect_close(out.to_vector<float>(), matmul_reference(a.to_vector<float>(), b.to_vector<float>(), 64, 64, 24), 1e-4f,
               "no double buffer, scalar");
}

// The vthreads of a thread share its block's shared tiles: one tile per block
// (block_m x tile_k), filled once per k tile, not once per vthread.
TEST(MatmulOp, SharedTilesAreSharedByTheVthreads) {
  LoweredFunc f = cuda_matmul(256, 256, 64, {});
  EXPECT_EQ(allocated_size(f.body, "A.shared"), 128 * 8) << f.body;
  EXPECT_EQ(allocated_size(f.body, "A.shared.db"), 128 * 8);
  EXPECT_EQ(allocated_size(f.body, "B.shared"), 8 * 128);
  // The first tile before the loop and the third in its second half; the second in its first.
  EXPECT_EQ(stores_to(f.body, "A.shared"), 2) << f.body;
  EXPECT_EQ(stores_to(f.body, "A.shared.db"), 1);
  // Each thread's 8 x 8 register tile: 2 x 2 vthreads of 4 x 4.
  EXPECT_EQ(allocated_size(f.body, "C.local"), 64);
}

TEST(MatmulOp, Errors) {
  Tensor A = placeholder({4, 3}, Float(32), "A"), B = placeholder({3, 5}, Float(32), "B");
  expect_error([&] { ops::matmul(placeholder({4}, Float(32), "v"), B); },
               {"matmul: A and B must be matrices, got 1 and 2 axes"});
  expect_error(
      [&] {
        ops::matmul(A, placeholder({3, 5}, Float(64), "D"));
      },
      {"matmul: A and B must have the same float dtype, got float32 and float64"});
  expect_error(
      [&] {
        ops::matmul(placeholder({4, 3}, Int(32), "I"), placeholder({3, 5}, Int(32), "J"));
      },
      {"same float dtype, got int32"});
  expect_error(
      [&] {
        ops::matmul(A, placeholder({4, 5}, Float(32), "E"));
      },
      {"matmul: A's columns (3) and B's rows (4) differ"});
  Tensor C = ops::matmul(A, B);
  Schedule s = create_schedule({C});
  ops::MatmulCudaOptions o;
  o.block_m = 100;
  expect_error([&] { ops::schedule_matmul_cuda(s, C, o); },
               {"schedule_matmul_cuda: block_m (100) must be a multiple of vthreads * threads_y (32)"});
  o = {};
  o.tile_k = 0;
  expect_error([&] { ops::schedule_matmul_cuda(s, C, o); }, {"must be >= 1"});
  o = {};
  o.threads_x = o.threads_y = 64;
  o.block_m = o.block_n = 128;
  o.vthreads = 1;
  expect_error([&] { ops::schedule_matmul_cuda(s, C, o); }, {"threads_y * threads_x = 4096 is above 1024"});
  o = {};
  o.tile_k = 32;
  expect_error([&] { ops::schedule_matmul_cuda(s, C, o); },
               {"the shared tiles need 65536 bytes, above the 48 KB a block may declare"});
  Tensor D = compute(
      {4}, [&](Expr i) { return A(i, 0) * 2.0f; }, "D");
  Schedule t = create_schedule({D});
  expect_error([&] { ops::schedule_matmul_cuda(t, D); },
               {"schedule_matmul_cuda: 'D' is not a matmul (te::ops::matmul's output)"});
}
