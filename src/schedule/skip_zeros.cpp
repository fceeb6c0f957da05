// skip_zeros: rewrites a sum's reduction axes so that it visits only the points where a
// producer of the form if_then_else(... && y % S == 0 && ..., value, 0) (or a copy of one)
// can be nonzero.
// Read at y = r + e (r a reduction axis), the test holds for one residue of r modulo S:
// r = r0 + S * t with r0 the first such r, and t the new axis "<r>.nz".
#include <fmt/format.h>

#include <variant>

#include "expr/analysis.h"
#include "schedule/graph_queries.h"
#include "schedule/messages.h"
#include "schedule/operation_builders.h"
#include "schedule/skip_zeros.h"
#include "schedule/stage_lookup.h"
#include "te/schedule.h"
#include "te/simplify.h"

namespace te {

using sched::quote;

namespace sched {

namespace {

bool is_factor_of(const Expr& e, const TensorReadNode* read) {
  if (e.get() == read) return true;
  if (const auto* c = e.as<CastNode>()) return is_factor_of(c->value, read);
  if (const auto* b = e.as<BinaryNode>(); b && b->op == BinOp::Mul)
    return is_factor_of(b->a, read) || is_factor_of(b->b, read);
  return false;
}

// The condition of a producer `if_then_else(cond, value, 0)` (or a select) in its axes,
// or of the one it copies (a cache_read, inputs by phase: `copy(i) = p(f(i))` gives
// cond(f(i))); undefined when it has no such form.
Expr zero_else_condition(const Operation& op, int value_index) {
  if (op->kind != OpKind::Compute || op->is_scatter() || op->is_row_reduction()) return Expr();
  const Expr body = op->bodies()[static_cast<size_t>(value_index)];  // (bodies() is a copy)
  if (const auto* c = body.as<CallNode>(); c && c->op == Intrinsic::IfThenElse && c->args.size() == 3)
    return is_zero(c->args[2]) ? c->args[0] : Expr();
  if (const auto* s = body.as<SelectNode>()) return is_zero(s->false_value) ? s->cond : Expr();
  if (const auto* read = body.as<TensorReadNode>();
      read && read->op->kind == OpKind::Compute && !read->op->body.as<ReduceNode>()) {
    Expr cond = zero_else_condition(read->op, read->value_index);
    if (!cond.defined()) return cond;
    std::vector<std::pair<Var, Expr>> at_read;
    for (size_t d = 0; d < read->op->axis.size(); ++d) at_read.emplace_back(read->op->axis[d].var(), read->indices[d]);
    return substitute(cond, at_read);
  }
  return Expr();
}

}  // namespace

ZeroFactor zero_factor_tests(const ScheduleNode& sch, const StageNode& st, const Tensor& producer) {
  const Operation& op = st.op;
  const std::string who = quote(op->name);
  auto refuse = [](std::string why) { return ZeroFactor{std::move(why), {}}; };
  if (!producer.defined()) return refuse(fmt::format("undefined producer tensor given for stage {}", who));
  auto pst = find_stage(sch, producer.op().get());
  if (!pst) return refuse(fmt::format("tensor {} is not part of this schedule", quote(producer.name())));
  const Operation& prod = pst->op;
  const auto* red = op->kind == OpKind::Compute ? op->body.as<ReduceNode>() : nullptr;
  if (!red || op->is_scatter() || op->is_row_reduction() || red->reducer != Reducer::Sum || red->sources.size() != 1)
    return refuse(fmt::format("stage {} is not a sum; only a sum's zero terms can be skipped", who));
  if (prod->kind != OpKind::Compute || prod->body.as<ReduceNode>())
    return refuse(
        fmt::format("{} is not an element-wise compute if_then_else(cond, value, 0)", quote(producer.name())));
  Expr cond = zero_else_condition(prod, producer.value_index());
  if (!cond.defined())
    return refuse(
        fmt::format("{} is not of the form if_then_else(cond, value, 0), nor a copy of one: it has no zeros to skip",
                    quote(producer.name())));
  const Expr& source = red->sources[0];
  const TensorReadNode* read = nullptr;
  for (const TensorReadNode* r : tensor_reads(source)) {
    if (r->op != prod || r->value_index != producer.value_index()) continue;
    if (read)
      return refuse(
          fmt::format("stage {} reads {} more than once; its zeros are skipped at one read", who, quote(prod->name)));
    read = r;
  }
  if (!read) return refuse(fmt::format("stage {} does not read {}", who, quote(prod->name)));
  if (!is_factor_of(source, read))
    return refuse(
        fmt::format("the value stage {} sums is not a product with {} as a factor, so the points skipped would not "
                    "add zero",
                    who, quote(prod->name)));
  std::vector<std::pair<Var, Expr>> at_read;
  for (size_t d = 0; d < prod->axis.size(); ++d) at_read.emplace_back(prod->axis[d].var(), read->indices[d]);
  ZeroFactor out;
  for (const Expr& test : conjuncts(cond)) out.tests.push_back(substitute(test, at_read));
  return out;
}

bool is_untouched_leaf(const StageNode& st, const IterVar& r) {
  if (index_of(st.leaf_iter_vars, r) < 0 || st.attrs.count(r.get())) return false;
  for (const Relation& rel : st.relations) {
    if (const auto* s = std::get_if<SplitRelation>(&rel); s && s->parent.same_as(r)) return false;
    if (const auto* f = std::get_if<FuseRelation>(&rel); f && (f->outer.same_as(r) || f->inner.same_as(r)))
      return false;
    if (const auto* g = std::get_if<SingletonRelation>(&rel); g && g->iv.same_as(r)) return false;
  }
  return true;
}

}  // namespace sched

namespace {

// For a conjunct `m(q, S) == 0` (m: % or truncmod, S > 1 constant): q and S.
bool residue_test(const Expr& e, Expr& q, int64_t& step) {
  const auto* eq = e.as<BinaryNode>();
  if (!eq || eq->op != BinOp::EQ) return false;
  const Expr& m = is_zero(eq->b) ? eq->a : is_zero(eq->a) ? eq->b : Expr();
  const auto* mod = m.defined() ? m.as<BinaryNode>() : nullptr;
  if (!mod || (mod->op != BinOp::Mod && mod->op != BinOp::TruncMod)) return false;
  const int64_t* s = as_const_int(mod->b);
  if (!s || *s < 2) return false;
  q = mod->a;
  step = *s;
  return true;
}

// One reduction axis visited by steps of its residue class.
struct Lattice {
  IterVar axis;   // the original reduction axis r
  Expr first;     // r0: the first r of the class (an expression of the stage's axes)
  int64_t step;   // S
  IterVar steps;  // t: r = r0 + S * t
  Expr inside;    // r0 + S * t < end, or undefined when it always holds
};

using Plan = std::vector<Lattice>;

std::variant<Plan, std::string> plan(const ScheduleNode& sch, const StageNode& st, const Tensor& producer) {
  const Operation& op = st.op;
  const std::string who = quote(op->name);
  sched::ZeroFactor factor = sched::zero_factor_tests(sch, st, producer);
  if (!factor.refusal.empty()) return factor.refusal;
  const std::vector<Expr>& tests = factor.tests;
  Plan out;
  for (const Expr& test : tests) {
    Expr q;
    int64_t step = 0;
    if (!residue_test(test, q, step)) continue;
    const IterVar* axis = nullptr;
    int used = 0;
    for (const IterVar& r : op->reduce_axis)
      if (uses_var(q, r.var())) {
        axis = &r;
        ++used;
      }
    if (used != 1) continue;
    bool taken = false;
    for (const Lattice& l : out) taken = taken || l.axis.same_as(*axis);
    if (taken) continue;
    // q = q0 + k * r with k = +-1.
    const Var& rv = axis->var();
    const std::optional<LinearIn> linear = linear_in(q, rv);
    if (!linear || (linear->coef != 1 && linear->coef != -1)) continue;
    const int64_t* kc = &linear->coef;
    const Expr& q0 = linear->rest;
    if (!sched::is_untouched_leaf(st, *axis))
      return fmt::format("reduction axis {} of stage {} is already split, fused or annotated; call skip_zeros first",
                         quote(axis->name()), who);
    const int64_t* min = as_const_int(axis->dom().min);
    const int64_t* extent = as_const_int(axis->dom().extent);
    if (!min || !extent)
      return fmt::format("reduction axis {} of stage {} has bounds that are not constant", quote(axis->name()), who);
    // q0 + k r = 0 (mod S)  <=>  r = -k q0 (mod S), as k = 1/k.
    DataType t = rv.dtype();
    Expr offset = simplify((make_const(t, -*kc) * q0 - axis->dom().min) % make_const(t, step));
    int64_t count = (*extent + step - 1) / step;
    IterVar steps(Range::from_min_extent(make_zero(t), make_const(t, count)), Var(axis->name() + ".nz", t),
                  IterVarType::Reduce);
    Expr inside;
    if (*extent % step != 0) inside = offset + steps.var() * make_const(t, step) < axis->dom().extent;
    out.push_back({*axis, simplify(axis->dom().min + offset), step, steps, inside});
  }
  if (out.empty())
    return fmt::format(
        "the condition of {} has no test `y % S == 0` (S > 1 constant) of an axis y that stage {} reads at "
        "r + e or e - r for one of its reduction axes r",
        quote(producer.op()->name), who);
  return out;
}

}  // namespace

namespace sched {

ZeroSkipPlan plan_skip_zeros(const ScheduleNode& s, const StageNode& stage, const Tensor& producer) {
  auto planned = plan(s, stage, producer);
  if (const auto* why = std::get_if<std::string>(&planned)) return {*why, {}, 0};
  ZeroSkipPlan out;
  for (const Lattice& l : std::get<Plan>(planned)) {
    out.stride = out.stride == 0 || out.stride == l.step ? static_cast<int>(l.step) : -1;
    for (const IterVar& x : stage.op->axis)
      if (uses_var(l.first, x.var().get()) && index_of(out.by_phase, x) < 0) out.by_phase.push_back(x);
  }
  if (out.stride < 0) out.stride = 0;
  return out;
}

}  // namespace sched

void Stage::skip_zeros(const Tensor& producer) {
  StageNode& st = *node_;
  auto planned = plan(*schedule_, st, producer);
  if (auto* why = std::get_if<std::string>(&planned)) throw Error("skip_zeros: " + *why);
  const Plan& lattices = std::get<Plan>(planned);
  const auto* red = st.op->body.as<ReduceNode>();
  std::vector<std::pair<Var, Expr>> subst;
  Expr cond = red->condition;
  std::vector<IterVar> axes = red->axis;
  for (const Lattice& l : lattices) {
    subst.emplace_back(l.axis.var(), simplify(l.first + l.steps.var() * make_const(l.axis.var().dtype(), l.step)));
    axes[static_cast<size_t>(sched::index_of(axes, l.axis))] = l.steps;
    if (l.inside.defined()) cond = cond.defined() ? (cond && l.inside) : l.inside;
    for (auto* list : {&st.all_iter_vars, &st.leaf_iter_vars})
      (*list)[static_cast<size_t>(sched::index_of(*list, l.axis))] = l.steps;
  }
  if (cond.defined()) cond = substitute(cond, subst);
  Expr body(std::make_shared<ReduceNode>(red->dtype, Reducer::Sum, substitute(red->sources[0], subst), axes, cond));
  sched::replace_definition(*schedule_, st, sched::with_bodies(st.op, {body}));
}

}  // namespace te
