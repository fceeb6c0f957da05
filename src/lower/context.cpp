// make_context: the buffers of the arguments and of the intermediate stages, with the
// checks on the argument list.
#include <fmt/format.h>

#include "lower/passes.h"
#include "lower/stage_graph.h"
#include "schedule/graph_queries.h"
#include "schedule/stage_lookup.h"

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

namespace {

// A scatter's base fills the scatter's buffer in place: the base's stage writes the
// scatter's buffer (consumers first, so a chain of scatters shares one buffer).
void share_scatter_buffers(LowerContext& ctx) {
  const ScheduleNode& sn = *ctx.sched.get();
  for (auto it = sn.stages.rbegin(); it != sn.stages.rend(); ++it) {
    const StageNode& st = **it;
    if (!st.op->is_scatter()) continue;
    const OperationNode* base = st.op->scatter_base.get();
    auto bs = sched::find_stage(sn, base);
    TE_ICHECK(bs && bs->op.get() == base, "lower: a scatter's base has no stage");
    if (ctx.params.count(ctx.buffer_of(base).get()) || bs->is_output)
      throw Error(
          fmt::format("lower: tensor '{}' is the base of scatter '{}', which fills its output in place, so "
                      "it cannot be an argument or an output itself: compute a copy of it if you need both",
                      base->name, st.op->name));
    for (const StageNode* c : consumers_of(sn, *bs))
      if (c != &st)
        throw Error(
            fmt::format("lower: tensor '{}' is the base of scatter '{}', which fills its output in place, "
                        "but stage '{}' reads it too: give '{}' a copy of its own",
                        base->name, st.op->name, c->op->name, c->op->name));
    ctx.realize.erase(ctx.buffer_of(base).get());
    ctx.buffers[{base, 0}] = ctx.buffer_of(st.op.get());
  }
}

}  // namespace

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
        throw Error(fmt::format("lower: tensor '{}' is inlined (compute_inline) and cannot be an argument", t.name()));
      if (st->op->kind == OpKind::Compute && st->scope_set && st->scope != MemoryScope::Global)
        throw Error(fmt::format("lower: argument '{}' has memory scope {}; arguments live in global memory", t.name(),
                                scope_name(st->scope)));
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
      const std::vector<Expr>& shape = st->op->output_shape(i);
      Buffer buf(st->op->output_name(i), st->op->output_dtype(i), shape, st->scope);
      std::vector<Range> region;
      if (st->op->is_scatter()) {
        for (const Expr& e : shape) region.push_back(Range::from_min_extent(make_zero(e.dtype()), e));
      } else {  // a row value's region is its row axes'
        for (size_t d = 0; d < shape.size(); ++d) region.push_back(ctx.bounds.at(st->op->axis[d]));
      }
      ctx.realize[buf.get()] = region;
      ctx.buffers[{st->op.get(), i}] = buf;
    }
    for (const Operation& in : sched::reads_of(*st->op))
      if (in->kind == OpKind::Placeholder && !ctx.buffers.count({in.get(), 0}))
        throw Error(
            fmt::format("lower: tensor '{}' is read by '{}' but is not in the argument list", in->name, st->op->name));
  }
  share_scatter_buffers(ctx);
  return ctx;
}

}  // namespace te::lowering
