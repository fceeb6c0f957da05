// CPU: a convolution window computed by winograd_1d, scheduled whole. The generic rules
// would tile the products at the root (C2D: 10 MB of them, written and read back) and
// compute the output transform a point at a time, every tile position's formula
// evaluated and one selected. Here the output transform runs over the rows (parallel),
// each tile's m outputs unrolled over vectors of channels (x % m then a constant), and a
// row's products are computed at that row in register tiles, rows of tiles by vectors of
// channels, the other reduction axes inside (short ones unrolled): 93 KB per row for
// C2D, read back from the L2. On a Zen 5, one thread, C2D's 7x7 stride-2 window as
// F(4, 4) + F(4, 3): 0.7 ms against the direct sum's 1.0 ms.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "auto_schedule/rules.h"
#include "te/ir.h"

namespace te::auto_sched {

namespace {

// The axis x of `output` that it reads the products at x / m along (the tile), and that
// dimension of the products; {-1, -1} when there is none.
std::pair<int, int> tile_axes(const Context& cx, const OperationNode* output, const OperationNode* product, int64_t m) {
  for (const Read& r : cx.g.effective_reads(output)) {
    if (r.op != product) continue;
    for (size_t p = 0; p < r.indices.size(); ++p) {
      const auto* div = r.indices[p].as<BinaryNode>();
      const int64_t* by = div && div->op == BinOp::Div ? as_const_int(div->b) : nullptr;
      const auto* x = div ? div->a.as<VarNode>() : nullptr;
      if (!by || *by != m || !x) continue;
      for (size_t d = 0; d < output->axis.size(); ++d)
        if (output->axis[d].var().get() == x) return {static_cast<int>(d), static_cast<int>(p)};
    }
  }
  return {-1, -1};
}

// Steps of the other reduction axes beyond which a row's tiles go outside its points.
constexpr int64_t kManySteps = 64;

}  // namespace

void schedule_winograd_1d_cpu(Context& cx, const Winograd1dStages& w) {
  const OperationNode* op = w.output;
  const auto [x, product_tile] = tile_axes(cx, op, w.product, w.outputs);
  const size_t v = op->axis.size() - 1;
  TE_ICHECK(x >= 0 && static_cast<size_t>(x) != v, "winograd_1d's output transform reads no tile");
  const int lanes = cx.cpu.lanes(op->dtype);

  // The output transform: [the other axes] t, channel block, i (unrolled), channels (vectors).
  Stage out = cx.stage(op);
  const std::vector<IterVar> oax = op->axis;
  const int64_t channels = const_extent(oax[v]);
  // The register tile's columns: the whole row of channels up to 4 vectors (the search
  // may take fewer vectors, and more rows).
  const int rule_vectors = static_cast<int>(channels > 0 && channels <= 4 * lanes ? (channels + lanes - 1) / lanes : 4);
  std::vector<int64_t> vector_options;
  for (int64_t n : {1, 2, 4})
    if (n <= rule_vectors) vector_options.push_back(n);
  const int vectors = static_cast<int>(cx.choose(w.product, "tile_vectors", rule_vectors, vector_options));
  const int64_t block = vectors == rule_vectors && channels > 0 && channels <= 4 * lanes ? channels : vectors * lanes;
  auto [t, i] = out.split(oax[static_cast<size_t>(x)], w.outputs);
  // One vector of channels at a time: the tile's points (17 for C2D) stay in registers
  // across its m outputs, where a block of 4 vectors would hold 4 times as many.
  const int64_t out_block = channels > 0 && channels < lanes ? channels : lanes;
  auto [cb, c] =
      out.split(oax[v], out_block,
                channels > out_block && channels % out_block ? TailStrategy::ShiftInwards : TailStrategy::GuardWithIf);
  std::vector<IterVar> rows, order;
  for (size_t d = 0; d < v; ++d)
    if (static_cast<int>(d) != x) rows.push_back(oax[d]);
  order = rows;
  for (const IterVar& iv : {t, cb, i, c}) order.push_back(iv);
  out.reorder(order);
  out.unroll(i);
  out.vectorize(c);
  IterVar row = rows.empty() ? t : fuse_range(out, rows);
  if (!rows.empty() && cx.cpu.threads > 1) out.parallel(row);

  // The products of a row, at the row: register tiles of mr tiles x the channel block.
  Tensor product(cx.g.at(w.product).op, 0);
  Tensor local = cx.s.cache_write(product, "local");
  Stage ps = cx.s[product];
  ps.compute_at(out, row);
  const std::vector<IterVar> pax = ps->op->axis;
  const size_t pv = pax.size() - 1;
  const size_t pt = static_cast<size_t>(product_tile);
  const int64_t tiles = const_extent(pax[pt]);
  const int64_t rule_rows = std::max<int64_t>(1, std::min<int64_t>(cx.cpu.accumulators() / vectors, tiles));
  std::vector<int64_t> row_options;
  for (int64_t r : {1, 2, 3, 4, 6, 8})
    if (r <= tiles && r * vectors <= cx.cpu.accumulators()) row_options.push_back(r);
  const int64_t mr = cx.choose(w.product, "tile_rows", std::min<int64_t>(rule_rows, 4), row_options);
  auto [pcb, pc] = ps.split(
      pax[pv], block, channels > block && channels % block ? TailStrategy::ShiftInwards : TailStrategy::GuardWithIf);
  auto [to, ti] = ps.split(pax[pt], mr);
  // ν outermost: a point's weights (steps x the block) stay in the L1 across the row's
  // tiles. Where the other reduction axes sum many steps (7 taps x 12 channels: 21 KB of
  // weights per point), the tiles go outside ν instead, and a tile's input rows stay in
  // the L1 across its points (C3D's 7x7x3, 147 steps: 1.08x faster than the points
  // outside on a Zen 5).
  int64_t steps = 1;
  for (const IterVar& k : w.product->reduce_axis) steps *= const_extent(k);
  const bool tiles_outside = cx.choose(w.product, "tiles_outside", steps > kManySteps ? 1 : 0, {0, 1}) == 1;
  std::vector<IterVar> porder;
  IterVar attach = to;  // where the register tile is computed: its tile and point fixed
  if (tiles_outside) {
    porder = {pcb, to};
    for (size_t d = 0; d < pv; ++d)
      if (d != pt) porder.push_back(pax[d]), attach = pax[d];
    porder.push_back(ti);
    porder.push_back(pc);
  } else {
    for (size_t d = 0; d < pv; ++d)
      if (d != pt) porder.push_back(pax[d]);
    for (const IterVar& iv : {pcb, to, ti, pc}) porder.push_back(iv);
  }
  ps.reorder(porder);
  ps.vectorize(pc);

  Stage ls = cx.s[local];
  ls.compute_at(ps, attach);
  const std::vector<IterVar> lax = ls->op->axis, kax = ls->op->reduce_axis;
  std::vector<IterVar> lorder;
  for (size_t d = 0; d < pv; ++d)
    if (d != pt) lorder.push_back(lax[d]);
  lorder.insert(lorder.end(), kax.begin(), kax.end());
  lorder.push_back(lax[pt]);
  lorder.push_back(lax[pv]);
  ls.reorder(lorder);
  int64_t unrolled = mr * vectors;
  for (size_t k = kax.size(); k-- > 0;) {
    const int64_t e = const_extent(kax[k]);
    if (e <= 1 || e > 7 || unrolled * e > kUnrolledFmas) break;
    ls.unroll(kax[k]);
    unrolled *= e;
  }
  ls.unroll(lax[pt]);
  ls.vectorize(lax[pv]);
  // The input transform: the axes outside the tiles in parallel, ν a vector whole (its
  // coefficients then constant vectors; cut into pieces of a vector, they would be
  // selected lane by lane on every call).
  Stage in = cx.stage(w.input);
  const std::vector<IterVar> iax = w.input->axis;
  std::vector<IterVar> outer(iax.begin(), iax.begin() + std::max(1, w.input_tile_dim));
  IterVar items = fuse_range(in, outer);
  if (cx.cpu.threads > 1) in.parallel(items);
  in.vectorize(iax.back());

  cx.note(
      fmt::format("'{}': rows {} in parallel, {} outputs per tile unrolled over vectors of channels; '{}' at each row, "
                  "register tile {} x {} ('{}' x '{}'), {}",
                  op->name, axis_names(rows), w.outputs, product.name(), mr, block, pax[pt].name(), pax[pv].name(),
                  tiles_outside ? "the tiles outside the points" : "the points outside the tiles"));
}

}  // namespace te::auto_sched
