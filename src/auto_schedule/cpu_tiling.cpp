// CPU: multi-level tiling of a reduction with data reuse (matmul, batched matmul,
// convolutions). Of the output's axes, the innermost (v, contiguous) is split into
// vectors and the row axis r (one the vector reads do not depend on, so a loaded vector
// is reused once per row) into register rows:
//   outer stage:  [other axes] v.block  r.outer  v.panel | r.inner  v.inner (copy out)
//   inner stage (local, computed at v.panel):  [reductions]  r (unrolled)  v (vectorized)
// The inner stage is an mr x nr tile of accumulators that stays in vector registers
// while the reduction runs (mr x nr / lanes of them, within the register budget).
// Columns are blocked so the panel of the reused input that one block reads stays in
// half the L2 while every row tile passes over it. Small reduction axes (a 3x3 window)
// are unrolled. The outer loops are fused into one parallel loop. The block of that
// reused input (a matmul's B: K rows of the block's columns, rows a whole matrix row
// apart) is copied into a contiguous buffer at the block loop: the tile's k steps then
// walk a few pages instead of one page per row (sgemm 1024: 0.65x -> 1.0x te's hand
// schedule, which packs B the same way).
#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "auto_schedule/rules.h"
#include "lower/vector_pieces.h"
#include "te/ir.h"
#include "te/simplify.h"

namespace te::auto_sched {

namespace {

// A tile size near `want` for an axis of this extent: the extent itself when smaller,
// else a divisor of it in [want/2, want] when there is one (no tail), else want.
int64_t tile_size(int64_t want, int64_t extent) {
  if (extent < 0) return want;
  if (extent <= want) return extent;
  for (int64_t t = want; t * 2 >= want; --t)
    if (extent % t == 0) return t;
  return want;
}

// The vector registers a row of nr columns holds: each piece the vectorize pass cuts it
// into takes its lanes' worth of registers (28 lanes of 16: 16 + 8 + 4, three, where
// counting two vectors would let the tile's accumulators spill).
int registers_per_row(int64_t nr, int lanes) {
  int64_t n = 0;
  for (int64_t piece : power_of_two_parts(nr)) n += (piece + lanes - 1) / lanes;
  return static_cast<int>(std::max<int64_t>(n, 1));
}

// The rows of a tile over axis x, out of `options`, that keep each read that varies with
// x only coarsely (in aligned runs of kRowProbe) the same within a tile.
constexpr int64_t kRowProbe = 4;
std::vector<int64_t> aligned_row_counts(const std::vector<Read>& reads, const IterVar& x,
                                        const std::vector<int64_t>& options) {
  std::vector<int64_t> kept;
  for (int64_t m : options) {
    bool ok = true;
    for (const Read& rd : reads)
      for (const Expr& i : rd.indices)
        ok = ok && !(uses_var(i, x.var().get()) && !varies_within_rows(i, x, kRowProbe) && varies_within_rows(i, x, m));
    if (ok) kept.push_back(m);
  }
  return kept;
}

// A direct read of red (an input or a stage at the root) that every row tile of a column
// block reuses: it does not depend on the row axis r, and its last index walks the
// columns v. Null when there is none.
const OperationNode* reused_panel_input(const Context& cx, const OperationNode* red, int r, size_t v) {
  if (r < 0) return nullptr;
  for (const Read& rd : cx.g.at(red).reads) {
    if (rd.indices.empty() || !uses_var(rd.indices.back(), red->axis[v].var().get())) continue;
    bool row = false;
    for (const Expr& i : rd.indices) row = row || uses_var(i, red->axis[static_cast<size_t>(r)].var());
    if (row) continue;
    const Node& producer = cx.g.at(rd.op);
    if (producer.is_compute() && (cx.g.inlined.count(rd.op) || cx.place.at(rd.op).kind != Placement::Kind::Root))
      continue;
    return rd.op;
  }
  return nullptr;
}

// Two short output axes that slide windows over the reduction (a weight gradient's
// kernel taps: x(n, c, y + kh, x + kw) with y, x reduced), together few enough points for
// the register tile: their points as the tile's rows. Their loads overlap from one
// reduction step to the next (the rows y + kh of one step are those of the next steps),
// so they stay in L1, where rows of another axis (the input channels) would each stream
// a plane of their own. {-1, -1} when there are none.
std::pair<int, int> window_row_pair(const Context& cx, const OperationNode* red, const std::vector<Read>& reads,
                                    size_t v, int vectors) {
  auto windowed = [&](size_t d) {
    const int64_t e = const_extent(red->axis[d]);
    return e >= 2 && e <= 8 && reads_window_along(reads, *red, red->axis[d]);
  };
  // Some read must be the same for every point of the pair (a weight gradient's output
  // gradient), or the rows reuse nothing (a transposed convolution's phases each read
  // their own weights).
  auto shared_by_points = [&](size_t d) {
    for (const Read& rd : reads) {
      bool uses = false;
      for (const Expr& i : rd.indices)
        uses = uses || uses_var(i, red->axis[d].var().get()) || uses_var(i, red->axis[d + 1].var().get());
      if (!uses) return true;
    }
    return false;
  };
  for (size_t d = 0; d + 1 < v; ++d) {
    if (!windowed(d) || !windowed(d + 1) || !shared_by_points(d)) continue;
    const int64_t points = const_extent(red->axis[d]) * const_extent(red->axis[d + 1]);
    const int64_t tile = points * vectors;
    if (tile * 2 >= cx.cpu.accumulators() && tile <= cx.cpu.accumulators())
      return {static_cast<int>(d), static_cast<int>(d + 1)};
  }
  return {-1, -1};
}

// The block of a read of weights that the layout rule takes blocked by columns
// (Schedule::pretransform with an inner block) and that this tile reads along `column`
// as their last index; 0 when none is.
int64_t column_block_of(const Schedule& s, const std::vector<Read>& reads, const IterVar& column) {
  for (const Pretransform& p : s.pretransforms())
    for (const Read& rd : reads)
      if (p.inner_block > 0 && rd.op == p.taken.op().get() && !rd.indices.empty() &&
          uses_var(rd.indices.back(), column.var().get()))
        return p.inner_block;
  return 0;
}

}  // namespace

void tile_reduction_cpu(Context& cx, Stage outer, Stage inner, const OperationNode* red,
                        const std::vector<const OperationNode*>& attached) {
  const size_t n = red->axis.size();
  const size_t v = n - 1;
  const int lanes = cx.cpu.lanes(red->dtype);
  std::vector<Read> reads = cx.g.effective_reads(red);

  // The row axis: the one that the most vector reads (those along v) do not depend on, so
  // that each loaded vector serves every row of the tile (a matmul's i, a convolution's
  // output channel rather than its output row); then the one the most reads do not
  // depend on; then one long enough for a tile of independent accumulators (a weight
  // gradient's 3-tap kernel rows would leave the FMAs waiting on each other); innermost
  // on ties.
  int r = -1;
  std::tuple<int, int, int> best{0, 0, 0};
  const int64_t enough_rows = cx.cpu.accumulators() / 2;
  for (size_t d = 0; d < v; ++d) {
    if (const_extent(red->axis[d]) == 1) continue;
    int vector_reuse = 0, missing = 0;
    for (const Read& rd : reads) {
      bool used = false, along_v = false;
      for (const Expr& i : rd.indices) {
        used = used || varies_within_rows(i, red->axis[d], kRowProbe);
        along_v = along_v || uses_var(i, red->axis[v].var().get());
      }
      missing += used ? 0 : 1;
      vector_reuse += (!used && along_v) ? 1 : 0;
    }
    const int64_t extent = const_extent(red->axis[d]);
    std::tuple<int, int, int> score{vector_reuse, missing, extent < 0 || extent >= enough_rows ? 1 : 0};
    if (missing > 0 && score >= best) r = static_cast<int>(d), best = score;
  }

  // Register tile: nv vectors wide, mr rows (the search may change both). A tile of nv
  // vectors covers min(nv * lanes, ve) columns: a short axis (a 56-wide image row) can be
  // one tile with no tail, whose columns would otherwise run as scalar code.
  const int64_t ve = const_extent(red->axis[v]);
  auto width = [&](int64_t vectors) { return ve >= 0 ? std::min<int64_t>(vectors * lanes, ve) : vectors * lanes; };
  int nv = (ve < 0 || ve >= 2 * lanes) ? 2 : 1;
  int64_t nr = ve >= 0 && ve < lanes ? ve : width(nv);
  if (ve >= 0 && ve % nr != 0 && nv == 2 && ve % lanes == 0) nr = lanes;  // no tail rather than a wide one
  nv = static_cast<int>((nr + lanes - 1) / lanes);
  if (ve >= 0 && ve <= 4 * lanes && ve > nr) {
    // The whole row: no tail (the vectorize pass cuts 28 lanes into 16 + 8 + 4); a tail
    // would run its columns as guarded scalar code (a 28-wide row: 12 of 28 columns). And
    // each value read the same across the columns (a convolution's input pixel, against
    // 64 output channels) is loaded once per tile, not once per half row: C3D 1.10-1.15x,
    // C2D 1.07-1.09x (NHWC, 64 channels, Xeon).
    nv = static_cast<int>((ve + lanes - 1) / lanes);
    nr = ve;
  }
  // Weights taken blocked by columns (the layout rule's pretransform): tiles as wide as
  // divide the block, so that each reads one block's contiguous rows.
  const int64_t block = column_block_of(cx.s, reads, red->axis[v]);
  auto fits_block = [&](int64_t vectors) { return block == 0 || block % (vectors * lanes) == 0; };
  if (ve < 0 || ve >= 2 * lanes) {
    // A short row axis (a transposed convolution's 4 coarse pixels per phase) would leave
    // accumulators idle at 2 vectors: the tile is as many vectors wide as fill them.
    const int64_t re = r >= 0 ? const_extent(red->axis[static_cast<size_t>(r)]) : -1;
    for (int w = nv + 1; re > 0 && w <= 4 && re * w <= cx.cpu.accumulators() && (ve < 0 || (w - 1) * lanes < ve); ++w)
      if (fits_block(w)) nv = w;
    std::vector<int64_t> counts;
    for (int64_t w = 1; w <= 4 && (ve < 0 || (w - 1) * lanes < ve); ++w)
      if (fits_block(w)) counts.push_back(w);
    nv = static_cast<int>(cx.choose(red, "tile_vectors", nv, counts));
    nr = width(nv);
  }
  // Kernel taps as the rows (see window_row_pair): both axes fused, all their points.
  const auto [w0, w1] = window_row_pair(cx, red, reads, v, nv);
  const bool taps = w0 >= 0;
  int64_t mr = 1;
  if (taps) {
    r = w0;
    mr = const_extent(red->axis[static_cast<size_t>(w0)]) * const_extent(red->axis[static_cast<size_t>(w1)]);
  } else if (r >= 0) {
    const int64_t re = const_extent(red->axis[static_cast<size_t>(r)]);
    mr = tile_size(std::max(1, cx.cpu.accumulators() / registers_per_row(nr, lanes)), re);
    std::vector<int64_t> rows;
    for (int64_t m : {1, 2, 3, 4, 6, 8, 12, 16})
      if (re < 0 || m <= re) rows.push_back(m);
    const std::vector<int64_t> aligned = aligned_row_counts(reads, red->axis[static_cast<size_t>(r)], rows);
    if (aligned.size() < rows.size()) {
      rows = aligned;
      int64_t fit = rows.front();  // 1 always stays
      for (int64_t m : rows)
        if (m <= mr) fit = m;
      mr = fit;
    }
    mr = cx.choose(red, "tile_rows", mr, rows);
  }

  // Column blocks: the reused panel (reduction length x block) in half the L2.
  int64_t length = 1;
  for (const IterVar& k : red->reduce_axis) {
    int64_t e = const_extent(k);
    length *= e < 0 ? 256 : e;
  }
  const int64_t bytes = red->dtype.bytes();
  int64_t nc = std::max<int64_t>(nr, (cx.cpu.l2_bytes / 2) / std::max<int64_t>(1, length * bytes) / nr * nr);
  nc = std::min<int64_t>(nc, 512 / nr * nr > 0 ? 512 / nr * nr : nr);
  // The row's tiles in blocks of equal size: 4 tiles where 3 fit make two blocks of 2, not
  // one of 3 and a guarded one of 1 (a 128-channel 3x3 convolution on a 1 MB L2: 80
  // GFLOP/s as 3 + 1 tiles, 160-200 as 2 + 2).
  int64_t block_tiles = std::max<int64_t>(1, nc / nr);
  if (ve > 0) {
    const int64_t tiles = (ve + nr - 1) / nr, blocks = (tiles + block_tiles - 1) / block_tiles;
    block_tiles = (tiles + blocks - 1) / blocks;
  }
  std::vector<int64_t> panel_options;
  for (int64_t p : {1, 2, 4, 8, 16, 32, 64}) panel_options.push_back(p);
  const int64_t panels = cx.choose(red, "column_panels", block_tiles, panel_options);

  // Outer stage.
  const auto& oax = outer.op()->axis;
  // A last tile that would hang past the row's end shifts inwards instead, overlapping
  // the one before (its columns are computed twice, the same values stored twice): the
  // tile stays whole, where a guarded tail blends every accumulator update and stores
  // lane by lane (DIL NCHW's 109-wide rows in tiles of 32, one thread: 1.73 -> 1.47 ms).
  const auto tail = ve > nr && ve % nr != 0 ? TailStrategy::ShiftInwards : TailStrategy::GuardWithIf;
  auto [vo, vi] = outer.split(oax[v], nr, tail);
  IterVar ro, ri;
  auto is_row = [&](size_t d) { return static_cast<int>(d) == r || (taps && static_cast<int>(d) == w1); };
  if (taps)
    ri = outer.fuse(oax[static_cast<size_t>(w0)], oax[static_cast<size_t>(w1)]);
  else if (r >= 0)
    std::tie(ro, ri) = outer.split(oax[static_cast<size_t>(r)], mr);
  std::vector<IterVar> order, parallel_candidates;
  IterVar vb, vp = vo;
  bool blocked = ve < 0 || (ve + nr - 1) / nr > panels;
  if (blocked) std::tie(vb, vp) = outer.split(vo, panels);
  // The search may put the block loop outside the outer axes that no read along the
  // columns uses (a convolution's output rows, for its weights' block), as GEMM's loop
  // over A's rows goes inside its loop over B's panels: the block then stays in the L2
  // across them. The rules keep those axes outside (the decision's 0): on a Zen 5, a 3x3
  // convolution with 256 x 256 channels at 14 x 14 ran 0.8-0.86x as fast on two threads
  // with the blocks outside (parallel over 8 blocks, each thread reading the whole
  // input per block), 0.96-1.05x on one.
  auto reused_across = [&](size_t d) {
    for (const Read& rd : reads) {
      bool along_v = false, used = false;
      for (const Expr& i : rd.indices) {
        along_v = along_v || uses_var(i, red->axis[v].var().get());
        used = used || uses_var(i, red->axis[d].var().get());
      }
      if (along_v && used) return false;
    }
    return true;
  };
  bool any_reused = false;
  for (size_t d = 0; d < v; ++d)
    any_reused = any_reused || (!is_row(d) && const_extent(red->axis[d]) != 1 && reused_across(d));
  // (Asked whenever such an axis exists, blocked or not: the search may block the columns.)
  const bool blocks_outside = any_reused && cx.choose(red, "blocks_outside", 0, {0, 1}) == 1 && vb.defined();
  for (size_t d = 0; d < v; ++d)
    if (!is_row(d) && !(blocks_outside && reused_across(d))) order.push_back(oax[d]);
  if (vb.defined()) order.push_back(vb);
  for (size_t d = 0; d < v; ++d)
    if (!is_row(d) && blocks_outside && reused_across(d)) order.push_back(oax[d]);
  if (ro.defined()) order.push_back(ro);
  const size_t outer_loops = order.size();
  order.push_back(vp);
  if (ri.defined()) order.push_back(ri);
  order.push_back(vi);
  outer.reorder(order);
  if (nr > 1) outer.vectorize(vi);

  // Parallel: the outer loops, fused until there are a few work items per thread.
  std::vector<IterVar> fused;
  int64_t items = 1, last_extent = -1;
  const int64_t items_rule = cx.cpu.threads > 1 && long_window_over_padding(cx, red, reads) ? 8 : 4;
  const int64_t want = int64_t{cx.cpu.threads} * cx.choose(red, "items_per_thread", items_rule, {1, 2, 4, 8, 16});
  for (size_t i = 0; i < outer_loops && items < want; ++i) {
    fused.push_back(order[i]);
    int64_t e;
    if (order[i].same_as(vb)) {
      e = ve < 0 ? -1 : ((ve + nr - 1) / nr + panels - 1) / panels;
    } else if (order[i].same_as(ro)) {
      int64_t re = const_extent(red->axis[static_cast<size_t>(r)]);
      e = re < 0 ? -1 : (re + mr - 1) / mr;
    } else {
      e = const_extent(order[i]);
    }
    items = e < 0 ? want : items * e;
    last_extent = e;
  }
  // With stages computed per work item (a padding: the rows an item reads), the last
  // fused loop is cut into runs of consecutive iterations: an item of 7 output rows of a
  // 3x3 convolution pads 9 input rows, where items of one row would pad 3 each. The run
  // is the shortest of at least 1 / `want` of the loop that gives no thread more
  // iterations than the best split does (28 rows on two threads: runs of 7, four items,
  // not runs of 4, seven items, one thread doing four of them).
  if (!attached.empty() && !fused.empty() && last_extent > 0 && items > want) {
    const int64_t before = items / last_extent, threads = cx.cpu.threads;
    auto most_per_thread = [&](int64_t run) {
      const int64_t parts = before * ((last_extent + run - 1) / run);
      return std::min((parts + threads - 1) / threads * run, before * last_extent);
    };
    int64_t run = -1, fewest = 0;
    for (int64_t r = std::max<int64_t>(1, (items + want - 1) / want / before); r <= last_extent; ++r) {
      const int64_t most = most_per_thread(r);
      if (run < 0 || most < fewest) run = r, fewest = most;
    }
    if (run > 1) {
      auto [part, rest] = outer.split(fused.back(), run);
      if (fused.back().same_as(vb)) vb = rest;  // the block loop is the inner part now
      fused.back() = part;
    }
  }
  IterVar block_loop = vb;  // the column-block loop, or the parallel loop that ends with it
  IterVar work;             // the parallel loop (the outer loops fused)
  if (!fused.empty()) {
    work = fuse_range(outer, fused);
    if (cx.cpu.threads > 1) outer.parallel(work);
    const bool block_fused = std::any_of(fused.begin(), fused.end(), [&](const IterVar& x) { return x.same_as(vb); });
    if (block_fused) block_loop = fused.back().same_as(vb) ? work : IterVar();
  }

  for (const OperationNode* a : attached) schedule_attached_cpu(cx, a, outer, work.defined() ? work : order.front());

  // Inner stage: the register tile.
  inner.compute_at(outer, vp);
  const auto& iax = inner.op()->axis;
  const auto& kax = inner.op()->reduce_axis;
  IterVar inner_row = taps     ? inner.fuse(iax[static_cast<size_t>(w0)], iax[static_cast<size_t>(w1)])
                      : r >= 0 ? iax[static_cast<size_t>(r)]
                               : IterVar();
  std::vector<IterVar> iorder(kax.begin(), kax.end());
  for (size_t d = 0; d < v; ++d)
    if (!is_row(d)) iorder.push_back(iax[d]);
  if (inner_row.defined()) iorder.push_back(inner_row);
  iorder.push_back(iax[v]);
  inner.reorder(iorder);
  // Short inner reduction axes are unrolled (the kernel taps), innermost first, while the
  // unrolled body stays within kUnrolledFmas vector multiply-adds: a 7x7x3 window times
  // a 16-register tile is thousands of instructions, more than the CPU's decoded-uop
  // cache holds, and the loop would then run at the decoders' pace.
  int64_t unrolled = std::max<int64_t>(1, mr) * nv;
  for (size_t k = kax.size(); k-- > 1;) {
    const int64_t e = const_extent(kax[k]);
    if (e <= 1 || e > 7) continue;
    if (unrolled * e > kUnrolledFmas) break;
    inner.unroll(kax[k]);
    unrolled *= e;
  }
  if (inner_row.defined() && mr > 1) inner.unroll(inner_row);
  if (nr > 1) inner.vectorize(iax[v]);

  // The reused block, copied contiguously once per block (when several row tiles share it).
  const int64_t re = r >= 0 ? const_extent(red->axis[static_cast<size_t>(r)]) : -1;
  // Asked whenever such an input exists, blocked or not: the search may block the columns.
  const OperationNode* panel = taps ? nullptr : reused_panel_input(cx, red, r, v);
  // The copy pays where the block's rows lie a page or more apart in the input (a
  // 1024-wide matmul's B: each row on its own page, the rows aliasing in the L1's sets;
  // sgemm 1024 1.5x faster copied); rows closer than that stream from the L2 as they lie,
  // and the copy is a pass more (a 3x3 convolution's 128 x 128 weights, rows of 512
  // bytes: 1.2x slower copied).
  std::string copied;
  const int64_t row_elements = panel && !panel->shape.empty() ? const_value(panel->shape.back()) : -1;
  const bool far_rows = row_elements < 0 || row_elements * panel->dtype.bytes() >= 4096;
  if (panel && (re < 0 || re / mr >= 4) && cx.choose(red, "copy_block", far_rows ? 1 : 0, {0, 1}) == 1 &&
      block_loop.defined()) {
    Tensor in(cx.g.at(panel).op, 0);
    Tensor copy = cx.s.cache_read(in, "global", {Tensor(inner.op(), 0)});
    Stage cs = cx.s[copy];
    cs.compute_at(outer, block_loop);
    if (lanes > 1) {
      auto [co, ci] = cs.split(cs.leaf_iter_vars().back(), lanes, TailStrategy::ShiftInwards);
      (void)co;
      cs.vectorize(ci);
    }
    copied = fmt::format(", '{}' copied per block", in.name());
  }
  cx.note(
      fmt::format("'{}': register tile {} x {} ('{}' x '{}', {} vectors of {}), column blocks of {}{}, "
                  "{} over {}",
                  red->name, mr, nr,
                  taps     ? red->axis[static_cast<size_t>(w0)].name() + "," + red->axis[static_cast<size_t>(w1)].name()
                  : r >= 0 ? red->axis[static_cast<size_t>(r)].name()
                           : "-",
                  red->axis[v].name(), nv, lanes, panels * nr, copied, cx.cpu.threads > 1 ? "parallel" : "serial",
                  axis_names(fused)));
}

bool has_short_rows(const Context& cx, const OperationNode* op) {
  const int lanes = cx.cpu.lanes(op->dtype);
  const int64_t row = const_extent(op->axis.back());
  return lanes >= 4 && row >= 0 && row * 2 <= lanes;
}

bool tile_lane_partials_cpu(Context& cx, const OperationNode* op) {
  if (!has_short_rows(cx, op)) return false;
  const Tensor partials = vectorize_reduction(cx, op, false);
  if (!partials.defined()) return false;
  // The partials are a reduction of their own, with the lanes as their contiguous axis:
  // tiled over a graph of their own (the schedule is shared; the inlined stages stay so).
  Graph g(std::vector<Tensor>{partials});
  g.inlined = cx.g.inlined;
  Context sub{cx.s, g, cx.opts, cx.cpu, {}, {}, {}, {}, cx.choices};
  for (const Node* n : g.topo()) sub.place[n->op.get()] = Placement{};
  const Tensor local = cx.s.cache_write(partials, "local");
  tile_reduction_cpu(sub, cx.s[partials], cx.s[local], partials.op().get(), {});
  cx.notes.insert(cx.notes.end(), sub.notes.begin(), sub.notes.end());
  // The lanes' sum: one short pass over the (small) output.
  Stage sum = cx.stage(op);
  IterVar work = fuse_range(sum, sum.op()->axis);
  if (cx.cpu.threads > 1) sum.parallel(work);
  cx.note(fmt::format("'{}': rows of {} are shorter than half a vector: lanes along the reduction ('{}'), tiled",
                      op->name, const_extent(op->axis.back()), partials.name()));
  return true;
}

}  // namespace te::auto_sched
