// te::ops::attention recognised through the graph (ops::attention_stages_of) and
// scheduled whole with its own schedule. CPU (ops::schedule_attention_cpu): blocks of
// queries in parallel, the scores, exps and probabilities · v of a block of keys in
// registers and small buffers, one online-softmax step per block. CUDA
// (ops::schedule_attention_cuda, where it applies: 16-bit inputs in whole tiles): tensor
// cores, and split-K over the keys where too few thread blocks would fill the GPU. The
// generic rules would give each of its stages a loop nest (a kernel) of its own.
#include <fmt/format.h>

#include <optional>

#include "auto_schedule/rules.h"
#include "te/ops/attention_cpu.h"
#include "te/ops/attention_cuda.h"

namespace te::auto_sched {

namespace {

// The attention stages that end at op, or none.
std::optional<ops::AttentionStages> attention_at(const Context& cx, const OperationNode* op) {
  const Node& n = cx.g.at(op);
  if (!n.is_compute() || n.op->inputs.size() != 1 || !n.op->inputs[0]->is_row_reduction()) return std::nullopt;
  try {
    return ops::attention_stages_of(Tensor(n.op));
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::vector<Tensor> stages_of(const ops::AttentionStages& st) {
  std::vector<Tensor> stages{st.key_t, st.scores, st.block_max, st.probs, st.block_sum, st.block_pv, st.acc, st.out};
  if (st.queries.defined()) stages.push_back(st.queries);
  return stages;
}

// Thread blocks that fill an H100's 132 SMs about twice.
constexpr int64_t kEnoughBlocks = 256;

// CUDA: the tensor-core schedule's options for st, the preferred first (measured on an
// H200 at 4 x 32 x 4096 x 128, float16, bench/README.md's session 56):
// - on sm_90a, wgmma with a warpgroup per 64 queries, where the grid fills the GPU
//   without split-K: two warpgroups per block when not causal (4.83 ms against 5.70 for
//   mma.sync's best), one when causal (3.36 ms against 3.44);
// - mma.sync with 8 warps (128 queries per block) where the grid still fills the GPU,
//   not causal (5.70 ms against 5.99 with 4 warps: the block's keys and values copied once
//   for twice the queries); else the most warps (16 queries each) that tile the queries,
//   with split-K over the keys, in parts that divide the blocks of keys, while the thread
//   blocks would not fill the GPU.
// 8 warps only when not causal: a causal query tile smaller than the block's 128 queries
// gives its warps different counts of key blocks, which the schedule refuses. None for
// less than a tile.
std::vector<ops::AttentionCudaOptions> cuda_option_candidates(const ops::AttentionStages& st, bool wgmma) {
  const int64_t* batch = as_const_int(st.q.shape()[0]);
  const int64_t* heads = as_const_int(st.q.shape()[1]);
  const int64_t* queries = as_const_int((st.queries.defined() ? st.queries : st.q).shape()[2]);
  const int64_t* seq_k = as_const_int(st.k.shape()[2]);
  if (!batch || !heads || !queries || !seq_k || st.key_block < 1) return {};
  const int64_t key_blocks = *seq_k / st.key_block;
  if (key_blocks < 1) return {};
  // The same keys for every query (not causal): the block's warps run the same loop.
  const bool same_keys = as_const_int(st.acc.op()->reduce_axis[0].dom().extent) != nullptr;
  auto tiles = [&](int warps) { return warps == 1 || *queries % (16 * warps) == 0; };
  auto blocks_of = [&](int warps) { return *batch * *heads * (*queries / (16 * warps)); };
  auto fills = [&](int warps) { return tiles(warps) && blocks_of(warps) >= kEnoughBlocks; };
  std::vector<ops::AttentionCudaOptions> out;
  auto add = [&](int warps, bool on_wgmma) {
    ops::AttentionCudaOptions o;
    o.warps = warps;
    o.wgmma = on_wgmma;
    if (same_keys && !on_wgmma)
      while (blocks_of(warps) * o.key_splits < kEnoughBlocks && o.key_splits < 64 &&
             key_blocks % (2 * o.key_splits) == 0)
        o.key_splits *= 2;
    out.push_back(o);
  };
  if (wgmma && same_keys && fills(8)) add(8, true);
  if (wgmma && fills(4)) add(4, true);
  if (same_keys && fills(8)) add(8, false);
  // The most warps that tile the queries first; fewer where a causal query tile is
  // smaller than their block's queries (the schedule refuses those).
  for (int warps : {4, 2, 1})
    if (tiles(warps) && blocks_of(warps) >= 1) add(warps, false);
  return out;
}

// The first candidate the tensor-core schedule takes (not float32, shapes in whole tiles,
// a query tile of the expression's that the block's warps share: it says so by a
// te::Error on a copy of the schedule); none: the generic rules schedule the stages.
std::optional<ops::AttentionCudaOptions> cuda_options(const Context& cx, const ops::AttentionStages& st) {
  if (!has_mma_sync(cx.opts.target)) return std::nullopt;
  for (const ops::AttentionCudaOptions& o : cuda_option_candidates(st, has_wgmma(cx.opts.target))) {
    try {
      Schedule trial = cx.s.copy();
      ops::schedule_attention_cuda(trial, st, o);
      return o;
    } catch (const Error&) {
    }
  }
  return std::nullopt;
}

}  // namespace

std::set<const OperationNode*> find_attention(const Context& cx) {
  std::set<const OperationNode*> whole;
  for (const Node* n : cx.g.topo())
    if (std::optional<ops::AttentionStages> st = attention_at(cx, n->op.get()))
      if (!cx.opts.target.is_cuda() || cuda_options(cx, *st))
        for (const Tensor& t : stages_of(*st)) whole.insert(t.op().get());
  return whole;
}

void schedule_attention_cuda_rule(Context& cx) {
  for (const Node* n : cx.g.topo()) {
    std::optional<ops::AttentionStages> st = attention_at(cx, n->op.get());
    if (!st || !cx.whole.count(n->op.get())) continue;  // find_attention found it applies
    std::optional<ops::AttentionCudaOptions> o = cuda_options(cx, *st);
    ops::schedule_attention_cuda(cx.s, *st, *o);
    cx.note(fmt::format("'{}': attention on tensor cores ({}{} warps per block, keys in {} part{})", n->op->name,
                        o->wgmma ? "wgmma, " : "", o->warps, o->key_splits, o->key_splits == 1 ? "" : "s"));
  }
}

void schedule_attention_cpu_rule(Context& cx) {
  for (const Node* n : cx.g.topo()) {
    std::optional<ops::AttentionStages> st = attention_at(cx, n->op.get());
    if (!st) continue;
    ops::AttentionCpuOptions o;
    o.vector_bytes = cx.cpu.vector_bits / 8;
    ops::schedule_attention_cpu(cx.s, *st, o);
    cx.note(fmt::format("'{}': attention (online softmax over blocks of {} keys), its own CPU schedule", n->op->name,
                        st->key_block));
  }
}

}  // namespace te::auto_sched
