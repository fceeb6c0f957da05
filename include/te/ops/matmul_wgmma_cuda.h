/// \file
/// The Hopper schedule of te::ops::matmul (te/ops/matmul.h), header-only:
/// schedule_matmul_wgmma_cuda, float16 or bfloat16 matrices accumulated in float32 by
/// warpgroup MMA (`wgmma.mma_async`, sm_90a; each thread's own sums on other GPUs).
///
///   Tensor C = te::ops::matmul(A, B);             // A: M x K, B: K x N, float16/bfloat16
///   Schedule s = create_schedule({C});
///   te::ops::schedule_matmul_wgmma_cuda(s, C);    // fastest_wgmma_options for C's shape
///   // nvcc -arch=sm_90a for wgmma (docs/tensor_cores.md)
///
/// Each block computes a block_m x block_n tile of C with block_m / 64 warpgroups
/// (threadIdx.y; threadIdx.x is the thread's place in its warpgroup), each holding a
/// 64 x block_n tile of accumulators (cache_write "warpgroup"). A and B pass through
/// shared memory tile_k columns (rows) at a time, `stages` tiles deep, each tile's rows
/// swizzled by their width (Stage::swizzle: tile_k 64 gives 128-byte rows and the
/// 128-byte swizzle). B's tiles keep B's layout (tile_k rows of block_n), in column
/// blocks of the widest swizzle that divides them, which wgmma reads MN-major
/// (options.b_mn_major; else the threads transpose them into K-major [N][K] tiles, each
/// 16-byte piece gathering 8 rows of B). Each tile is one TMA copy
/// (intrinsics::cuda_tma_load_2d, a box per column block, completing on an mbarrier;
/// options.tma) or the threads' 16-byte cp.async copies. Per 16 of k, one wgmma per
/// warpgroup multiplies its 64 rows of A's tile by B's tile.
///
/// The block's threads wait for a k tile's wgmmas at the next barrier. With
/// options.warp_specialized, a producer warpgroup issues the TMA copies on mbarriers
/// instead (Stage::warp_specialize), the consumer warpgroups meet no __syncthreads in
/// the k loop, and one k tile's wgmmas stay in flight while the tile before is released.
///
/// An epilogue fuses into the kernel: schedule its output instead of C, an element-wise
/// compute reading C at its own (i, j) (a bias, an activation, a cast to bfloat16):
///
///   Tensor D = compute({M, N}, [&](Expr i, Expr j) {
///     return cast(BFloat(16), max(C(i, j) + bias(j), 0.0f)); }, "D");
///   te::ops::schedule_matmul_wgmma_cuda(s, D);
///
/// The warpgroups then store their accumulators into a float32 block_m x block_n tile of
/// C in shared memory, and the block's threads compute D from it, 16 bytes at a time.
///
/// M, N and K must be constants; C at least one block_m x block_n tile, whose last tiles
/// along M and N shift inward to stay whole (TailStrategy::ShiftInwards: those rows and
/// columns are computed twice, by two blocks); N and K multiples of 8 (16-byte rows, as
/// TMA needs). K need not be a multiple of tile_k where TMA copies A and B as it lies (the
/// defaults): the last k tile's copies fill the columns of A and rows of B past K with
/// zeros, which A's register fragments (a_from_registers) load too (te::Error otherwise).
///
/// A linear layer's C = x · wᵀ (te::ops::linear: w is N x K, a row per output feature)
/// is scheduled the same way, w's rows copied as they lie into the K-major [N][K] tiles
/// wgmma reads (intrinsics::cuda_wgmma_m64nNk16), by TMA or the threads' 16-byte copies.
#pragma once
#include <algorithm>
#include <string>

#include "te/ops/matmul.h"
#include "te/te.h"

namespace te::ops {

/// The tiles of schedule_matmul_wgmma_cuda.
struct MatmulWgmmaOptions {
  int block_m = 128;  ///< rows of C per block: a warpgroup per 64 (64, 128, 192 or 256)
  int block_n = 128;  ///< columns of C per block: wgmma's n, a multiple of 8 up to 256
  int tile_k = 64;    ///< columns of A (rows of B) per shared tile: 16, 32 or 64
  /// Shared tiles in flight per operand (Stage::pipeline): 1 (no overlap), 2 (double
  /// buffering) to 8; with TMA each barrier waits only for the tiles read next, so a
  /// copy has stages - 1 k tiles to land.
  int stages = 3;
  /// Copy the shared tiles by TMA (intrinsics::cuda_tma_load_2d: one thread issues each
  /// tile's copy, which completes on an mbarrier) instead of by the threads' cp.async. A
  /// B transposed by the threads (b_mn_major false) is the threads' copy either way.
  bool tma = true;
  /// B's tiles as B lies in memory (K x N rows, in column blocks of their swizzle; wgmma
  /// reads them MN-major: intrinsics::cuda_wgmma_m64nNk16_kn); false: transposed by the
  /// threads into K-major [N][K] tiles (intrinsics::cuda_wgmma_m64nNk16). linear()'s N x
  /// K B is K-major as it lies: true (te::Error otherwise).
  bool b_mn_major = true;
  /// A persistent grid: this many blocks, each looping over the tiles of C, block b taking
  /// the row-major tiles b, b + blocks, ...; it divides the tile count (ceil(M / block_m)
  /// x ceil(N / block_n): the TMA copies and wgmmas run whole tiles), e.g. 128 of a 4096-square
  /// C's 1024 tiles on a 132-multiprocessor GPU. 0: a block per tile.
  int persistent_blocks = 0;
  /// Warp specialization (Stage::warp_specialize): one more warpgroup per block issues
  /// the TMA copies as soon as the consumers release each buffer, and setmaxnreg gives
  /// its registers to the block_m / 64 consumer warpgroups, which never meet a
  /// __syncthreads in the k loop. Needs tma, b_mn_major and stages of 2 or more; sm_90a.
  bool warp_specialized = false;
  /// A from registers: each warpgroup loads its 64 x tile_k slice of A's tile into
  /// register fragments (intrinsics::cuda_wgmma_load_a, 16 columns each) once the
  /// previous k tile's wgmmas completed; the wgmmas then read A from registers
  /// (intrinsics::cuda_wgmma_m64nNk16_rs).
  bool a_from_registers = false;
};

namespace matmul_wgmma_detail {

[[noreturn]] inline void fail(const std::string& what) { throw Error("schedule_matmul_wgmma_cuda: " + what); }

// C's tiles: the last ones along M and N shift inward, so the count rounds up.
inline int64_t c_tile_count(int64_t M, int64_t N, const MatmulWgmmaOptions& o) {
  return ((M + o.block_m - 1) / o.block_m) * ((N + o.block_n - 1) / o.block_n);
}

// The largest divisor of `tiles` that is at most `limit` (a persistent grid whose blocks
// all run the same number of whole tiles).
inline int64_t largest_divisor_at_most(int64_t tiles, int64_t limit) {
  int64_t divisor = std::max<int64_t>(1, std::min(limit, tiles));
  while (tiles % divisor != 0) --divisor;
  return divisor;
}

inline void check(const MatmulWgmmaOptions& o, int64_t M, int64_t N, int64_t K, bool epilogue, bool b_transposed) {
  auto text = [](int64_t v) { return std::to_string(v); };
  if (b_transposed && !o.b_mn_major)
    fail(
        "b_mn_major is false, which has the threads transpose a K x N B into K-major tiles; linear()'s B is N x K, "
        "K-major as it lies: leave it true");
  if (o.block_m < 64 || o.block_m > 256 || o.block_m % 64 != 0)
    fail("block_m is " + text(o.block_m) + "; a warpgroup computes 64 rows, so block_m is 64, 128, 192 or 256");
  if (o.block_n < 8 || o.block_n > 256 || o.block_n % 8 != 0)
    fail("block_n is " + text(o.block_n) + "; wgmma's n is a multiple of 8 from 8 to 256");
  if (o.tile_k != 16 && o.tile_k != 32 && o.tile_k != 64)
    fail("tile_k is " + text(o.tile_k) + "; rows of 16, 32 or 64 16-bit elements fill a 32, 64 or 128-byte swizzle");
  check_c_holds_a_tile("schedule_matmul_wgmma_cuda", M, N, o.block_m, o.block_n);
  if (N % 8 != 0)
    fail("N is " + text(N) + "; B's rows are copied in 16-byte pieces (TMA's strides), so N is a multiple of 8");
  if (K % 8 != 0)
    fail("K is " + text(K) + "; A's rows are copied in 16-byte pieces (TMA's strides), so K is a multiple of 8");
  if (K % o.tile_k != 0 && (!o.tma || (!o.b_mn_major && !b_transposed)))
    fail("K is " + text(K) + ", not a multiple of tile_k = " + text(o.tile_k) +
         "; the last k tile's zeros past K come from TMA copies of A and of B as it lies (tma and b_mn_major " +
         "true), so take those or a tile_k that divides K");
  if (o.b_mn_major && !b_transposed && o.block_n % 16 != 0)
    fail("block_n is " + text(o.block_n) + "; B's MN-major tiles are whole column blocks of a 32, 64 or 128-byte " +
         "swizzle, so block_n is a multiple of 16 (or set b_mn_major to false)");
  if (o.persistent_blocks < 0 || o.persistent_blocks > 65535)
    fail("persistent_blocks is " + text(o.persistent_blocks) + "; 0 (a block per tile) or a grid of 1 to 65535");
  const int64_t c_tiles = c_tile_count(M, N, o);
  if (o.persistent_blocks > 0 && c_tiles % o.persistent_blocks != 0)
    fail("persistent_blocks is " + text(o.persistent_blocks) + ", which does not divide C's " + text(c_tiles) +
         " tiles (every block runs whole tiles); take a divisor, e.g. " +
         text(largest_divisor_at_most(c_tiles, o.persistent_blocks)));
  if (o.stages < 1 || o.stages > 8)
    fail("stages is " + text(o.stages) + "; the shared tiles are 1 (no pipeline) to 8 buffers deep");
  if (o.warp_specialized && (!o.tma || !o.b_mn_major || o.stages < 2))
    fail(std::string("warp_specialized needs the tiles copied by TMA (tma and b_mn_major true) into a pipeline of 2 "
                     "or more stages; ") +
         (!o.tma          ? "tma is false"
          : !o.b_mn_major ? "b_mn_major is false"
                          : "stages is " + text(o.stages)));
  const int64_t tiles = 2 * int64_t{o.tile_k} * (o.block_m + o.block_n) * o.stages;
  const int64_t c_tile = epilogue ? 4 * int64_t{o.block_m} * o.block_n : 0;
  if (tiles + c_tile > 227 * 1024)
    fail("the shared tiles need " + text(tiles) + " bytes" +
         (epilogue ? " and the epilogue's float32 tile of C " + text(c_tile) : std::string()) +
         ", above the 227 KiB of a block (sm_90)");
}

// The swizzle of B's MN-major tiles: the widest whose column blocks (swizzle / 2
// elements) divide block_n.
inline int mn_major_swizzle(int block_n) { return block_n % 64 == 0 ? 128 : block_n % 32 == 0 ? 64 : 32; }

// Fills a rows x cols shared tile swizzled by `swizzle` bytes: one TMA copy (o.tma and not
// transposed) or all the block's threads, 16 bytes (8 elements) a piece: pieces over
// threadIdx.x (128) and threadIdx.y (the warpgroups). Untransposed pieces are dense in
// global memory: a row's pieces go to neighbouring threads. A transposed tile (B into
// K-major [N][K]: a piece gathers 8 rows of B) gives neighbouring threads neighbouring
// columns of B, so each of the 8 loads is coalesced.
inline void fill_shared(Schedule& s, const Tensor& S, const MatmulWgmmaOptions& o, int rows, int cols, int swizzle,
                        bool transposed) {
  s[S].swizzle(swizzle);
  if (o.stages > 1) s[S].pipeline(o.stages);
  if (!transposed && o.tma) {  // one copy per tile, by one thread
    s[S].tensorize(S.axis(0), intrinsics::cuda_tma_load_2d(S.dtype(), rows, cols));
    return;
  }
  auto [pieces, lanes] = s[S].split(S.axis(1), 8);
  if (transposed) s[S].reorder({pieces, S.axis(0), lanes});
  IterVar pieces_of_rows = transposed ? s[S].fuse(pieces, S.axis(0)) : s[S].fuse(S.axis(0), pieces);
  auto [pass, thread] = s[S].split(pieces_of_rows, int64_t{128} * (o.block_m / 64));
  auto [group, place] = s[S].split(thread, 128);
  s[S].bind(group, thread_axis("threadIdx.y"));
  s[S].bind(place, thread_axis("threadIdx.x"));
  s[S].vectorize(lanes);
  s[S].unroll(pass);
}

// The matmul `out` is (out itself) or, for an epilogue, reads: an element-wise compute
// over the matmul's shape with exactly one matmul (a one-axis sum) among its inputs.
inline Tensor matmul_of(const Tensor& out) {
  const auto* op = out.op().get();
  auto is_sum = [](const Tensor& t) { return t.op()->kind == OpKind::Compute && t.op()->reduce_axis.size() == 1; };
  if (is_sum(out)) return out;
  if (op->kind != OpKind::Compute || out.ndim() != 2)
    fail("'" + op->name + "' is neither a matmul nor a 2-D element-wise compute of one (an epilogue)");
  Tensor found;
  for (const auto& input : op->inputs) {
    Tensor t(input);
    if (!is_sum(t)) continue;
    if (found.defined())
      fail("epilogue '" + op->name + "' reads two reductions, '" + found.name() + "' and '" + t.name() +
           "'; it applies to one matmul");
    found = t;
  }
  if (!found.defined()) fail("epilogue '" + op->name + "' reads no matmul");
  for (int d = 0; d < 2; ++d)
    if (!equal(out.shape()[d], found.shape()[d]))
      fail("epilogue '" + op->name + "' is " + to_string(out.shape()[0]) + " x " + to_string(out.shape()[1]) +
           " but its matmul '" + found.name() + "' is " + to_string(found.shape()[0]) + " x " +
           to_string(found.shape()[1]) + "; an epilogue maps each element of C to one of its own");
  // The block's threads read C's tile of the block's own (i, j): any other element of C
  // is not there.
  struct ReadsElsewhere : IRVisitor {
    const OperationNode* matmul;
    const OperationNode* epilogue;
    std::string read;
    void visit_tensor_read(const TensorReadNode* n) override {
      if (n->op.get() == matmul && read.empty() &&
          !(n->indices[0].same_as(Expr(epilogue->axis[0])) && n->indices[1].same_as(Expr(epilogue->axis[1]))))
        read = matmul->name + "(" + to_string(n->indices[0]) + ", " + to_string(n->indices[1]) + ")";
      IRVisitor::visit_tensor_read(n);
    }
  } reads;
  reads.matmul = found.op().get();
  reads.epilogue = op;
  reads.visit(op->body);
  if (!reads.read.empty())
    fail("epilogue '" + op->name + "' reads " + reads.read + ", not " + found.name() + "(" + op->axis[0].name() + ", " +
         op->axis[1].name() + "): an epilogue reads C at its own element, which the block computed");
  return found;
}

// Splits T into block_m x block_n tiles over the blocks: blockIdx.y and .x, or (persistent)
// a loop over the tiles inside each of persistent_blocks blocks along x. Returns the loop
// a tile's stages are computed at and its rows and columns within the tile.
struct Tiles {
  IterVar tile, rows, cols;
};
inline Tiles split_tiles(Schedule& s, const Tensor& T, const MatmulWgmmaOptions& o) {
  // A last tile past M or N starts earlier instead, overlapping the one before: the
  // TMA boxes and wgmmas stay whole, and the rows or columns both compute are stored
  // twice with the same values.
  auto [by, rows] = s[T].split(T.axis(0), o.block_m, TailStrategy::ShiftInwards);
  auto [bx, cols] = s[T].split(T.axis(1), o.block_n, TailStrategy::ShiftInwards);
  s[T].reorder({by, bx, rows, cols});
  if (o.persistent_blocks == 0) {
    s[T].bind(by, thread_axis("blockIdx.y"));
    s[T].bind(bx, thread_axis("blockIdx.x"));
    return {bx, rows, cols};
  }
  auto [loop, block] = s[T].split(s[T].fuse(by, bx), o.persistent_blocks);
  s[T].reorder({block, loop, rows, cols});
  s[T].bind(block, thread_axis("blockIdx.x"));
  return {loop, rows, cols};
}

// An epilogue over the block's tile of C in shared memory: each thread a 16-byte vector
// of `out` at a time, over threadIdx.x (128) and threadIdx.y (the warpgroups).
inline void schedule_epilogue(Schedule& s, const Tensor& out, const MatmulWgmmaOptions& o, IterVar* bx) {
  auto [x, yi, xi] = split_tiles(s, out, o);
  auto [rest, lanes] = s[out].split(s[out].fuse(yi, xi), 16 / out.dtype().bytes());
  auto [pass, thread] = s[out].split(rest, int64_t{128} * (o.block_m / 64));
  auto [group, place] = s[out].split(thread, 128);
  s[out].bind(group, thread_axis("threadIdx.y"));
  s[out].bind(place, thread_axis("threadIdx.x"));
  s[out].vectorize(lanes);
  (void)pass;
  *bx = x;
}

}  // namespace matmul_wgmma_detail

/// The options measured fastest for an M x N C on an H200 (bench/README.md, 2026-11-29,
/// bf16: 1.06-1.10x cuBLAS at 8192, 0.95x at 4096), as far as C's shape allows them:
/// two consumer warpgroups (one when M < 128) of 64 x 256 wgmmas (N's multiple of 16 when
/// N < 256), warp-specialized, 3 stages (2 for a 256-wide epilogue, whose float32 tile of
/// C shares the 227 KiB), and a persistent grid of the largest divisor of the tile count
/// up to `multiprocessors` (132: an H100 or H200 SXM), or a block per tile when that
/// divisor would leave more than half of them idle.
inline MatmulWgmmaOptions fastest_wgmma_options(int64_t M, int64_t N, bool epilogue = false,
                                                int multiprocessors = 132) {
  MatmulWgmmaOptions o;
  o.block_m = M >= 128 ? 128 : 64;
  o.block_n = N >= 256 ? 256 : static_cast<int>(std::max<int64_t>(16, N / 16 * 16));
  o.warp_specialized = true;
  o.stages = epilogue && o.block_n > 192 ? 2 : 3;
  const int64_t tiles = matmul_wgmma_detail::c_tile_count(M, N, o);
  const int64_t blocks = matmul_wgmma_detail::largest_divisor_at_most(tiles, multiprocessors);
  o.persistent_blocks = 2 * blocks >= std::min<int64_t>(tiles, multiprocessors) ? static_cast<int>(blocks) : 0;
  return o;
}

/// The reference warpgroup-MMA schedule of matmul's output C, or of an epilogue `out`
/// reading it (see the file comment), with the tiles of `o`.
inline void schedule_matmul_wgmma_cuda(Schedule& s, const Tensor& out, const MatmulWgmmaOptions& o) {
  namespace d = matmul_wgmma_detail;
  const Tensor C = d::matmul_of(out);
  const bool epilogue = !C.same_as(out);
  const auto [A, B, M, N, K, b_transposed] = matmul_operands(C, "schedule_matmul_wgmma_cuda");
  const DataType t = A.dtype();
  if (t != Float(16) && t != BFloat(16))
    d::fail("wgmma multiplies float16 or bfloat16 matrices; A and B are " + t.to_string());
  d::check(o, M, N, K, epilogue, b_transposed);

  // B's tiles: [K][N] as B lies (MN-major), or K-major [N][K]: linear()'s B as it lies,
  // else matmul()'s transposed by the threads.
  const bool kn = o.b_mn_major && !b_transposed;
  Tensor AS = s.cache_read(A, "shared", {C});
  Tensor BS = kn || b_transposed ? s.cache_read(B, "shared", {C}) : s.cache_read(B, "shared", {C}, {1, 0});
  Tensor CF = s.cache_write(C, "warpgroup");

  // C: a warpgroup per 64 rows of a block_m x block_n block, its 64 x block_n accumulators
  // stored at once: into the output's blocks, or into a shared tile the epilogue reads.
  IterVar yi;
  if (epilogue) {
    IterVar bx;
    d::schedule_epilogue(s, out, o, &bx);
    s[C].set_scope("shared");
    s[C].compute_at(s[out], bx);
    yi = C.axis(0);
  } else {
    yi = d::split_tiles(s, C, o).rows;
  }
  auto [wg, y64] = s[C].split(yi, 64);
  s[C].bind(wg, thread_axis("threadIdx.y"));
  s[C].tensorize(y64, intrinsics::cuda_wgmma_store_f32(o.block_n));

  // The warpgroup's accumulators: k in shared tiles of tile_k, those in steps of 16.
  s[CF].compute_at(s[C], wg);
  // K's last tile is whole too (TailStrategy::GuardWholeTiles): its TMA copies fill the
  // columns of A and rows of B past K with zeros, which the wgmmas multiply.
  auto [ko, ki] = s[CF].split(s[CF].op()->reduce_axis[0], o.tile_k, TailStrategy::GuardWholeTiles);
  auto [kk, k16] = s[CF].split(ki, 16);
  s[CF].reorder({ko, kk, CF.axis(0), CF.axis(1), k16});
  s[CF].unroll(kk);
  if (o.a_from_registers) {  // the warpgroup's 64 x tile_k slice of A's tile, 16 columns a fragment
    Tensor AF = s.cache_read(AS, "warpgroup", {CF});
    s[AF].compute_at(s[CF], ko);
    auto [fragment, column] = s[AF].split(AF.axis(1), 16);
    s[AF].reorder({fragment, AF.axis(0), column});
    s[AF].unroll(fragment);
    s[AF].tensorize(AF.axis(0), intrinsics::cuda_wgmma_load_a(t));
    s[CF].tensorize(CF.axis(0), kn ? intrinsics::cuda_wgmma_m64nNk16_rs_kn(t, o.block_n)
                                   : intrinsics::cuda_wgmma_m64nNk16_rs(t, o.block_n));
  } else {
    s[CF].tensorize(CF.axis(0), kn ? intrinsics::cuda_wgmma_m64nNk16_kn(t, o.block_n)
                                   : intrinsics::cuda_wgmma_m64nNk16(t, o.block_n));
  }

  s[AS].compute_at(s[CF], ko);
  s[BS].compute_at(s[CF], ko);
  d::fill_shared(s, AS, o, o.block_m, o.tile_k, o.tile_k * 2, false);
  if (kn)
    d::fill_shared(s, BS, o, o.tile_k, o.block_n, d::mn_major_swizzle(o.block_n), false);
  else
    d::fill_shared(s, BS, o, o.block_n, o.tile_k, o.tile_k * 2, !b_transposed);
  if (o.warp_specialized) {
    s[AS].warp_specialize();  // WarpSpecialization::balanced for its block_m / 64 consumers
    s[BS].warp_specialize();
  }
}

/// schedule_matmul_wgmma_cuda() with fastest_wgmma_options() for C's shape (and the
/// epilogue, if `out` is one): warp-specialized 128 x 256 tiles on a persistent grid
/// where C is that large. MatmulWgmmaOptions{} is the plain form instead (128 x 128,
/// every warpgroup a consumer, a block per tile).
inline void schedule_matmul_wgmma_cuda(Schedule& s, const Tensor& out) {
  const Tensor C = matmul_wgmma_detail::matmul_of(out);
  const MatmulOperands operands = matmul_operands(C, "schedule_matmul_wgmma_cuda");
  schedule_matmul_wgmma_cuda(s, out, fastest_wgmma_options(operands.M, operands.N, !C.same_as(out)));
}

}  // namespace te::ops
