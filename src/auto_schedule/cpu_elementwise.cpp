// CPU: an element-wise stage at the root, and the stages computed inside its loops.
// Loops: the axes the inner stages need fixed go outermost (each nested set in turn),
// then the others in their order, the innermost (contiguous) axis last, split into
// vectors whose last one shifts inwards rather than running a scalar tail; an axis the
// inner stages are reused across runs between the vectors and their lanes. A read
// that walks another axis contiguously (a transpose) makes that axis the innermost,
// split by the lanes and unrolled, inside a scalar loop over the last axis: each step
// loads one contiguous run of the read and stores lane by lane, where vectors along the
// last axis would gather every lane (a 128 x 784 transpose: 25 us against 46-78 us;
// 2048 x 2048 transpose + add + relu: 3.8 ms against 4.9 ms); a copy that only
// transposes goes by lanes x lanes blocks transposed in registers instead
// (intrinsics::transpose). The outer loops are fused into one parallel loop with a few
// work items per thread.
#include <fmt/format.h>

#include <algorithm>
#include <climits>

#include "auto_schedule/rules.h"
#include "te/tensorize.h"

namespace te::auto_sched {

namespace {

// Lanes for an axis of this extent: the host's, or the largest power of two that fits a
// smaller constant extent.
int lanes_for(int lanes, int64_t extent) {
  if (extent < 0 || extent >= lanes) return lanes;
  int l = 1;
  while (l * 2 <= extent) l *= 2;
  return l >= 4 ? l : 1;
}

// Per axis of op: where, in the axes of op's one consumer, the first axis its reads of op
// index that axis with sits (INT_MAX: none, or no single consumer).
std::vector<int> consumer_positions(const Graph& g, const OperationNode* op) {
  std::vector<int> pos(op->axis.size(), INT_MAX);
  std::vector<const OperationNode*> consumers = g.effective_consumers(op);
  if (consumers.size() != 1) return pos;
  const OperationNode* c = consumers[0];
  for (const Read& r : g.effective_reads(c)) {
    if (r.op != op || r.indices.size() != op->axis.size()) continue;
    for (size_t d = 0; d < r.indices.size(); ++d)
      for (size_t a = 0; a < c->axis.size(); ++a)
        if (uses_var(r.indices[d], c->axis[a].var().get())) {
          pos[d] = std::min(pos[d], static_cast<int>(a));
          break;
        }
  }
  return pos;
}

// The axis (other than v) that the last index of some read walks, or -1.
int transposed_axis(const Graph& g, const OperationNode* op, int v) {
  for (const Read& r : g.effective_reads(op)) {
    if (r.indices.empty() || uses_var(r.indices.back(), op->axis[static_cast<size_t>(v)].var())) continue;
    for (size_t d = 0; d < op->axis.size(); ++d)
      if (static_cast<int>(d) != v && uses_var(r.indices.back(), op->axis[d].var().get())) return static_cast<int>(d);
  }
  return -1;
}

// Whether op only copies a buffer of its type (a tensor not inlined), reading axis t's
// point as the last index and axis v's as another, each plainly (a transposing copy:
// NCHW from an NHWC result): the copy is then blocks of intrinsics::transpose.
bool is_plain_transpose(const Graph& g, const OperationNode* op, int v, int t) {
  const auto* r = op->body.as<TensorReadNode>();
  // (intrinsics::transpose takes scalars of 8 to 64 bits, not bool.)
  if (!r || r->dtype != op->dtype || op->dtype.is_bool() || op->num_outputs() != 1 || r->indices.empty() ||
      g.inlined.count(r->op.get()))
    return false;
  const VarNode* tv = op->axis[static_cast<size_t>(t)].var().get();
  const VarNode* vv = op->axis[static_cast<size_t>(v)].var().get();
  if (r->indices.back().as<VarNode>() != tv) return false;
  int v_reads = 0;
  for (size_t d = 0; d + 1 < r->indices.size(); ++d) {
    const Expr& i = r->indices[d];
    if (i.as<VarNode>() == vv)
      ++v_reads;
    else if (uses_var(i, tv) || uses_var(i, vv))
      return false;
  }
  return v_reads == 1;
}

}  // namespace

void schedule_elementwise_cpu(Context& cx, const OperationNode* op, const std::vector<const OperationNode*>& attached) {
  Stage st = cx.stage(op);
  const int n = static_cast<int>(op->axis.size());
  if (n == 0) return;  // a 0-d tensor: nothing to split; its producers stay at the root
  const int v = n - 1;
  const IterVar vax = op->axis[static_cast<size_t>(v)];

  // The nested sets of axes the attached stages need outside, smallest first; the vector
  // axis never counts (its loop stays innermost; an inner stage then covers a whole row).
  std::vector<std::vector<int>> sets;
  std::map<const OperationNode*, std::vector<int>> need;
  for (const OperationNode* a : attached) {
    std::vector<int> o = cx.place.at(a).outer;
    o.erase(std::remove(o.begin(), o.end(), v), o.end());
    need[a] = o;
    sets.push_back(o);
  }
  std::sort(sets.begin(), sets.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });

  // The order of the axes.
  std::vector<int> order;
  for (const auto& s : sets)
    for (int d : s)
      if (std::find(order.begin(), order.end(), d) == order.end()) order.push_back(d);
  // The others in the order of the consumer's axes that read them: the consumer's
  // parallel work items then read what the same thread wrote here (a thread's share of a
  // parallel loop is the same part of each loop's items). An NCHW pad read by a
  // convolution computed in NHWC goes row by row, not plane by plane (GRP NCHW, 2 threads:
  // 165 -> 130 us; plane by plane, each row's planes came from the other core's cache).
  const size_t needed = order.size();
  for (int d = 0; d < n; ++d)
    if (d != v && std::find(order.begin(), order.end(), d) == order.end()) order.push_back(d);
  const std::vector<int> position = consumer_positions(cx.g, op);
  std::stable_sort(order.begin() + static_cast<std::ptrdiff_t>(needed), order.end(),
                   [&](int a, int b) { return position[static_cast<size_t>(a)] < position[static_cast<size_t>(b)]; });

  // Vectors along v (a square tile of them when a read walks another axis).
  int lanes = lanes_for(cx.cpu.lanes(op->dtype), const_extent(vax));
  int t = attached.empty() && lanes > 1 ? transposed_axis(cx.g, op, v) : -1;
  if (t >= 0 && const_extent(op->axis[static_cast<size_t>(t)]) >= 0 &&
      const_extent(op->axis[static_cast<size_t>(t)]) < lanes)
    t = -1;
  std::vector<IterVar> leaves;
  std::vector<int64_t> extents;  // constant trip counts of the leaves (-1: symbolic)
  auto ceil_div = [](int64_t e, int f) { return e < 0 ? e : (e + f - 1) / f; };
  // An axis the inner stages do not depend on (they are reused across it: grid_sample's
  // channels) is blocked, the block loop outermost: the data one block reads (a few
  // planes) stays cached across the rows, at the price of computing the inner stages
  // once per block. (te's hand grid_sample schedule measured 2.5-3x from this.) The
  // loop over the block goes inside the loop over vectors: what one vector of points
  // reads from the inner stages (grid_sample's taps and weights) is loaded once and
  // reused from registers across the block (1.4x on grid_sample 1x256x200x200).
  int64_t block = 0;                  // asked for when an axis is blocked (the search may change it)
  size_t prefix = 0;                  // block loops put before the loops the inner stages need
  std::vector<IterVar> reused_loops;  // between the vector loop and the lanes
  std::vector<int> widest = sets.empty() ? std::vector<int>{} : sets.back();
  for (int d : order) {
    if (d == t) continue;
    const IterVar& ax = op->axis[static_cast<size_t>(d)];
    int64_t e = const_extent(ax);
    bool reused = !attached.empty() && std::find(widest.begin(), widest.end(), d) == widest.end();
    if (reused && block == 0) block = cx.choose(op, "reuse_block", 64, {8, 16, 32, 128, 256});
    if (reused && e > block) {
      auto [b, i] = st.split(ax, block, TailStrategy::ShiftInwards);
      leaves.insert(leaves.begin() + static_cast<std::ptrdiff_t>(prefix), b);
      extents.insert(extents.begin() + static_cast<std::ptrdiff_t>(prefix), ceil_div(e, block));
      ++prefix;
      reused_loops.push_back(i);
      continue;
    }
    if (reused) {
      reused_loops.push_back(ax);
      continue;
    }
    leaves.push_back(ax);
    extents.push_back(e);
  }
  IterVar t_inner;
  if (t >= 0) {
    auto [to, ti] = st.split(op->axis[static_cast<size_t>(t)], lanes, TailStrategy::ShiftInwards);
    leaves.push_back(to);
    extents.push_back(ceil_div(const_extent(op->axis[static_cast<size_t>(t)]), lanes));
    t_inner = ti;
  }
  // A plain transposing copy whose rows hold a vector goes by blocks of lanes x lanes,
  // each transposed in registers: 16x fewer loads and stores (the small NCHW
  // convolution's copy back: 1.06x on the whole kernel).
  const bool blocks = t >= 0 && const_extent(vax) >= lanes && is_plain_transpose(cx.g, op, v, t) &&
                      cx.choose(op, "transpose_blocks", 1, {0, 1}) == 1;
  IterVar vo = vax, vi;
  if (lanes > 1 && (t < 0 || blocks)) {
    auto [o, i] = st.split(vax, lanes, TailStrategy::ShiftInwards);
    vo = o, vi = i;
  }
  const size_t vo_pos = leaves.size();
  leaves.push_back(vo);
  extents.push_back(vi.defined() ? ceil_div(const_extent(vax), lanes) : const_extent(vax));
  leaves.insert(leaves.end(), reused_loops.begin(), reused_loops.end());
  if (t_inner.defined()) leaves.push_back(t_inner);
  if (vi.defined()) leaves.push_back(vi);
  st.reorder(leaves);
  if (blocks)
    st.tensorize(t_inner, intrinsics::transpose(op->dtype, lanes));
  else if (vi.defined())
    st.vectorize(vi);
  if (t_inner.defined() && !blocks) st.unroll(t_inner);

  // Parallel: fuse the outer loops (never past the loop an inner stage needs) until
  // there are a few work items per thread.
  size_t limit = vo_pos + 1;
  for (const auto& [a, o] : need) limit = std::min(limit, o.empty() ? vo_pos : prefix + o.size());
  size_t p = 0;
  int64_t items = 1;
  const int64_t want = int64_t{cx.cpu.threads} * cx.choose(op, "items_per_thread", 8, {1, 2, 4, 16, 32});
  while (p < limit && items < want) {
    items = extents[p] < 0 ? want : items * extents[p];
    ++p;
  }
  std::vector<IterVar> fused_loops(leaves.begin(), leaves.begin() + static_cast<std::ptrdiff_t>(p));
  IterVar work;
  if (!fused_loops.empty()) {
    work = fuse_range(st, fused_loops);
    if (cx.cpu.threads > 1) st.parallel(work);
  }
  cx.note(
      fmt::format("'{}': loops {}; {} over {}{}", op->name, axis_names(st.leaf_iter_vars()),
                  cx.cpu.threads > 1 ? "parallel" : "serial", axis_names(fused_loops),
                  blocks ? fmt::format(", blocks of {} x {} transposed in registers (a transposing read)", lanes, lanes)
                  : t_inner.defined() ? fmt::format(", '{}' unrolled by {} (a transposing read)", t_inner.name(), lanes)
                  : vi.defined()      ? fmt::format(", vectors of {} along '{}'", lanes, vax.name())
                                      : ""));

  // The inner stages, producers first, each at the loop that fixes its axes.
  for (const OperationNode* a : attached) {
    const std::vector<int>& o = need[a];
    IterVar loop;
    if (o.empty()) {
      loop = p > vo_pos ? work : vo;  // only the vector axis: a vector's worth of points at a time
    } else if (prefix + o.size() <= p) {
      loop = work;
    } else {
      loop = leaves[prefix + o.size() - 1];
    }
    schedule_attached_cpu(cx, a, st, loop);
  }
}

}  // namespace te::auto_sched
