/// \file
/// The reference tensor-core GEMM for CUDA (header-only): te::ops::matmul of float16 or
/// bfloat16 matrices, accumulated in float32 by `mma.sync.m16n8k16` (sm_80+).
///
///   Tensor C = te::ops::matmul(A, B);                // A: M x K, B: K x N, float16
///   Schedule s = create_schedule({C});
///   te::ops::schedule_matmul_tensorcore_cuda(s, C);  // 128 x 128 tiles, 4 warps
///
/// The schedule is the classic tensor-core GEMM (TVM's wmma tutorials, CUTLASS's
/// multistage kernels without their pipelining depth): each block computes a block_m x
/// block_n tile of C with warps_m x warps_n warps (threadIdx.z, threadIdx.y; threadIdx.x
/// is the lane); each warp a warp_m x warp_n tile held in registers as 16 x 8 accumulator
/// fragments (cache_write "warp"). A and B pass through shared memory tile_k columns
/// (rows) at a time, double-buffered, their rows padded by `pad` elements
/// (storage_align: ldmatrix's eight row addresses then fall in distinct banks), copied
/// with 16-byte vector accesses by all the block's threads; from there 16 x 16 fragments
/// of A and 16 x 8 fragments of B are loaded with ldmatrix (cache_read "warp") and
/// multiplied. The results leave the fragments in float2 stores.
///
/// M, N and K must be constants, multiples of block_m, block_n and tile_k: a tensor
/// intrinsic always runs its whole tile (te::Error otherwise).
#pragma once
#include <string>

#include "te/ops/matmul.h"
#include "te/te.h"

namespace te::ops {

/// The tiles of schedule_matmul_tensorcore_cuda.
struct MatmulTensorCoreOptions {
  int block_m = 128;          ///< rows of the tile of C one block computes
  int block_n = 128;          ///< columns of that tile
  int warps_m = 2;            ///< warps along the rows (block_m / warps_m rows each, a multiple of 16)
  int warps_n = 2;            ///< warps along the columns (block_n / warps_n each, a multiple of 8)
  int tile_k = 32;            ///< columns of A (rows of B) per shared tile, a multiple of 16
  int pad = 8;                ///< elements added to each shared row (storage_align), a multiple of 8
  bool double_buffer = true;  ///< double-buffer the shared tiles (Stage::double_buffer)
  int vector = 8;             ///< elements per copy into shared memory (8: 16 bytes)
};

namespace matmul_tensorcore_detail {

[[noreturn]] inline void fail(const std::string& what) {
  throw Error("schedule_matmul_tensorcore_cuda: " + what);
}

inline int64_t constant_extent(const Expr& e, const char* what) {
  const int64_t* v = as_const_int(e);
  if (v == nullptr) fail(std::string(what) + " is " + to_string(e) + ", not a constant");
  return *v;
}

inline void check(const MatmulTensorCoreOptions& o, int64_t M, int64_t N, int64_t K, int64_t bytes) {
  auto text = [](int64_t v) { return std::to_string(v); };
  if (o.block_m < 1 || o.block_n < 1 || o.warps_m < 1 || o.warps_n < 1 || o.tile_k < 1 || o.pad < 0 ||
      o.vector < 1)
    fail("every tile size and warp count must be >= 1 (pad >= 0)");
  if (o.block_m % (16 * o.warps_m) != 0 || o.block_n % (8 * o.warps_n) != 0)
    fail("block_m (" + text(o.block_m) + ") must be a multiple of 16 * warps_m (" + text(16 * o.warps_m) +
         ") and block_n (" + text(o.block_n) + ") of 8 * warps_n (" + text(8 * o.warps_n) + ")");
  if (o.tile_k % 16 != 0) fail("tile_k (" + text(o.tile_k) + ") must be a multiple of 16");
  if (o.pad % 8 != 0) fail("pad (" + text(o.pad) + ") must be a multiple of 8 (ldmatrix reads 16-byte rows)");
  if (o.warps_m * o.warps_n * 32 > 1024)
    fail(text(o.warps_m * o.warps_n) + " warps are above 1024 threads per block");
  if (M % o.block_m != 0 || N % o.block_n != 0 || K % o.tile_k != 0)
    fail("M x N x K = " + text(M) + " x " + text(N) + " x " + text(K) + " must be multiples of block_m x block_n x "
         "tile_k = " + text(o.block_m) + " x " + text(o.block_n) + " x " + text(o.tile_k));
  const int64_t shared = bytes * ((o.block_m * (o.tile_k + o.pad)) + o.tile_k * (o.block_n + o.pad)) *
                         (o.double_buffer ? 2 : 1);
  if (shared > 48 * 1024)
    fail("the shared tiles need " + text(shared) + " bytes, above the 48 KB a block may declare");
}

// Copies a shared tile with all the block's threads: vector-wide pieces of its rows,
// then 32 lanes, warps_n, warps_m.
inline void fill_shared(Schedule& s, const Tensor& S, const MatmulTensorCoreOptions& o, int64_t row_length) {
  const int vec = o.vector > 1 && row_length % o.vector == 0 ? o.vector : 1;
  auto [pieces, lanes] = s[S].split(S.axis(1), vec);
  IterVar f = s[S].fuse(S.axis(0), pieces);
  auto [pass, thread] = s[S].split(f, int64_t{32} * o.warps_m * o.warps_n);
  auto [warp, lane] = s[S].split(thread, 32);
  auto [wm, wn] = s[S].split(warp, o.warps_n);
  s[S].bind(wm, thread_axis("threadIdx.z"));
  s[S].bind(wn, thread_axis("threadIdx.y"));
  s[S].bind(lane, thread_axis("threadIdx.x"));
  if (vec > 1) s[S].vectorize(lanes);
  s[S].unroll(pass);
  // Rows of row_length + pad: the smallest multiple of that at least row_length.
  if (o.pad > 0) s[S].storage_align(S.axis(0), static_cast<int>(row_length) + o.pad, 0);
  if (o.double_buffer) s[S].double_buffer();
}

}  // namespace matmul_tensorcore_detail

/// The reference tensor-core schedule of matmul's output C (see the file comment).
inline void schedule_matmul_tensorcore_cuda(Schedule& s, const Tensor& C, const MatmulTensorCoreOptions& o = {}) {
  namespace d = matmul_tensorcore_detail;
  const auto* op = C.op().get();
  if (op->kind != OpKind::Compute || op->inputs.size() != 2 || op->reduce_axis.size() != 1)
    d::fail("'" + op->name + "' is not a matmul (te::ops::matmul's output)");
  Tensor A(op->inputs[0]), B(op->inputs[1]);
  const DataType t = A.dtype();
  if (t != Float(16) && t != BFloat(16))
    d::fail("tensor cores multiply float16 or bfloat16 matrices; A and B are " + t.to_string());
  const int64_t M = d::constant_extent(A.shape()[0], "M"), K = d::constant_extent(A.shape()[1], "K");
  const int64_t N = d::constant_extent(B.shape()[1], "N");
  d::check(o, M, N, K, t.bytes());
  const int warp_m = o.block_m / o.warps_m, warp_n = o.block_n / o.warps_n;

  Tensor AS = s.cache_read(A, "shared", {C}), BS = s.cache_read(B, "shared", {C});
  Tensor AF = s.cache_read(AS, "warp", {C}), BF = s.cache_read(BS, "warp", {C});
  Tensor CF = s.cache_write(C, "warp");

  // C: blocks, warps, then 16 x 8 fragments stored from the warp's accumulators.
  auto [by, yi] = s[C].split(C.axis(0), o.block_m);
  auto [bx, xi] = s[C].split(C.axis(1), o.block_n);
  auto [wy, yw] = s[C].split(yi, warp_m);
  auto [wx, xw] = s[C].split(xi, warp_n);
  auto [fy, y16] = s[C].split(yw, 16);
  auto [fx, x8] = s[C].split(xw, 8);
  s[C].reorder({by, bx, wy, wx, fy, fx, y16, x8});
  s[C].bind(by, thread_axis("blockIdx.y"));
  s[C].bind(bx, thread_axis("blockIdx.x"));
  s[C].bind(wy, thread_axis("threadIdx.z"));
  s[C].bind(wx, thread_axis("threadIdx.y"));
  s[C].unroll(fy);
  s[C].unroll(fx);
  s[C].tensorize(y16, intrinsics::cuda_store_16x8_f32());

  // The warp's accumulators: k in shared tiles of tile_k, those in steps of 16.
  s[CF].compute_at(s[C], wx);
  auto [ko, ki] = s[CF].split(s[CF].op()->reduce_axis[0], o.tile_k);
  auto [kk, k16] = s[CF].split(ki, 16);
  auto [cy, cy16] = s[CF].split(CF.axis(0), 16);
  auto [cx, cx8] = s[CF].split(CF.axis(1), 8);
  s[CF].reorder({ko, kk, cy, cx, cy16, cx8, k16});
  s[CF].unroll(kk);
  s[CF].unroll(cy);
  s[CF].unroll(cx);
  s[CF].tensorize(cy16, intrinsics::cuda_mma_m16n8k16(t));

  // Shared tiles per k tile; fragments per step of 16.
  s[AS].compute_at(s[CF], ko);
  s[BS].compute_at(s[CF], ko);
  s[AF].compute_at(s[CF], kk);
  s[BF].compute_at(s[CF], kk);
  auto [ay, ay16] = s[AF].split(AF.axis(0), 16);
  s[AF].unroll(ay);
  s[AF].tensorize(ay16, intrinsics::cuda_load_matrix_a_16x16(t));
  auto [bx8o, bx8] = s[BF].split(BF.axis(1), 8);
  s[BF].reorder({bx8o, BF.axis(0), bx8});
  s[BF].unroll(bx8o);
  s[BF].tensorize(BF.axis(0), intrinsics::cuda_load_matrix_b_16x8(t));
  d::fill_shared(s, AS, o, o.tile_k);
  d::fill_shared(s, BS, o, o.block_n);
}

}  // namespace te::ops
