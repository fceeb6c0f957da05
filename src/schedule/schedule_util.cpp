#include "schedule/schedule_util.h"

#include "expr/simplify_internal.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace te::sched {

std::string quote(const std::string& name) { return "'" + name + "'"; }

int index_of(const std::vector<IterVar>& v, const IterVar& iv) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].same_as(iv)) return static_cast<int>(i);
  return -1;
}

size_t check_leaf(const StageNode& stage, const IterVar& iv, const char* primitive) {
  const std::string& sname = stage.op->name;
  if (!iv.defined()) throw Error(fmt::format("{}: undefined axis given for stage {}", primitive, quote(sname)));
  int pos = index_of(stage.leaf_iter_vars, iv);
  if (pos >= 0) return static_cast<size_t>(pos);
  if (index_of(stage.all_iter_vars, iv) >= 0)
    throw Error(fmt::format("{}: axis {} of stage {} was already split or fused; schedule its results",
                            primitive, quote(iv.name()), quote(sname)));
  throw Error(fmt::format("{}: axis {} is not an axis of stage {} (it belongs to another stage)", primitive,
                          quote(iv.name()), quote(sname)));
}

std::shared_ptr<StageNode> make_stage(const Operation& op) {
  auto s = std::make_shared<StageNode>();
  s->op = op;
  s->origin_op = op;
  if (op->kind == OpKind::Compute) {
    s->all_iter_vars = op->axis;
    s->all_iter_vars.insert(s->all_iter_vars.end(), op->reduce_axis.begin(), op->reduce_axis.end());
    s->leaf_iter_vars = s->all_iter_vars;
  }
  return s;
}

std::shared_ptr<StageNode> find_stage(const ScheduleNode& s, const OperationNode* op) {
  for (const auto& st : s.stages)
    if (st->op.get() == op || st->origin_op.get() == op) return st;
  return nullptr;
}

size_t stage_index(const ScheduleNode& s, const StageNode* stage) {
  for (size_t i = 0; i < s.stages.size(); ++i)
    if (s.stages[i].get() == stage) return i;
  TE_ICHECK(false, "stage not in its schedule");
  return 0;
}

namespace {

class ReadCollector : public IRVisitor {
 public:
  std::vector<Operation> ops;

 protected:
  void visit_tensor_read(const TensorReadNode* n) override {
    bool seen = std::any_of(ops.begin(), ops.end(), [&](const Operation& o) { return o == n->op; });
    if (!seen) ops.push_back(n->op);
    IRVisitor::visit_tensor_read(n);
  }
};

class ReadReplacer : public IRMutator {
 public:
  explicit ReadReplacer(const std::map<const OperationNode*, Operation>& repl) : repl_(repl) {}

 protected:
  Expr mutate_tensor_read(const Expr& e, const TensorReadNode* n) override {
    Expr r = IRMutator::mutate_tensor_read(e, n);
    auto it = repl_.find(n->op.get());
    if (it == repl_.end()) return r;
    const auto* rn = r.as<TensorReadNode>();
    return Expr(std::make_shared<TensorReadNode>(rn->dtype, it->second, rn->indices, rn->value_index));
  }

 private:
  const std::map<const OperationNode*, Operation>& repl_;
};

}  // namespace

std::vector<Operation> reads_of(const Expr& e) {
  ReadCollector c;
  c.visit(e);
  return c.ops;
}

namespace {
void visit_reduce_bounds(ReadCollector& c, const OperationNode& op) {
  for (const IterVar& iv : op.reduce_axis) {
    c.visit(iv.dom().min);
    c.visit(iv.dom().extent);
  }
}
}  // namespace

std::vector<Operation> reads_of(const OperationNode& op) {
  ReadCollector c;
  if (op.scatter_base) c.ops.push_back(op.scatter_base);
  for (const Expr& b : op.bodies()) c.visit(b);
  visit_reduce_bounds(c, op);
  for (const Expr& e : op.scatter_index) c.visit(e);
  return c.ops;
}

std::vector<Operation> bound_reads_of(const OperationNode& op) {
  ReadCollector c;
  visit_reduce_bounds(c, op);
  return c.ops;
}

bool reads(const Operation& op, const OperationNode* producer) {
  if (op->kind != OpKind::Compute) return false;
  for (const Operation& in : reads_of(*op))
    if (in.get() == producer) return true;
  return false;
}

Operation make_compute(std::vector<std::string> names, std::vector<Expr> shape, std::vector<IterVar> axis,
                       std::vector<Expr> bodies) {
  TE_ICHECK(!bodies.empty() && names.size() == bodies.size(), "make_compute: one name per body");
  auto n = std::make_shared<OperationNode>();
  n->kind = OpKind::Compute;
  n->name = names[0];
  n->dtype = bodies[0].dtype();
  n->shape = std::move(shape);
  n->axis = std::move(axis);
  if (const auto* r = bodies[0].as<ReduceNode>()) n->reduce_axis = r->axis;
  n->body = bodies[0];
  for (size_t i = 1; i < bodies.size(); ++i) n->more_outputs.push_back({names[i], bodies[i].dtype(), bodies[i]});
  n->inputs = reads_of(*n);
  return n;
}

namespace {

// op with other bodies, scatter base and scatter index (the rest kept).
Operation rebuild(const Operation& op, std::vector<Expr> bodies, Operation base, std::vector<Expr> index) {
  Operation made = make_compute(output_names(*op), op->shape, op->axis, std::move(bodies));
  auto n = std::const_pointer_cast<OperationNode>(made);
  n->scatter_base = std::move(base);
  n->scatter_index = std::move(index);
  n->inputs = reads_of(*n);
  return n;
}

}  // namespace

Operation make_compute(std::string name, std::vector<Expr> shape, std::vector<IterVar> axis, Expr body) {
  return make_compute(std::vector<std::string>{std::move(name)}, std::move(shape), std::move(axis),
                      std::vector<Expr>{std::move(body)});
}

std::vector<std::string> output_names(const OperationNode& op) {
  std::vector<std::string> out;
  for (int i = 0; i < op.num_outputs(); ++i) out.push_back(op.output_name(i));
  return out;
}

Operation with_bodies(const Operation& op, std::vector<Expr> bodies) {
  return rebuild(op, std::move(bodies), op->scatter_base, op->scatter_index);
}

Operation map_bodies(const Operation& op, const std::function<Expr(const Expr&)>& fn,
                     const std::map<const OperationNode*, Operation>& new_ops) {
  std::vector<Expr> bodies, index;
  bool changed = false;
  for (const Expr& b : op->bodies()) {
    bodies.push_back(fn(b));
    changed = changed || !bodies.back().same_as(b);
  }
  for (const Expr& e : op->scatter_index) {
    index.push_back(fn(e));
    changed = changed || !index.back().same_as(e);
  }
  Operation base = op->scatter_base;
  if (auto it = new_ops.find(base.get()); base && it != new_ops.end()) {
    base = it->second;
    changed = true;
  }
  return changed ? rebuild(op, std::move(bodies), std::move(base), std::move(index)) : op;
}

Expr replace_reads(const Expr& e, const std::map<const OperationNode*, Operation>& repl) {
  if (repl.empty()) return e;
  ReadReplacer r(repl);
  return r.mutate(e);
}

void propagate_replacements(ScheduleNode& s, std::map<const OperationNode*, Operation> repl) {
  for (auto& st : s.stages) {
    if (st->op->kind != OpKind::Compute) continue;
    Operation next = map_bodies(st->op, [&](const Expr& b) { return replace_reads(b, repl); }, repl);
    if (next == st->op) continue;
    repl[st->op.get()] = next;
    st->op = next;
  }
}

const StageNode* scatter_of_base(const ScheduleNode& s, const OperationNode* op) {
  for (const auto& st : s.stages)
    if (st->op->scatter_base.get() == op) return st.get();
  return nullptr;
}

void refuse_scatter_parts(const ScheduleNode& s, const OperationNode& op, const char* primitive, const char* what) {
  if (op.is_scatter())
    throw Error(fmt::format("{}: stage {} is a scatter, which writes anywhere in its output, so it cannot be {}; "
                            "it is computed at the root",
                            primitive, quote(op.name), what));
  if (const StageNode* sc = scatter_of_base(s, &op))
    throw Error(fmt::format("{}: stage {} is the base of scatter {}, which fills its output in place before the "
                            "scatter runs, so it cannot be {}; it is computed at the root",
                            primitive, quote(op.name), quote(sc->op->name), what));
}

const StageNode* bound_reader_of(const ScheduleNode& s, const OperationNode* op) {
  for (const auto& st : s.stages)
    if (st->op->kind == OpKind::Compute)
      for (const Operation& in : bound_reads_of(*st->op))
        if (in.get() == op) return st.get();
  return nullptr;
}

Expr rename_vars(const Expr& e, const std::vector<std::pair<Var, Expr>>& rename) {
  const auto* red = e.as<ReduceNode>();
  if (!red) return substitute(e, rename);
  std::vector<std::pair<Var, Expr>> map = rename;
  std::vector<IterVar> axes;
  bool changed = false;
  for (const IterVar& iv : red->axis) {
    Expr min = substitute(iv.dom().min, map), extent = substitute(iv.dom().extent, map);
    if (min.same_as(iv.dom().min) && extent.same_as(iv.dom().extent)) {
      axes.push_back(iv);
      continue;
    }
    IterVar fresh(Range::from_min_extent(min, extent), Var(iv.name(), iv.var().dtype()), IterVarType::Reduce);
    map.emplace_back(iv.var(), fresh.var());
    axes.push_back(fresh);
    changed = true;
  }
  if (!changed) return substitute(e, rename);
  std::vector<Expr> sources;
  for (const Expr& src : red->sources) sources.push_back(substitute(src, map));
  Expr cond = red->condition.defined() ? substitute(red->condition, map) : Expr();
  return Expr(std::make_shared<ReduceNode>(red->dtype, red->reducer, red->combiner, sources, axes, cond,
                                           red->value_index));
}

bool has_dependent_bounds(const IterVar& iv, const OperationNode& op) {
  std::vector<Var> vars;
  for (const IterVar& a : op.axis) vars.push_back(a.var());
  for (const IterVar& a : op.reduce_axis) vars.push_back(a.var());
  for (const Expr& e : {iv.dom().min, iv.dom().extent}) {
    if (!reads_of(e).empty()) return true;
    for (const Var& v : vars)
      if (simp::uses_var(e, v.get())) return true;
  }
  return false;
}

std::string describe_attr(const IterVarAttr& attr) {
  switch (attr.kind) {
    case ForKind::Serial: return "serial";
    case ForKind::Parallel: return "parallel";
    case ForKind::Vectorized: return "vectorized";
    case ForKind::Unrolled: return "unrolled";
    case ForKind::ThreadBinding: return "bound to " + attr.thread->thread_tag;
  }
  return "annotated";
}

}  // namespace te::sched
