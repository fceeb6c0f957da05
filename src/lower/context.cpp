// make_context: the buffers of the arguments and of the intermediate stages, with the
// checks on the argument list.
#include <fmt/format.h>

#include "lower/passes.h"
#include "lower/stage_graph.h"
#include "schedule/schedule_util.h"

namespace te::lowering {

const Buffer& LowerContext::buffer_of(const OperationNode* op, int i) const {
  auto it = buffers.find({op, i});
  TE_ICHECK(it != buffers.end(), "lower: an operation's output has no buffer");
  return it->second;
}

std::vector<Buffer> LowerContext::buffers_of(const OperationNode* op) const {
  std::vector<Buffer> out;
  for (int i = 0; i < op->num_outputs(); ++i)
    if (auto it = buffers.find({op, i}); it != buffers.end()) out.push_back(it->second);
  return out;
}

LowerContext make_context(const Schedule& s, BoundMap bounds, const std::vector<Tensor>& args) {
  const ScheduleNode& sn = *s.get();
  LowerContext ctx;
  ctx.sched = s;
  ctx.bounds = std::move(bounds);
  ctx.known = shape_var_bounds(sn);

  for (size_t i = 0; i < args.size(); ++i) {
    const Tensor& t = args[i];
    if (!t.defined()) throw Error(fmt::format("lower: argument {} is an undefined tensor", i));
    for (size_t j = 0; j < i; ++j)
      if (args[j].same_as(t)) throw Error(fmt::format("lower: tensor '{}' is listed twice in the arguments", t.name()));
    Operation op = t.op();
    if (auto st = sched::find_stage(sn, t.op().get())) {
      if (st->attach_type == AttachType::Inline)
        throw Error(fmt::format("lower: tensor '{}' is inlined (compute_inline) and cannot be an argument",
                                t.name()));
      if (st->op->kind == OpKind::Compute && st->scope_set && st->scope != MemoryScope::Global)
        throw Error(fmt::format("lower: argument '{}' has memory scope {}; arguments live in global memory",
                                t.name(), scope_name(st->scope)));
      op = st->op;
    } else if (!t.is_placeholder()) {
      throw Error(fmt::format("lower: argument '{}' is not computed by this schedule", t.name()));
    }
    Buffer buf(t.name(), t.dtype(), t.shape(), MemoryScope::Global);
    ctx.buffers[{op.get(), t.value_index()}] = buf;
    ctx.params.insert(buf.get());
    ctx.arg_buffers.push_back(buf);
  }

  for (const auto& st : sn.stages) {
    if (st->op->kind != OpKind::Compute || st->attach_type == AttachType::Inline) continue;
    for (int i = 0; i < st->op->num_outputs(); ++i) {
      if (ctx.buffers.count({st->op.get(), i})) continue;
      Buffer buf(st->op->output_name(i), st->op->output_dtype(i), st->op->shape, st->scope);
      std::vector<Range> region;
      for (const IterVar& iv : st->op->axis) region.push_back(ctx.bounds.at(iv));
      ctx.realize[buf.get()] = region;
      ctx.buffers[{st->op.get(), i}] = buf;
    }
    for (const Operation& in : sched::reads_of(*st->op))
      if (in->kind == OpKind::Placeholder && !ctx.buffers.count({in.get(), 0}))
        throw Error(fmt::format("lower: tensor '{}' is read by '{}' but is not in the argument list", in->name,
                                st->op->name));
  }
  return ctx;
}

}  // namespace te::lowering
