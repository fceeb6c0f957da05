// lower(): the passes, in order. Each pass is its own file in src/lower.
#include <fmt/format.h>

#include "expr/extern_calls.h"
#include "lower/dump_ir.h"
#include "lower/passes.h"
#include "schedule/pretransform.h"

namespace te {

namespace {

void check_name(const std::string& name) {
  if (!is_c_identifier(name)) throw Error(fmt::format("lower: function name '{}' must be a C identifier", name));
}

// The pipeline; `dump` prints (or records) the IR after each pass.
LoweredFunc run_passes(const Schedule& schedule, const std::vector<Tensor>& args, const std::string& name,
                       const LowerOptions& options, lowering::IrDump& dump) {
  using namespace lowering;
  check_schedule(schedule);
  Schedule s = dump.after("inline", inline_stages(schedule));
  s = dump.after("cache_stages", assign_storage_scopes(s));
  LowerContext ctx = dump.after("infer_bound", make_context(s, infer_bound_inlined(s), args));
  std::vector<StageNest> nests = dump.after("build_loop_nests", build_loop_nests(ctx));
  nests = dump.after("reduction_init", place_reduction_init(std::move(nests)));
  Stmt body = dump.after("attach", attach_stages(nests, ctx));
  check_loop_nesting(body, ctx);
  body = dump.after("storage_flatten", storage_flatten(body, ctx));
  body = dump.after("inject_double_buffer", inject_double_buffer(body, ctx));
  body = dump.after("allocate", allocate_buffers(body, ctx));
  body = dump.after("inject_virtual_thread", inject_virtual_threads(body, ctx));
  body = dump.after("tensorize", tensorize_stages(body, ctx));
  body = dump.after("simplify", simplify(body, ctx.known));
  if (options.partition_loops) body = dump.after("loop_partition", partition_loops(body, ctx.known));
  body = dump.after("unroll", unroll_loops(body));
  body = dump.after("vectorize", vectorize_loops(body));
  body = dump.after("insert_barriers", insert_barriers(body));
  body = dump.after("unify_thread_extents", unify_thread_extents(body, ctx.known));
  body = dump.after("lower_thread_allreduce", lower_thread_allreduce(body, ctx));
  body = dump.after("remove_no_op", remove_no_ops(body));
  if (options.eliminate_common_subexpressions)
    body = dump.after("common_subexpr_elim", eliminate_common_subexpressions(body));
  std::vector<Param> params = make_params(ctx, body);
  body = dump.after("unique_names", unique_names(body, params));
  LoweredFunc f{name, params, body};
  dump.finish(f);
  return f;
}

}  // namespace

std::vector<std::string> lower_pass_names() {
  // Read off lower() itself: a one-element computation lowered with every optional pass on.
  static const std::vector<std::string> names = [] {
    Tensor a = placeholder({1}, Float(32), "a");
    Tensor b = compute(
        {1}, [&](Expr i) { return a(i); }, "b");
    LowerOptions all_passes;
    all_passes.partition_loops = true;
    all_passes.eliminate_common_subexpressions = true;
    lowering::IrDump recorder = lowering::IrDump::recorder();
    run_passes(create_schedule({b}), {a, b}, "pass_names", all_passes, recorder);
    return recorder.passes_run();
  }();
  return names;
}

LoweredFunc lower(const Schedule& schedule, const std::vector<Tensor>& args, const std::string& name,
                  const LowerOptions& options) {
  if (!schedule.defined()) throw Error("lower: the schedule is undefined");
  check_name(name);
  lowering::IrDump dump(options, name);
  return run_passes(schedule, sched::taken_args(*schedule.get(), args), name, options, dump);
}

LoweredFunc lower_pretransform(const Schedule& schedule, const Tensor& input, const std::string& name,
                               const Target& target) {
  if (!schedule.defined()) throw Error("lower_pretransform: the schedule is undefined");
  check_name(name);
  const Pretransform* p = sched::find_pretransform(*schedule.get(), input);
  if (!p)
    throw Error(
        fmt::format("lower_pretransform: tensor '{}' is not an input the schedule takes pretransformed "
                    "(Schedule::pretransform)",
                    input.defined() ? input.name() : "<undefined>"));
  // taken(i_0, ..., i_n) = src at index[order[k]] = i_k (no order: the same index), src
  // the input or the stage computed from it (precompute), inlined unless it is a
  // reduction; blocked: taken(o, i_0, ..., i_n) with the last dimension's index
  // o * block + i_n, zero past its extent. One pass per stage: parallel over the
  // outermost dimension on a CPU, a thread per element on a GPU.
  const Tensor src = p->computed.defined() ? p->computed : p->input;
  const int64_t block = p->inner_block;
  Tensor out = compute(
      p->taken.shape(),
      [&](const std::vector<Var>& v) {
        std::vector<Expr> i(v.begin() + (block > 0 ? 1 : 0), v.end());
        if (p->storage_order.empty()) return src(i);
        if (block > 0) i.back() = v.front() * make_const(Int(32), block) + i.back();
        std::vector<Expr> index(i.size());
        for (size_t k = 0; k < i.size(); ++k) index[static_cast<size_t>(p->storage_order[k])] = i[k];
        if (block == 0) return src(index);
        const size_t last = static_cast<size_t>(p->storage_order.back());
        const int64_t extent = *as_const_int(src.shape()[last]);  // constant: checked by pretransform
        if (extent % block == 0) return src(index);
        return if_then_else(index[last] < make_const(Int(32), extent), src(index), make_const(src.dtype(), 0.0));
      },
      p->taken.name());
  Schedule s = create_schedule({out});
  if (p->computed.defined() && !src.op()->body.as<ReduceNode>()) s[src].compute_inline();
  for (Stage st : s.stages()) {
    if (st->op->kind != OpKind::Compute || st->attach_type == AttachType::Inline) continue;
    if (target.is_cuda()) {
      auto [blocks, threads] = st.split(st.fuse(st->op->axis), 256);
      st.bind(blocks, thread_axis("blockIdx.x"));
      st.bind(threads, thread_axis("threadIdx.x"));
    } else if (st->op->axis.size() > 1) {
      st.parallel(st->op->axis[0]);
    }
  }
  return lower(s, {p->input, out}, name);
}

}  // namespace te
