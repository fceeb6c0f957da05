// cache_read and cache_write: new stages that stage a tensor through another memory scope.
#include <fmt/format.h>

#include "expr/analysis.h"
#include "expr/simplify_internal.h"
#include "schedule/graph_queries.h"
#include "schedule/messages.h"
#include "schedule/operation_builders.h"
#include "schedule/scatter_rules.h"
#include "schedule/stage_lookup.h"
#include "schedule/storage_order.h"
#include "te/schedule.h"
#include "te/simplify.h"

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

// The stages of `readers`, each checked to read src (t's operation) as an input.
std::vector<std::shared_ptr<StageNode>> reader_stages_of(const ScheduleNode& s, const Tensor& t, const Operation& src,
                                                         const std::vector<Tensor>& readers, const char* primitive) {
  if (readers.empty()) throw Error(fmt::format("{}: no readers given for tensor {}", primitive, quote(t.name())));
  refuse_multi_output(*src, primitive);
  std::vector<std::shared_ptr<StageNode>> stages;
  for (const Tensor& r : readers) {
    auto rs = stage_of(s, r, primitive);
    if (!sched::reads(rs->op, src.get()))
      throw Error(fmt::format("{}: stage {} does not read tensor {}", primitive, quote(rs->op->name), quote(t.name())));
    if (rs->op->scatter_base == src)
      throw Error(
          fmt::format("{}: tensor {} is the base of scatter {}, which fills its output in place "
                      "rather than reading it",
                      primitive, quote(t.name()), quote(rs->op->name)));
    stages.push_back(rs);
  }
  return stages;
}

// A read of a copy by phase at index x = stride * a + b (a: the terms whose coefficient
// stride divides, and the constant's multiple of stride) is a read at phase b % stride,
// coarse a + b / stride: exact in floor arithmetic, and constant phases once b is.
std::pair<Expr, Expr> phase_and_coarse(const Expr& x, int64_t stride) {
  const simp::Linear lin = simp::linear_of(simplify(x));
  simp::Linear a(lin.type), b(lin.type);
  for (const simp::Term& term : lin.terms) {
    if (term.coeff % stride == 0) {
      a.add_term(term.atom, term.coeff / stride);
    } else {
      b.add_term(term.atom, term.coeff);
    }
  }
  const int64_t phase_const = ((lin.constant % stride) + stride) % stride;
  a.add_const((lin.constant - phase_const) / stride);
  b.add_const(phase_const);
  const Expr s = make_const(lin.type, stride), rest = simp::linear_to_expr(b);
  return {simplify(rest % s), simplify(simp::linear_to_expr(a) + rest / s)};
}

}  // namespace

Tensor Schedule::cache_read(const Tensor& t, const std::string& scope, const std::vector<Tensor>& readers,
                            const std::vector<int>& storage_order) {
  ScheduleNode& s = *node_;
  auto src_stage = stage_of(s, t, "cache_read");
  MemoryScope m = scope_of(scope, t, "cache_read");
  Operation src = src_stage->op;
  std::vector<std::shared_ptr<StageNode>> reader_stages = reader_stages_of(s, t, src, readers, "cache_read");

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

Tensor Schedule::cache_read_phases(const Tensor& t, const std::string& scope, const std::vector<Tensor>& readers,
                                   int dim, int stride) {
  ScheduleNode& s = *node_;
  auto src_stage = stage_of(s, t, "cache_read_phases");
  MemoryScope m = scope_of(scope, t, "cache_read_phases");
  Operation src = src_stage->op;
  const size_t ndim = src->shape.size();
  if (dim < 0 || static_cast<size_t>(dim) >= ndim)
    throw Error(fmt::format("cache_read_phases: dimension {} is not a dimension of tensor {} (it has {})", dim,
                            quote(t.name()), ndim));
  if (stride < 2)
    throw Error(fmt::format("cache_read_phases: stride {} for tensor {} must be at least 2", stride, quote(t.name())));
  if (m == MemoryScope::Warp || m == MemoryScope::Warpgroup)
    throw Error(
        fmt::format("cache_read_phases: scope {} for tensor {} is a tensor-core fragment, which has its "
                    "intrinsic's layout; use \"global\", \"shared\" or \"local\"",
                    quote(scope), quote(t.name())));
  std::vector<std::shared_ptr<StageNode>> reader_stages = reader_stages_of(s, t, src, readers, "cache_read_phases");

  // The copy: t's axes with dim's replaced by (phase, coarse). The coarse axis rounds up;
  // its last row's positions past t's end repeat t's last element (no reader reads them).
  const size_t d = static_cast<size_t>(dim);
  const Expr extent = src->shape[d];
  const DataType it = extent.dtype().bits() > 32 ? Int(64) : Int(32);
  const Expr s_ = make_const(it, stride);
  std::vector<Expr> shape;
  std::vector<IterVar> axis;
  std::vector<Expr> index;
  for (size_t k = 0; k < ndim; ++k) {
    if (k != d) {
      Var v(fmt::format("ax{}", axis.size()), it);
      axis.emplace_back(Range::from_min_extent(make_zero(it), src->shape[k]), v, IterVarType::DataPar);
      shape.push_back(src->shape[k]);
      index.push_back(v);
      continue;
    }
    const Expr coarse_extent = simplify((extent + make_const(it, stride - 1)) / s_);
    Var phase("phase", it), coarse("coarse", it);
    axis.emplace_back(Range::from_min_extent(make_zero(it), s_), phase, IterVarType::DataPar);
    axis.emplace_back(Range::from_min_extent(make_zero(it), coarse_extent), coarse, IterVarType::DataPar);
    shape.push_back(s_);
    shape.push_back(coarse_extent);
    const Expr x = coarse * s_ + phase;
    const bool whole = is_zero(simplify(extent % s_));
    index.push_back(whole ? x : min(x, extent - make_const(it, 1)));
  }
  Expr body(std::make_shared<TensorReadNode>(src->dtype, src, index));
  Operation cache = sched::make_compute(t.name() + ".phases", shape, axis, body);
  insert_stage(s, sched::stage_index(s, src_stage.get()) + 1, cache, m);

  sched::redirect_reads(s, reader_stages, src, cache, [&](const std::vector<Expr>& indices) {
    std::vector<Expr> out;
    for (size_t k = 0; k < indices.size(); ++k) {
      if (k != d) {
        out.push_back(indices[k]);
        continue;
      }
      auto [phase, coarse] = phase_and_coarse(indices[k], stride);
      out.push_back(phase);
      out.push_back(coarse);
    }
    return out;
  });
  return Tensor(cache);
}

}  // namespace te
