// Rule (CPU): layouts. An NCHW convolution's output rows are short for the vectors (26
// pixels: 16 + 8 + 2 lanes, half of them idle in the last two pieces), while its output
// channels are many. Computed with the channels innermost (NHWC: cache_write with a
// storage order) and its OIHW weights read packed as IHWO (cache_read with a storage
// order), the register tile's vectors run along the channels, whole, and its rows along
// the pixels, as for a convolution written in NHWC; the result is copied back to NCHW.
// Long rows go the same way when the input is read along them through a window (a
// convolution's w * stride + kw): the vectors of pixels otherwise load the input once
// per tap and broadcast a weight per channel, 10 loads per 16 FMAs, and round the rows
// up to whole tiles (C2D's and DIL's 112 and 109 pixels: 1.12-1.18x faster channels
// innermost on a Zen 5). A matrix product's rows (read plainly) stay as they are.
// Packing costs a pass over the weights per call, so it is done only where the weights
// are small next to the arithmetic (a 3x3 convolution's, not a transposed one's 8 MB),
// unless the weights are constant (AutoScheduleOptions::constant_inputs): then the
// function takes them packed (Schedule::pretransform), and the caller packs them once.
// Constant weights whose last dimension is the output's innermost axis (channels
// innermost already, or moved there) are also blocked by the register tile's columns
// where that axis is longer than one tile (weight_column_block).
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "auto_schedule/rules.h"
#include "expr/analysis.h"

namespace te::auto_sched {

bool is_constant(const OperationNode* op, const std::vector<Tensor>& constants) {
  for (const Tensor& t : constants)
    if (t.op().get() == op) return true;
  return false;
}

namespace {

struct Plan {
  size_t channel = 0;  // the output axis that goes innermost
  const TensorReadNode* weights = nullptr;
  size_t weight_dim = 0;  // the weights' dimension the channel indexes
};

// The sum of op when the layout rules may lay it out: one float output of 2 or more
// axes, a reduction that is neither a scatter nor a row statistic; else nullptr.
const ReduceNode* layout_candidate(const OperationNode& op) {
  const auto* red = op.body.as<ReduceNode>();
  if (!red || op.num_outputs() != 1 || op.is_scatter() || op.is_row_reduction() || !op.dtype.is_float() ||
      op.axis.size() < 2)
    return nullptr;
  return red;
}

std::optional<Plan> plan_layout(const OperationNode& op, const CpuTarget& cpu, const std::vector<Tensor>& constants) {
  const ReduceNode* red = layout_candidate(op);
  if (!red) return std::nullopt;
  const int64_t lanes = cpu.lanes(op.dtype);
  const int64_t row = const_extent(op.axis.back());
  if (lanes < 4 || row <= 0) return std::nullopt;
  if ((row % lanes == 0 || row >= 4 * lanes) && !reads_window_along(reads_in(red->source()), op, op.axis.back()))
    return std::nullopt;
  const int64_t macs = const_evaluations(op);
  if (macs <= 0) return std::nullopt;
  std::optional<Plan> best;
  int64_t best_extent = 0;
  for (size_t d = 0; d + 1 < op.axis.size(); ++d) {
    const IterVar& c = op.axis[d];
    const int64_t extent = const_extent(c);
    if (extent < lanes || extent % lanes != 0 || extent <= best_extent) continue;
    // One read of a small input indexes the channel plainly; every other read is the
    // same across a vector of channels (a grouped convolution's (c / 32) * 16 + i).
    Plan p;
    p.channel = d;
    bool ok = true;
    for (const TensorReadNode* r : tensor_reads(red->source())) {
      std::vector<size_t> dims;
      for (size_t k = 0; k < r->indices.size(); ++k)
        if (uses_var(r->indices[k], c.var().get())) dims.push_back(k);
      if (dims.empty()) continue;
      bool coarse = true;
      for (size_t k : dims) coarse = coarse && !varies_within_rows(r->indices[k], c, lanes);
      if (coarse) continue;
      const auto* v = r->indices[dims[0]].as<VarNode>();
      const int64_t size = const_elements(r->op->shape);
      // Weights whose last dimension is the channel are read as they are; others are packed.
      const bool packed_already = dims[0] + 1 == r->indices.size();
      ok = ok && !p.weights && dims.size() == 1 && v == c.var().get() && r->op->kind == OpKind::Placeholder &&
           (packed_already || is_constant(r->op.get(), constants) ||
            (size > 0 && size * kEvaluationsPerCopiedElement <= macs));
      p.weights = r;
      p.weight_dim = dims[0];
    }
    if (ok && p.weights) {
      best = p;
      best_extent = extent;
    }
  }
  return best;
}

// 0, 1, ..., n - 1 with `last` moved to the end.
std::vector<int> moved_last(size_t n, size_t last) {
  std::vector<int> order;
  for (size_t d = 0; d < n; ++d)
    if (d != last) order.push_back(static_cast<int>(d));
  order.push_back(static_cast<int>(last));
  return order;
}

// The packed weights' order: the channel last, the other dimensions by extent, smallest
// outermost (OIHW as HWIO, a transposed convolution's (in, out, kh, kw) as (kh, kw, in,
// out): TVM's NHWC weights), so that each kernel tap's rows run contiguously over the
// input channels.
std::vector<int> weight_order(const std::vector<Expr>& shape, size_t channel) {
  std::vector<int> order;
  for (size_t d = 0; d < shape.size(); ++d)
    if (d != channel) order.push_back(static_cast<int>(d));
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return const_value(shape[static_cast<size_t>(a)]) < const_value(shape[static_cast<size_t>(b)]);
  });
  order.push_back(static_cast<int>(channel));
  return order;
}

// The block of constant weights' columns (their last dimension, the output's innermost
// axis, `row` long): 4 vectors, the widest register tile (cpu_tiling keeps its tiles to
// widths that divide it: 1, 2 or 4 vectors, so that no tile straddles two blocks), where
// the row is a whole number of blocks longer than one; else 0. Taken blocked
// ([row / block][...][block]), each tile's weights are one contiguous panel: a 3x3
// convolution's 256 output channels as HWIO are rows of 1 KB, of which a tile reads 128
// bytes, the 9 taps' rows 256 KB apart (the same cache sets).
int64_t weight_column_block(int64_t row, int64_t lanes) {
  const int64_t block = 4 * lanes;
  return row > block && row % block == 0 ? block : 0;
}

// A constant input that the reduction `op` reads with its innermost axis as the last
// index (and nowhere else), and with some other axis of op not at all (reused across
// it): a convolution's HWIO weights in NHWC. The last of them, or nullptr.
const TensorReadNode* blockable_weights(const OperationNode& op, const std::vector<Tensor>& constants) {
  const ReduceNode* red = layout_candidate(op);
  if (!red) return nullptr;
  const VarNode* inner = op.axis.back().var().get();
  const TensorReadNode* found = nullptr;
  for (const TensorReadNode* r : tensor_reads(red->source())) {
    if (r->op->kind != OpKind::Placeholder || !is_constant(r->op.get(), constants) || r->indices.empty()) continue;
    const auto* last = r->indices.back().as<VarNode>();
    bool elsewhere = false, reused = false;
    for (size_t k = 0; k + 1 < r->indices.size(); ++k) elsewhere = elsewhere || uses_var(r->indices[k], inner);
    for (size_t d = 0; d + 1 < op.axis.size(); ++d) {
      bool used = false;
      for (const Expr& i : r->indices) used = used || uses_var(i, op.axis[d].var().get());
      reused = reused || (!used && const_extent(op.axis[d]) > 1);
    }
    if (last == inner && !elsewhere && reused) found = r;
  }
  return found;
}

}  // namespace

bool moves_channels_innermost(const OperationNode& op, const CpuTarget& cpu, const std::vector<Tensor>& constants) {
  return plan_layout(op, cpu, constants).has_value();
}

std::vector<Tensor> choose_layouts(Schedule& s, const std::vector<Tensor>& outputs, const CpuTarget& cpu,
                                   const std::vector<Tensor>& constants, std::vector<std::string>& notes,
                                   std::set<const OperationNode*>& kept) {
  for (const Stage& st : s.stages()) {
    const Operation op = st.op();
    if (op->kind != OpKind::Compute || !st->relations.empty()) continue;
    const int64_t lanes = cpu.lanes(op->dtype);
    std::optional<Plan> plan = plan_layout(*op, cpu, constants);
    if (!plan) {
      // Already channels innermost: constant weights blocked by the register tile's columns.
      const TensorReadNode* w = blockable_weights(*op, constants);
      const int64_t block = w ? weight_column_block(const_extent(op->axis.back()), lanes) : 0;
      if (block == 0 || const_value(w->op->shape.back()) != const_extent(op->axis.back())) continue;
      Tensor weights(w->op, w->value_index);
      const size_t dims = w->indices.size();
      Tensor taken = s.pretransform(weights, moved_last(dims, dims - 1), block);  // their own order, blocked
      notes.push_back(fmt::format("{}: taking '{}' pretransformed as '{}' (blocks of {} columns)", op->name,
                                  weights.name(), taken.name(), block));
      continue;
    }
    Tensor weights(plan->weights->op, plan->weights->value_index), t(op, 0);
    const std::string channel = op->axis[plan->channel].name();
    std::string reading = fmt::format("reading '{}' as it is", weights.name());
    const std::vector<int> packing = weight_order(plan->weights->op->shape, plan->weight_dim);
    const bool as_is = plan->weight_dim + 1 == plan->weights->indices.size();
    const bool constant = is_constant(weights.op().get(), constants);
    int64_t block = weight_column_block(const_extent(op->axis[plan->channel]), lanes);
    if (const_value(plan->weights->op->shape[plan->weight_dim]) % std::max<int64_t>(block, 1) != 0) block = 0;
    if (constant && (!as_is || block > 0)) {
      Tensor taken = s.pretransform(weights, packing, block);
      reading = fmt::format("taking '{}' pretransformed as '{}'", weights.name(), taken.name());
    } else if (!as_is) {
      Tensor packed = s.cache_read(weights, "global", {t}, packing);
      kept.insert(packed.op().get());
      reading = fmt::format("reading '{}' packed as '{}'", weights.name(), packed.name());
    }
    Tensor inner = s.cache_write(t, "global", moved_last(op->axis.size(), plan->channel));
    notes.push_back(fmt::format("{}: computed as '{}' with '{}' innermost, {}, then copied back", op->name,
                                inner.name(), channel, reading));
  }
  return outputs_in(s, outputs);
}

}  // namespace te::auto_sched
