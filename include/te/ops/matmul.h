/// \file
/// Matrix multiplication as a TE compute, with the reference CUDA schedule of a tiled
/// GEMM (header-only).
///
///   Tensor C = te::ops::matmul(A, B);             // A: M x K, B: K x N, float
///   Schedule s = create_schedule({C});
///   te::ops::schedule_matmul_cuda(s, C);          // 128 x 128 tiles per block
///
/// The CUDA schedule is the classic SGEMM (TVM's GEMM tutorial, CUTLASS's SIMT kernels):
/// each block computes a block_m x block_n tile of C; its threads (threads_y x
/// threads_x) each hold a register tile of C (cache_write "local") split into
/// vthreads x vthreads interleaved parts, so a warp's threads read neighbouring columns of
/// the shared tiles. A and B pass through shared memory tile_k columns (rows) at a time,
/// double-buffered (the next tiles load during the arithmetic on the current ones), and
/// from there through registers (cache_read "local"); the shared tiles are filled with
/// vector loads (float4 with the defaults) where the shapes allow: K a multiple of
/// tile_k for A's tile, N a multiple of block_n for B's tile, the register row of B and
/// the stores of C. Shapes that are not multiples of the tiles are guarded.
#pragma once
#include <string>

#include "te/te.h"

namespace te::ops {

/// C[i, j] = sum over k of A[i, k] * B[k, j]: A is M x K, B is K x N, both of one float
/// dtype (float16 and bfloat16 inputs accumulate in float32: C is float32).
inline Tensor matmul(const Tensor& A, const Tensor& B, const std::string& name = "matmul") {
  if (A.ndim() != 2 || B.ndim() != 2)
    throw Error("matmul: A and B must be matrices, got " + std::to_string(A.ndim()) + " and " +
                std::to_string(B.ndim()) + " axes");
  if (!A.dtype().is_float() || A.dtype() != B.dtype())
    throw Error("matmul: A and B must have the same float dtype, got " + A.dtype().to_string() + " and " +
                B.dtype().to_string());
  const int64_t* ka = as_const_int(A.shape()[1]);
  const int64_t* kb = as_const_int(B.shape()[0]);
  if (ka && kb && *ka != *kb)
    throw Error("matmul: A's columns (" + std::to_string(*ka) + ") and B's rows (" + std::to_string(*kb) +
                ") differ");
  const DataType acc = A.dtype().bits() == 16 ? Float(32) : A.dtype();
  IterVar k = reduce_axis({make_zero(A.shape()[1].dtype()), A.shape()[1]}, "k");
  auto widen = [&](const Expr& e) { return e.dtype() == acc ? e : cast(acc, e); };
  return compute(
      {A.shape()[0], B.shape()[1]}, [&](Expr i, Expr j) { return sum(widen(A(i, k)) * widen(B(k, j)), {k}); },
      name);
}

/// The tiles of schedule_matmul_cuda. block_m must be a multiple of vthreads *
/// threads_y, block_n of vthreads * threads_x; the defaults give each of 256 threads an
/// 8 x 8 register tile (2 x 2 vthreads of 4 x 4).
struct MatmulCudaOptions {
  int block_m = 128;          ///< rows of the tile of C one block computes
  int block_n = 128;          ///< columns of that tile
  int tile_k = 8;             ///< columns of A (rows of B) per shared tile
  int threads_y = 16;         ///< threads per block along the rows
  int threads_x = 16;         ///< threads per block along the columns
  int vthreads = 2;           ///< interleaved register tiles per thread along each axis
  bool double_buffer = true;  ///< double-buffer the shared tiles (Stage::double_buffer)
  int vector = 4;             ///< elements per vector access (1: scalar code)
};

namespace matmul_detail {

inline void check(const MatmulCudaOptions& o) {
  auto fail = [](const std::string& what) { throw Error("schedule_matmul_cuda: " + what); };
  if (o.block_m < 1 || o.block_n < 1 || o.tile_k < 1 || o.threads_y < 1 || o.threads_x < 1 || o.vthreads < 1 ||
      o.vector < 1)
    fail("every tile size, thread count and the vector width must be >= 1");
  if (o.block_m % (o.vthreads * o.threads_y) != 0 || o.block_n % (o.vthreads * o.threads_x) != 0)
    fail("block_m (" + std::to_string(o.block_m) + ") must be a multiple of vthreads * threads_y (" +
         std::to_string(o.vthreads * o.threads_y) + ") and block_n (" + std::to_string(o.block_n) +
         ") of vthreads * threads_x (" + std::to_string(o.vthreads * o.threads_x) + ")");
  if (o.threads_y * o.threads_x > 1024)
    fail("threads_y * threads_x = " + std::to_string(o.threads_y * o.threads_x) + " is above 1024 threads per block");
  const int64_t shared_bytes = int64_t{4} * o.tile_k * (o.block_m + o.block_n) * (o.double_buffer ? 2 : 1);
  if (shared_bytes > 48 * 1024)
    fail("the shared tiles need " + std::to_string(shared_bytes) + " bytes, above the 48 KB a block may declare");
}

// Whether extent is a constant multiple of factor (then no tile of it needs guards).
inline bool divides(const Expr& extent, int64_t factor) {
  const int64_t* e = as_const_int(extent);
  return e && *e % factor == 0;
}

// Fills a shared tile with all the block's threads: vector-wide pieces of its rows (when
// the rows are whole vectors and unguarded), then threads_x, threads_y.
inline void fill_shared(Schedule& s, const Tensor& S, const MatmulCudaOptions& o, int64_t row_length,
                        bool rows_unguarded) {
  const int vec = o.vector > 1 && row_length % o.vector == 0 && rows_unguarded ? o.vector : 1;
  auto [pieces, lanes] = s[S].split(S.axis(1), vec);
  IterVar f = s[S].fuse(S.axis(0), pieces);
  auto [pass, thread] = s[S].split(f, int64_t{o.threads_y} * o.threads_x);
  auto [ty, tx] = s[S].split(thread, o.threads_x);
  s[S].bind(ty, thread_axis("threadIdx.y"));
  s[S].bind(tx, thread_axis("threadIdx.x"));
  if (vec > 1) s[S].vectorize(lanes);
  (void)pass;
}

// The loops of C's tile for one thread: its threadIdx.x loop, then its rows and columns.
struct ThreadTile {
  IterVar tx, rows, cols;
};

// C split into blocks of block_m x block_n, vthreads x vthreads interleaved parts and
// threads_y x threads_x threads: blocks, vthreads, threads, then each thread's part.
inline ThreadTile tile_output(Schedule& s, const Tensor& C, const MatmulCudaOptions& o) {
  auto [by, yi] = s[C].split(C.axis(0), o.block_m);
  auto [bx, xi] = s[C].split(C.axis(1), o.block_n);
  auto [vy, yi1] = s[C].split_nparts(yi, o.vthreads);
  auto [ty, yy] = s[C].split_nparts(yi1, o.threads_y);
  auto [vx, xi1] = s[C].split_nparts(xi, o.vthreads);
  auto [tx, xx] = s[C].split_nparts(xi1, o.threads_x);
  s[C].reorder({by, bx, vy, vx, ty, tx, yy, xx});
  s[C].bind(by, thread_axis("blockIdx.y"));
  s[C].bind(bx, thread_axis("blockIdx.x"));
  s[C].bind(vy, thread_axis("vthread"));
  s[C].bind(vx, thread_axis("vthread"));
  s[C].bind(ty, thread_axis("threadIdx.y"));
  s[C].bind(tx, thread_axis("threadIdx.x"));
  return {tx, yy, xx};
}

}  // namespace matmul_detail

/// The reference CUDA schedule of matmul's output C (see the file comment).
inline void schedule_matmul_cuda(Schedule& s, const Tensor& C, const MatmulCudaOptions& o = {}) {
  matmul_detail::check(o);
  const auto* op = C.op().get();
  if (op->kind != OpKind::Compute || op->inputs.size() != 2 || op->reduce_axis.size() != 1)
    throw Error("schedule_matmul_cuda: '" + op->name + "' is not a matmul (te::ops::matmul's output)");
  Tensor A(op->inputs[0]), B(op->inputs[1]);
  const bool whole_k = matmul_detail::divides(A.shape()[1], o.tile_k);
  const bool whole_n = matmul_detail::divides(B.shape()[1], o.block_n);
  Tensor AS = s.cache_read(A, "shared", {C}), BS = s.cache_read(B, "shared", {C});
  Tensor AL = s.cache_read(AS, "local", {C}), BL = s.cache_read(BS, "local", {C});
  Tensor CL = s.cache_write(C, "local");
  auto [tx, yy, xx] = matmul_detail::tile_output(s, C, o);
  // The register tile accumulates over k in tile_k steps.
  s[CL].compute_at(s[C], tx);
  auto [ko, ki] = s[CL].split(s[CL].op()->reduce_axis[0], o.tile_k);
  s[CL].reorder({ko, ki, CL.axis(0), CL.axis(1)});
  s[CL].unroll(ki);
  s[CL].unroll(CL.axis(0));
  s[CL].unroll(CL.axis(1));
  s[AS].compute_at(s[CL], ko);
  s[BS].compute_at(s[CL], ko);
  // Registers: a column of the A tile and a row of the B tile per step of k (the row
  // with vector loads from shared memory).
  s[AL].compute_at(s[CL], ki);
  s[BL].compute_at(s[CL], ki);
  s[AL].unroll(AL.axis(0));
  const int64_t per_thread = o.block_n / (o.vthreads * o.threads_x);
  const bool vector_rows = whole_n && o.vector > 1 && per_thread > 1 && per_thread <= 4;
  if (vector_rows) {
    s[BL].vectorize(BL.axis(1));
    s[C].vectorize(xx);  // the results leave in vectors too
  } else {
    s[BL].unroll(BL.axis(1));
    s[C].unroll(xx);
  }
  s[C].unroll(yy);
  matmul_detail::fill_shared(s, AS, o, o.tile_k, whole_k);
  matmul_detail::fill_shared(s, BS, o, o.block_n, whole_n);
  if (o.double_buffer) {
    s[AS].double_buffer();
    s[BS].double_buffer();
  }
}

}  // namespace te::ops
