/// \file
/// The CUDA schedules of te::ops::matmul (te/ops/matmul.h), header-only: the reference
/// tiled SGEMM (schedule_matmul_cuda) and the reference tensor-core GEMM
/// (schedule_matmul_tensorcore_cuda: float16 or bfloat16 matrices accumulated in float32
/// by `mma.sync.m16n8k16`, sm_80+).
///
///   Tensor C = te::ops::matmul(A, B);                // A: M x K, B: K x N
///   Schedule s = create_schedule({C});
///   te::ops::schedule_matmul_cuda(s, C);             // float: 128 x 128 tiles per block
///   te::ops::schedule_matmul_tensorcore_cuda(s, C);  // or float16: 128 x 128 tiles, 4 warps
///
/// Both find A and B as the inputs of C's operation (no names involved).
///
/// schedule_matmul_cuda is the classic SGEMM (TVM's GEMM tutorial, CUTLASS's SIMT kernels):
/// each block computes a block_m x block_n tile of C; its threads (threads_y x
/// threads_x) each hold a register tile of C (cache_write "local") split into
/// vthreads x vthreads interleaved parts, so a warp's threads read neighbouring columns of
/// the shared tiles. A and B pass through shared memory tile_k columns (rows) at a time,
/// double-buffered (the next tiles load during the arithmetic on the current ones), and
/// from there through registers (cache_read "local"); the shared tiles are filled with
/// vector loads (float4 with the defaults) where the shapes allow: K a multiple of
/// tile_k for A's tile, N a multiple of block_n for B's tile, the register row of B and
/// the stores of C. Shapes that are not multiples of the tiles are guarded.
///
/// schedule_matmul_tensorcore_cuda is the classic tensor-core GEMM (TVM's wmma tutorials,
/// CUTLASS's multistage kernels without their pipelining depth): each block computes a block_m x
/// block_n tile of C with warps_m x warps_n warps (threadIdx.z, threadIdx.y; threadIdx.x
/// is the lane); each warp a warp_m x warp_n tile held in registers as 16 x 8 accumulator
/// fragments (cache_write "warp"). A and B pass through shared memory tile_k columns
/// (rows) at a time, double-buffered, their rows padded by `pad` elements
/// (storage_align: ldmatrix's eight row addresses then fall in distinct banks), copied
/// with 16-byte vector accesses by all the block's threads; from there 16 x 16 fragments
/// of A and 16 x 8 fragments of B are loaded with ldmatrix (cache_read "warp") and
/// multiplied. The results leave the fragments in float2 stores.
///
/// M, N and K must be constants: a tensor intrinsic always runs its whole tile, so C is
/// at least one block_m x block_n tile, its last tiles along M and N shifted inward to
/// stay whole (TailStrategy::ShiftInwards: those rows and columns are computed by two
/// blocks), N a multiple of options.vector and K of tile_k (te::Error otherwise). A
/// linear layer's C = x · wᵀ (te::ops::linear, w N x K) takes it too: w's tiles are
/// copied as they lie (rows of K, 16-byte cp.async pieces) and their fragments loaded by
/// intrinsics::cuda_load_matrix_bt_8x16 (ldmatrix without .trans).
#pragma once
#include <string>

#include "te/ops/matmul.h"
#include "te/te.h"

namespace te::ops {

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

[[noreturn]] inline void fail(const std::string& what) { throw Error("schedule_matmul_tensorcore_cuda: " + what); }

inline void check(const MatmulTensorCoreOptions& o, int64_t M, int64_t N, int64_t K, int64_t bytes, bool b_transposed) {
  auto text = [](int64_t v) { return std::to_string(v); };
  if (o.block_m < 1 || o.block_n < 1 || o.warps_m < 1 || o.warps_n < 1 || o.tile_k < 1 || o.pad < 0 || o.vector < 1)
    fail("every tile size and warp count must be >= 1 (pad >= 0)");
  if (o.block_m % (16 * o.warps_m) != 0 || o.block_n % (8 * o.warps_n) != 0)
    fail("block_m (" + text(o.block_m) + ") must be a multiple of 16 * warps_m (" + text(16 * o.warps_m) +
         ") and block_n (" + text(o.block_n) + ") of 8 * warps_n (" + text(8 * o.warps_n) + ")");
  if (o.tile_k % 16 != 0) fail("tile_k (" + text(o.tile_k) + ") must be a multiple of 16");
  if (o.pad % 8 != 0) fail("pad (" + text(o.pad) + ") must be a multiple of 8 (ldmatrix reads 16-byte rows)");
  if (o.warps_m * o.warps_n * 32 > 1024) fail(text(o.warps_m * o.warps_n) + " warps are above 1024 threads per block");
  check_c_holds_a_tile("schedule_matmul_tensorcore_cuda", M, N, o.block_m, o.block_n);
  if (!b_transposed && N % o.vector != 0)
    fail("N is " + text(N) + "; B's rows are copied in pieces of vector = " + text(o.vector) +
         " elements, so N is a multiple of " + text(o.vector));
  if (K % o.tile_k != 0)
    fail("K is " + text(K) + ", not a multiple of tile_k = " + text(o.tile_k) + " (every k tile is whole)");
  const int64_t b_tile = b_transposed ? o.block_n * (o.tile_k + o.pad) : o.tile_k * (o.block_n + o.pad);
  const int64_t shared = bytes * ((o.block_m * (o.tile_k + o.pad)) + b_tile) * (o.double_buffer ? 2 : 1);
  if (shared > 48 * 1024) fail("the shared tiles need " + text(shared) + " bytes, above the 48 KB a block may declare");
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
  const auto [A, B, M, N, K, b_transposed] = matmul_operands(C, "schedule_matmul_tensorcore_cuda");
  const DataType t = A.dtype();
  if (t != Float(16) && t != BFloat(16))
    d::fail("tensor cores multiply float16 or bfloat16 matrices; A and B are " + t.to_string());
  d::check(o, M, N, K, t.bytes(), b_transposed);
  const int warp_m = o.block_m / o.warps_m, warp_n = o.block_n / o.warps_n;

  // B's tiles as B lies: [K][N] (ldmatrix.trans reads the fragments from them), or
  // linear()'s [N][K] (ldmatrix reads them, each row a column of the fragment; the
  // fragment's copy is laid out [K][N], as the mma takes it).
  Tensor AS = s.cache_read(A, "shared", {C});
  Tensor BS = s.cache_read(B, "shared", {C});
  const std::vector<int> fragment_order = b_transposed ? std::vector<int>{1, 0} : std::vector<int>{};
  Tensor AF = s.cache_read(AS, "warp", {C}), BF = s.cache_read(BS, "warp", {C}, fragment_order);
  Tensor CF = s.cache_write(C, "warp");

  // C: blocks, warps, then 16 x 8 fragments stored from the warp's accumulators. A last
  // block past M or N starts earlier, overlapping the one before (the fragments and
  // tiles stay whole; both blocks store the same values there).
  auto [by, yi] = s[C].split(C.axis(0), o.block_m, TailStrategy::ShiftInwards);
  auto [bx, xi] = s[C].split(C.axis(1), o.block_n, TailStrategy::ShiftInwards);
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
  s[BF].tensorize(BF.axis(0),
                  b_transposed ? intrinsics::cuda_load_matrix_bt_8x16(t) : intrinsics::cuda_load_matrix_b_16x8(t));
  d::fill_shared(s, AS, o, o.tile_k);
  d::fill_shared(s, BS, o, b_transposed ? o.tile_k : o.block_n);
}

}  // namespace te::ops
