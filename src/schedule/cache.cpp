// cache_read and cache_write: new stages that stage a tensor through another memory scope.
#include <fmt/format.h>

#include "expr/analysis.h"
#include "schedule/graph_queries.h"
#include "schedule/messages.h"
#include "schedule/operation_builders.h"
#include "schedule/scatter_rules.h"
#include "schedule/stage_lookup.h"
#include "schedule/storage_order.h"
#include "te/schedule.h"

namespace te {

using sched::quote;

namespace {

std::shared_ptr<StageNode> stage_of(const ScheduleNode& s, const Tensor& t, const char* primitive) {
  if (!t.defined()) throw Error(fmt::format("{}: undefined tensor", primitive));
  auto st = sched::find_stage(s, t.op().get());
  if (!st) throw Error(fmt::format("{}: tensor {} is not part of this schedule", primitive, quote(t.name())));
  return st;
}

MemoryScope scope_of(const std::string& scope, const Tensor& t, const char* primitive) {
  try {
    return parse_scope(scope);
  } catch (const Error&) {
    throw Error(
        fmt::format("{}: unknown memory scope {} for tensor {}; use \"global\", \"shared\", \"local\" or \"warp\"",
                    primitive, quote(scope), quote(t.name())));
  }
}

void insert_stage(ScheduleNode& s, size_t pos, const Operation& op, MemoryScope scope) {
  auto st = sched::make_stage(op);
  st->scope = scope;
  st->scope_set = true;
  s.stages.insert(s.stages.begin() + static_cast<std::ptrdiff_t>(pos), st);
}

// Caching one output of a multi-output stage would split the stage's loop nest.
void refuse_multi_output(const OperationNode& op, const char* primitive) {
  if (op.num_outputs() > 1)
    throw Error(
        fmt::format("{}: stage {} has {} outputs (a compute_tuple); {} of a multi-output stage is not "
                    "supported: compute a copy of the output you want to cache",
                    primitive, quote(op.name), op.num_outputs(), primitive));
}

}  // namespace

Tensor Schedule::cache_read(const Tensor& t, const std::string& scope, const std::vector<Tensor>& readers,
                            const std::vector<int>& storage_order) {
  ScheduleNode& s = *node_;
  auto src_stage = stage_of(s, t, "cache_read");
  MemoryScope m = scope_of(scope, t, "cache_read");
  if (readers.empty()) throw Error(fmt::format("cache_read: no readers given for tensor {}", quote(t.name())));
  Operation src = src_stage->op;
  refuse_multi_output(*src, "cache_read");
  std::vector<std::shared_ptr<StageNode>> reader_stages;
  for (const Tensor& r : readers) {
    auto rs = stage_of(s, r, "cache_read");
    if (!sched::reads(rs->op, src.get()))
      throw Error(fmt::format("cache_read: stage {} does not read tensor {}", quote(rs->op->name), quote(t.name())));
    if (rs->op->scatter_base == src)
      throw Error(
          fmt::format("cache_read: tensor {} is the base of scatter {}, which fills its output in place "
                      "rather than reading it",
                      quote(t.name()), quote(rs->op->name)));
    reader_stages.push_back(rs);
  }

  // The copy's axis p is t's dimension order[p].
  const std::vector<size_t> order = sched::storage_order_of(storage_order, src->shape.size(), t, "cache_read");
  std::vector<IterVar> axis;
  std::vector<Expr> index(src->shape.size());
  for (size_t p = 0; p < order.size(); ++p) {
    const Expr& extent = src->shape[order[p]];
    DataType it = extent.dtype().bits() > 32 ? Int(64) : Int(32);
    Var v(fmt::format("ax{}", p), it);
    axis.emplace_back(Range::from_min_extent(make_zero(it), extent), v, IterVarType::DataPar);
    index[order[p]] = v;
  }
  Expr body(std::make_shared<TensorReadNode>(src->dtype, src, index));
  Operation cache = sched::make_compute(t.name() + "." + scope_name(m), sched::permuted(src->shape, order), axis, body);
  insert_stage(s, sched::stage_index(s, src_stage.get()) + 1, cache, m);

  sched::redirect_reads(s, reader_stages, src, cache, order);
  return Tensor(cache);
}

Tensor Schedule::cache_write(const Tensor& t, const std::string& scope, const std::vector<int>& storage_order) {
  ScheduleNode& s = *node_;
  auto st = stage_of(s, t, "cache_write");
  MemoryScope m = scope_of(scope, t, "cache_write");
  Operation op = st->op;
  if (op->kind != OpKind::Compute)
    throw Error(
        fmt::format("cache_write: tensor {} is a placeholder; only computed tensors are written", quote(t.name())));
  refuse_multi_output(*op, "cache_write");
  if (sched::scatter_of_base(s, op.get()))
    sched::refuse_scatter_parts(s, *op, "cache_write", "cached (it fills the scatter's output in place)");
  if (st->attach_type == AttachType::Inline)
    throw Error(fmt::format("cache_write: stage {} is inlined", quote(op->name)));
  if (!st->relations.empty() || !st->attrs.empty())
    throw Error(
        fmt::format("cache_write: stage {} is already scheduled (split, fused or annotated); call "
                    "cache_write before the other primitives on it",
                    quote(op->name)));
  for (const auto& other : s.stages)
    if (other->attach_type == AttachType::Scope && other->attach_op == st->origin_op &&
        other->attach_ivar.type() == IterVarType::Reduce)
      throw Error(
          fmt::format("cache_write: stage {} is computed at reduction axis {} of stage {}, which moves "
                      "to the cache stage",
                      quote(other->op->name), quote(other->attach_ivar.name()), quote(op->name)));

  if (!storage_order.empty() && (op->is_scatter() || op->is_row_reduction()))
    throw Error(fmt::format("cache_write: stage {} is a {}; its cache keeps the stage's own storage order",
                            quote(op->name), op->is_scatter() ? "scatter" : "row reduction"));
  const std::vector<size_t> order = sched::storage_order_of(storage_order, op->axis.size(), t, "cache_write");
  // The cache stage computes the original expression over axes of its own (axis p of
  // the cache is t's axis order[p]).
  std::vector<IterVar> axis;
  std::vector<std::pair<Var, Expr>> rename;
  for (const IterVar& iv : op->axis) {
    Var v(iv.name() + ".c", iv.var().dtype());
    axis.emplace_back(iv.dom(), v, IterVarType::DataPar);
    rename.emplace_back(iv.var(), v);
  }
  // A scatter's cache holds its values over its domain; the scatter then stores them.
  std::vector<Expr> cache_shape = op->shape;
  if (op->is_scatter()) {
    cache_shape.clear();
    for (const IterVar& iv : op->axis) cache_shape.push_back(iv.dom().extent);
  }
  Operation cache = sched::make_compute(t.name() + "." + scope_name(m), sched::permuted(cache_shape, order),
                                        sched::permuted(axis, order), sched::rename_vars(op->body, rename));
  // The original stage now copies the cache out.
  std::vector<Expr> index;
  for (const IterVar& iv : op->axis) index.push_back(iv.var());
  Expr copy(std::make_shared<TensorReadNode>(op->dtype, cache, sched::permuted(index, order)));
  Operation next = sched::with_bodies(op, {copy});
  sched::set_operation(*st, next);
  st->all_iter_vars = op->axis;
  st->leaf_iter_vars = op->axis;
  insert_stage(s, sched::stage_index(s, st.get()), cache, m);
  sched::propagate_replacements(s, {{op.get(), next}});
  return Tensor(cache);
}

}  // namespace te
