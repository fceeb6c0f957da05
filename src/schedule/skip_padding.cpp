// skip_padding: narrows a sum's reduction axes to the taps where a producer that is zero
// outside a box (a zero padding: if_then_else(y >= lo && y < hi && ..., value, 0)) can be
// nonzero. Read at y = k * r + e, each bound on y bounds r by the stage's axes; r becomes an
// axis of the same name over [max(min, ...), min(end, ...)), bounds in the stage's axes (as a
// causal mask's keys per query are), so its loop runs over those taps alone.
#include <fmt/format.h>

#include <optional>
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

namespace {

// A test of integers `a >= b` (or >, <, <=) as k * r + c >= 0, with k a nonzero constant
// and c free of every reduction axis and of tensor reads; nullopt when it is not of that form.
struct HalfLine {
  int64_t k;
  Expr c;
};

std::optional<HalfLine> half_line(const Expr& test, const Var& r, const std::vector<IterVar>& reduce_axes) {
  const auto* b = test.as<BinaryNode>();
  if (!b || b->a.dtype() != r.dtype() || b->b.dtype() != r.dtype()) return std::nullopt;
  const Expr one = make_const(r.dtype(), 1);
  Expr d;  // the test is d >= 0
  switch (b->op) {
    case BinOp::GE: d = b->a - b->b; break;
    case BinOp::GT: d = b->a - b->b - one; break;
    case BinOp::LE: d = b->b - b->a; break;
    case BinOp::LT: d = b->b - b->a - one; break;
    default: return std::nullopt;
  }
  if (!uses_var(d, r)) return std::nullopt;
  const std::optional<LinearIn> linear = linear_in(simplify(d), r);
  if (!linear || linear->coef == 0 || !sched::reads_of(linear->rest).empty()) return std::nullopt;
  for (const IterVar& other : reduce_axes)
    if (uses_var(linear->rest, other.var())) return std::nullopt;
  return HalfLine{linear->coef, linear->rest};
}

// One reduction axis and the axis over the taps the producer's box leaves it.
struct Narrowed {
  IterVar axis;
  IterVar taps;
};

std::optional<IterVar> narrowed_axis(const IterVar& r, const std::vector<Expr>& tests,
                                     const std::vector<IterVar>& reduce_axes) {
  const DataType t = r.var().dtype();
  Expr lo = r.dom().min, end = r.dom().min + r.dom().extent;
  bool bounded = false;
  for (const Expr& test : tests) {
    const std::optional<HalfLine> h = half_line(test, r.var(), reduce_axes);
    if (!h) continue;
    bounded = true;
    // k * r + c >= 0: r >= ceil(-c / k) for k > 0; r <= floor(c / -k) for k < 0.
    if (h->k > 0) {
      const Expr k = make_const(t, h->k);
      lo = max(lo, h->k == 1 ? make_zero(t) - h->c : (k - 1 - h->c) / k);
    } else {
      const Expr m = make_const(t, -h->k);
      end = min(end, (h->k == -1 ? h->c : h->c / m) + 1);
    }
  }
  if (!bounded) return std::nullopt;
  lo = simplify(lo);
  return IterVar(Range::from_min_extent(lo, simplify(end - lo)), Var(r.name(), t), IterVarType::Reduce);
}

std::variant<std::vector<Narrowed>, std::string> plan_narrowing(const ScheduleNode& sch, const StageNode& st,
                                                                const Tensor& producer,
                                                                const std::vector<IterVar>& axes) {
  const sched::ZeroFactor factor = sched::zero_factor_tests(sch, st, producer);
  if (!factor.refusal.empty()) return factor.refusal;
  const std::string who = quote(st.op->name);
  const std::vector<IterVar>& reduce_axes = st.op->reduce_axis;
  for (const IterVar& r : axes)
    if (!r.defined() || sched::index_of(reduce_axes, r) < 0)
      return fmt::format("{} is not a reduction axis of stage {}", r.defined() ? quote(r.name()) : "an undefined axis",
                         who);
  std::vector<Narrowed> out;
  for (const IterVar& r : axes.empty() ? reduce_axes : axes) {
    std::optional<IterVar> taps = narrowed_axis(r, factor.tests, reduce_axes);
    if (!taps) {
      if (axes.empty()) continue;
      return fmt::format(
          "the condition of {} bounds no index that stage {} reads at k * r + e for its reduction axis {} "
          "(a test y >= lo or y < hi, k a constant, e free of the reduction axes)",
          quote(producer.name()), who, quote(r.name()));
    }
    if (!sched::is_untouched_leaf(st, r))
      return fmt::format(
          "reduction axis {} of stage {} is already split, fused or annotated; call skip_padding before "
          "scheduling it",
          quote(r.name()), who);
    for (const auto& other : sch.stages)
      if (other->attach_type == AttachType::Scope && other->attach_ivar.same_as(r))
        return fmt::format("stage {} is computed at reduction axis {} of stage {}; call skip_padding before compute_at",
                           quote(other->op->name), quote(r.name()), who);
    out.push_back({r, *taps});
  }
  if (out.empty())
    return fmt::format(
        "the condition of {} has no test y >= lo or y < hi of an index y that stage {} reads at k * r + e for "
        "a reduction axis r: it has no padding to skip",
        quote(producer.name()), who);
  return out;
}

}  // namespace

namespace sched {

PaddingPlan plan_skip_padding(const ScheduleNode& s, const StageNode& stage, const Tensor& producer,
                              const IterVar& axis) {
  auto planned = plan_narrowing(s, stage, producer, {axis});
  if (const auto* why = std::get_if<std::string>(&planned)) return {*why, IterVar()};
  return {"", std::get<std::vector<Narrowed>>(planned).at(0).taps};
}

}  // namespace sched

void Stage::skip_padding(const Tensor& producer, const std::vector<IterVar>& axes) {
  StageNode& st = *node_;
  auto planned = plan_narrowing(*schedule_, st, producer, axes);
  if (auto* why = std::get_if<std::string>(&planned)) throw Error("skip_padding: " + *why);
  const auto* red = st.op->body.as<ReduceNode>();
  std::vector<std::pair<Var, Expr>> subst;
  std::vector<IterVar> reduce_axes = red->axis;
  for (const Narrowed& n : std::get<std::vector<Narrowed>>(planned)) {
    subst.emplace_back(n.axis.var(), n.taps.var());
    for (auto* list : {&reduce_axes, &st.all_iter_vars, &st.leaf_iter_vars})
      (*list)[static_cast<size_t>(sched::index_of(*list, n.axis))] = n.taps;
  }
  Expr cond = red->condition.defined() ? substitute(red->condition, subst) : Expr();
  Expr body(
      std::make_shared<ReduceNode>(red->dtype, Reducer::Sum, substitute(red->sources[0], subst), reduce_axes, cond));
  sched::replace_definition(*schedule_, st, sched::with_bodies(st.op, {body}));
}

}  // namespace te
