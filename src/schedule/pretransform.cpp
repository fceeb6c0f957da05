// Schedule::pretransform: the function takes an input in another layout, which the caller
// makes once (Ansor's layout rewrite for pre-transformed constant weights).
#include "schedule/pretransform.h"

#include <fmt/format.h>

#include <algorithm>

#include "schedule/graph_queries.h"
#include "schedule/messages.h"
#include "schedule/stage_lookup.h"
#include "schedule/storage_order.h"
#include "te/schedule.h"

namespace te {

using sched::quote;

Tensor Schedule::pretransform(const Tensor& input, const std::vector<int>& storage_order, int64_t inner_block) {
  ScheduleNode& s = *node_;
  if (!input.defined()) throw Error("pretransform: undefined tensor");
  auto src_stage = sched::find_stage(s, input.op().get());
  if (!src_stage) throw Error(fmt::format("pretransform: tensor {} is not part of this schedule", quote(input.name())));
  const Operation src = src_stage->op;
  if (src->kind != OpKind::Placeholder)
    throw Error(
        fmt::format("pretransform: tensor {} is computed; only an input (a placeholder) is taken in another layout "
                    "(cache_read with a storage order lays out a computed tensor)",
                    quote(input.name())));
  // The placeholder a precompute() made is laid out by the same function that computes it.
  Pretransform* computed = nullptr;
  for (Pretransform& p : s.pretransforms)
    if (p.computed.defined() && p.taken.op() == input.op() && p.storage_order.empty() && p.inner_block == 0)
      computed = &p;
  const Pretransform* p = sched::find_pretransform(s, input);
  if (p && !computed)
    throw Error(fmt::format("pretransform: input {} is already taken pretransformed (as {})", quote(input.name()),
                            quote(p->taken.name())));
  const std::vector<size_t> order = sched::storage_order_of(storage_order, src->shape.size(), input, "pretransform");
  bool identity = true;
  for (size_t p = 0; p < order.size(); ++p) identity = identity && order[p] == p;
  if (inner_block < 0)
    throw Error(fmt::format("pretransform: the inner block of input {} is {}; it must be positive (0: no block)",
                            quote(input.name()), inner_block));
  const size_t blocked = order.empty() ? 0 : order.back();
  if (inner_block > 0) {
    if (order.empty())
      throw Error(fmt::format("pretransform: input {} has no dimension to block", quote(input.name())));
    const int64_t* extent = as_const_int(src->shape[blocked]);
    if (!extent || *extent <= inner_block)
      throw Error(fmt::format(
          "pretransform: the inner block {} of input {} is not shorter than its dimension {} (extent {}): nothing "
          "to block",
          inner_block, quote(input.name()), blocked, to_string(src->shape[blocked])));
  }
  if (identity && inner_block == 0)
    throw Error(
        fmt::format("pretransform: the storage order of input {} is its own (empty or the identity): "
                    "nothing to transform",
                    quote(input.name())));
  std::vector<std::shared_ptr<StageNode>> readers;
  for (const auto& st : s.stages)
    if (sched::reads(st->op, src.get())) readers.push_back(st);
  if (readers.empty())
    throw Error(
        fmt::format("pretransform: no stage reads input {} (an output of the schedule itself)", quote(input.name())));

  std::string name = input.name() + "_";
  for (size_t d : order) name += std::to_string(d);
  std::vector<Expr> shape = sched::permuted(src->shape, order);
  if (inner_block > 0) {
    // [blocks][the order's dimensions, the blocked one now the block's length]
    name += fmt::format("_b{}", inner_block);
    const int64_t extent = *as_const_int(src->shape[blocked]);
    shape.insert(shape.begin(), make_const(Int(32), (extent + inner_block - 1) / inner_block));
    shape.back() = make_const(Int(32), inner_block);
  }
  Tensor taken = placeholder(shape, src->dtype, name);
  auto taken_stage = sched::make_stage(taken.op());
  s.stages.insert(s.stages.begin() + static_cast<std::ptrdiff_t>(sched::stage_index(s, src_stage.get()) + 1),
                  taken_stage);
  sched::redirect_reads(s, readers, src, taken.op(), [&](const std::vector<Expr>& indices) {
    std::vector<Expr> at = sched::permuted(indices, order);
    if (inner_block > 0) {
      const Expr b = make_const(at.back().dtype(), inner_block);
      at.insert(at.begin(), at.back() / b);
      at.back() = at.back() % b;
    }
    return at;
  });
  if (computed) {
    computed->taken = taken;
    computed->storage_order.assign(order.begin(), order.end());
    computed->inner_block = inner_block;
  } else {
    s.pretransforms.push_back({input, taken, Tensor(), std::vector<int>(order.begin(), order.end()), inner_block});
  }
  return taken;
}

Tensor Schedule::precompute(const Tensor& t) {
  ScheduleNode& s = *node_;
  if (!t.defined()) throw Error("precompute: undefined tensor");
  auto st = sched::find_stage(s, t.op().get());
  if (!st) throw Error(fmt::format("precompute: tensor {} is not part of this schedule", quote(t.name())));
  const Operation op = st->op;
  const std::string who = quote(op->name);
  if (op->kind != OpKind::Compute)
    throw Error(fmt::format("precompute: tensor {} is an input; only a stage computed from one is precomputed", who));
  if (st->is_output) throw Error(fmt::format("precompute: stage {} is an output of the schedule", who));
  if (op->is_scatter() || op->is_row_reduction() || op->num_outputs() != 1)
    throw Error(fmt::format(
        "precompute: stage {} is a scatter, a row reduction or a multi-output compute; only a compute of one "
        "value is precomputed",
        who));
  const std::vector<Operation> inputs = sched::reads_of(*op);
  if (inputs.size() != 1 || inputs[0]->kind != OpKind::Placeholder) {
    std::string names;
    for (const Operation& in : inputs) names += (names.empty() ? "" : ", ") + quote(in->name);
    throw Error(fmt::format("precompute: stage {} reads {}; it must read one input (a placeholder) and nothing else",
                            who, names.empty() ? "nothing" : names));
  }
  const Operation src = inputs[0];
  for (const auto& other : s.stages) {
    if (other.get() != st.get() && sched::reads(other->op, src.get()))
      throw Error(fmt::format(
          "precompute: input {} is read by stage {} as well as by {}; the function could not take {}'s values in "
          "its place",
          quote(src->name), quote(other->op->name), who, who));
    if (other->attach_type == AttachType::Scope && other->attach_op == st->origin_op)
      throw Error(fmt::format("precompute: stage {} is computed at a loop of stage {}, which leaves the schedule",
                              quote(other->op->name), who));
  }
  if (!st->relations.empty() || !st->attrs.empty() || st->attach_type != AttachType::Root)
    throw Error(fmt::format(
        "precompute: stage {} already has a schedule, which precompute would drop (lower_pretransform schedules "
        "it)",
        who));
  if (const Pretransform* p = sched::find_pretransform(s, Tensor(src, 0)))
    throw Error(fmt::format("precompute: input {} is already taken pretransformed (as {})", quote(p->input.name()),
                            quote(p->taken.name())));

  std::string name = op->name;
  std::replace(name.begin(), name.end(), '.', '_');
  Tensor taken = placeholder(op->shape, op->dtype, name);
  std::vector<std::shared_ptr<StageNode>> readers;
  for (const auto& other : s.stages)
    if (sched::reads(other->op, op.get())) readers.push_back(other);
  const size_t at = sched::stage_index(s, st.get());
  s.stages[at] = sched::make_stage(taken.op());
  std::vector<size_t> identity(op->shape.size());
  for (size_t d = 0; d < identity.size(); ++d) identity[d] = d;
  sched::redirect_reads(s, readers, op, taken.op(), identity);
  s.pretransforms.push_back({Tensor(src, 0), taken, Tensor(op, 0), {}, 0});
  return taken;
}

}  // namespace te

namespace te::sched {

const Pretransform* find_pretransform(const ScheduleNode& s, const Tensor& t) {
  if (!t.defined()) return nullptr;
  for (const Pretransform& p : s.pretransforms)
    if (p.input.op() == t.op() || p.taken.op() == t.op()) return &p;
  return nullptr;
}

std::vector<Tensor> taken_args(const ScheduleNode& s, const std::vector<Tensor>& args) {
  std::vector<Tensor> out = args;
  for (const Pretransform& p : s.pretransforms) {
    int inputs = 0, taken = 0;
    for (Tensor& t : out) {
      if (!t.defined()) continue;
      if (t.op() == p.input.op()) {
        t = p.taken;
        ++inputs;
      } else if (t.op() == p.taken.op()) {
        ++taken;
      }
    }
    if (inputs > 0 && taken > 0)
      throw Error(
          fmt::format("lower: input {} is taken pretransformed as {} (Schedule::pretransform); list one of "
                      "them, not both",
                      quote(p.input.name()), quote(p.taken.name())));
  }
  return out;
}

}  // namespace te::sched
