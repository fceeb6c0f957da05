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

// CUDA: the tensor-core schedule's options for st: the most warps (16 queries each) that
// tile the queries; split-K over the keys, in parts that divide the blocks of keys, while
// the thread blocks would not fill the GPU. None for less than a tile.
std::optional<ops::AttentionCudaOptions> cuda_options(const ops::AttentionStages& st) {
  const int64_t* batch = as_const_int(st.q.shape()[0]);
  const int64_t* heads = as_const_int(st.q.shape()[1]);
  const int64_t* queries = as_const_int((st.queries.defined() ? st.queries : st.q).shape()[2]);
  const int64_t* seq_k = as_const_int(st.k.shape()[2]);
  if (!batch || !heads || !queries || !seq_k || st.key_block < 1) return std::nullopt;
  ops::AttentionCudaOptions o;
  o.warps = *queries % 64 == 0 ? 4 : *queries % 32 == 0 ? 2 : 1;
  const int64_t blocks = *batch * *heads * (*queries / (16 * o.warps));
  const int64_t key_blocks = *seq_k / st.key_block;
  if (blocks < 1 || key_blocks < 1) return std::nullopt;       // less than a tile: the generic rules
  if (as_const_int(st.acc.op()->reduce_axis[0].dom().extent))  // the same keys for every query
    while (blocks * o.key_splits < kEnoughBlocks && o.key_splits < 64 && key_blocks % (2 * o.key_splits) == 0)
      o.key_splits *= 2;
  return o;
}

// Whether the tensor-core schedule takes st (not float32, shapes in whole tiles: it says
// so by a te::Error on a copy of the schedule); else the generic rules schedule the stages.
bool cuda_schedule_applies(const Context& cx, const ops::AttentionStages& st) {
  if (!has_mma_sync(cx.opts.target)) return false;
  std::optional<ops::AttentionCudaOptions> o = cuda_options(st);
  if (!o) return false;
  try {
    Schedule trial = cx.s.copy();
    ops::schedule_attention_cuda(trial, st, *o);
  } catch (const Error&) {
    return false;
  }
  return true;
}

}  // namespace

std::set<const OperationNode*> find_attention(const Context& cx) {
  std::set<const OperationNode*> whole;
  for (const Node* n : cx.g.topo())
    if (std::optional<ops::AttentionStages> st = attention_at(cx, n->op.get()))
      if (!cx.opts.target.is_cuda() || cuda_schedule_applies(cx, *st))
        for (const Tensor& t : stages_of(*st)) whole.insert(t.op().get());
  return whole;
}

void schedule_attention_cuda_rule(Context& cx) {
  for (const Node* n : cx.g.topo()) {
    std::optional<ops::AttentionStages> st = attention_at(cx, n->op.get());
    if (!st || !cx.whole.count(n->op.get())) continue;  // find_attention found it applies
    std::optional<ops::AttentionCudaOptions> o = cuda_options(*st);
    ops::schedule_attention_cuda(cx.s, *st, *o);
    cx.note(fmt::format("'{}': attention on tensor cores ({} warps per block, keys in {} part{})", n->op->name,
                        o->warps, o->key_splits, o->key_splits == 1 ? "" : "s"));
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
