// CPU: te::ops::attention recognised through the graph (ops::attention_stages_of) and
// scheduled whole with its own schedule (ops::schedule_attention_cpu): blocks of queries
// in parallel, the scores, exps and probabilities · v of a block of keys in registers and
// small buffers, one online-softmax step per block. The generic rules would give each of
// its stages a loop nest of its own.
#include <fmt/format.h>

#include <optional>

#include "auto_schedule/rules.h"
#include "te/ops/attention_cpu.h"

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

}  // namespace

std::set<const OperationNode*> find_attention(const Context& cx) {
  std::set<const OperationNode*> whole;
  for (const Node* n : cx.g.topo())
    if (std::optional<ops::AttentionStages> st = attention_at(cx, n->op.get()))
      for (const Tensor& t : stages_of(*st)) whole.insert(t.op().get());
  return whole;
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
