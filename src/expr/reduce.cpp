// Reductions: the built-in reducers (sum, prod, min, max), user reducers (comm_reducer)
// over one value or a tuple, and the tuple reducers te ships (argmax, argmin, welford).
#include <fmt/format.h>

#include <map>
#include <unordered_set>

#include "expr/reduce_rule.h"
#include "te/ir.h"
#include "te/tensor.h"

namespace te {

namespace {

void check_axes_and_where(const char* what, const std::vector<IterVar>& axis, const Expr& where) {
  if (axis.empty()) throw Error(fmt::format("{}: needs at least one reduction axis", what));
  for (size_t i = 0; i < axis.size(); ++i) {
    const IterVar& iv = axis[i];
    if (!iv.defined()) throw Error(fmt::format("{}: a reduction axis is undefined", what));
    for (size_t j = 0; j < i; ++j)
      if (axis[j].same_as(iv)) throw Error(fmt::format("{}: reduction axis '{}' is listed twice", what, iv.name()));
    if (iv.type() != IterVarType::Reduce)
      throw Error(fmt::format("{}: axis '{}' is not a reduction axis (make it with reduce_axis)", what, iv.name()));
  }
  if (where.defined() && (!where.dtype().is_bool() || !where.dtype().is_scalar()))
    throw Error(fmt::format("{}: the where condition must be a scalar bool, got {}", what, where.dtype().to_string()));
}

void check_source(const char* what, const Expr& source) {
  if (!source.defined()) throw Error(fmt::format("{}: an operand is undefined (a default-constructed Expr)", what));
  if (source.dtype().is_bool()) throw Error(fmt::format("{}: cannot reduce bool values (cast them first)", what));
  if (source.dtype().is_vector())
    throw Error(fmt::format("{}: the source must be a scalar, got {}", what, source.dtype().to_string()));
}

// A reducer's rule may use only its own partial results: no tensors, loads or other
// variables (it is evaluated wherever lowering puts the combination).
class RuleChecker : public IRVisitor {
 public:
  RuleChecker(const std::string& reducer, const char* part, std::unordered_set<const VarNode*> allowed)
      : reducer_(reducer), part_(part), allowed_(std::move(allowed)) {}

 protected:
  void visit_var(const VarNode* n) override {
    if (!allowed_.count(n))
      throw Error(fmt::format("comm_reducer '{}': the {} uses variable '{}', which is not one of its arguments",
                              reducer_, part_, n->name));
  }
  void visit_tensor_read(const TensorReadNode* n) override {
    throw Error(fmt::format("comm_reducer '{}': the {} reads tensor '{}'; it may use only its arguments", reducer_,
                            part_, n->op->name));
  }
  void visit_load(const LoadNode* n) override {
    throw Error(fmt::format("comm_reducer '{}': the {} loads from buffer '{}'; it may use only its arguments", reducer_,
                            part_, n->buffer.name()));
  }
  void visit_reduce(const ReduceNode*) override {
    throw Error(fmt::format("comm_reducer '{}': the {} contains a reduction", reducer_, part_));
  }

 private:
  const std::string& reducer_;
  const char* part_;
  std::unordered_set<const VarNode*> allowed_;
};

void check_rule_values(const std::string& name, const char* part, const std::vector<Expr>& values,
                       const std::vector<DataType>& types) {
  if (values.size() != types.size())
    throw Error(fmt::format("comm_reducer '{}': the {} gives {} values for {} sources", name, part, values.size(),
                            types.size()));
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i].defined())
      throw Error(fmt::format("comm_reducer '{}': the {}'s value {} is undefined", name, part, i));
    if (values[i].dtype() != types[i])
      throw Error(fmt::format("comm_reducer '{}': the {}'s value {} is {} but source {} is {}", name, part, i,
                              values[i].dtype().to_string(), i, types[i].to_string()));
  }
}

std::vector<Expr> make_reduces(Reducer r, std::shared_ptr<const CommReducerNode> comb, const std::vector<Expr>& sources,
                               const std::vector<IterVar>& axis, const Expr& where) {
  std::vector<Expr> out;
  for (size_t i = 0; i < sources.size(); ++i)
    out.emplace_back(
        std::make_shared<const ReduceNode>(sources[i].dtype(), r, comb, sources, axis, where, static_cast<int>(i)));
  return out;
}

}  // namespace

Expr reduce(Reducer r, Expr source, const std::vector<IterVar>& axis, Expr where) {
  const char* what = reducer_name(r);
  if (r == Reducer::Custom) throw Error("reduce: a custom reducer is applied through its CommReducer");
  check_source(what, source);
  check_axes_and_where(what, axis, where);
  return Expr(std::make_shared<const ReduceNode>(source.dtype(), r, source, axis, where));
}
Expr sum(Expr s, const std::vector<IterVar>& axis, Expr where) {
  return reduce(Reducer::Sum, std::move(s), axis, std::move(where));
}
Expr prod(Expr s, const std::vector<IterVar>& axis, Expr where) {
  return reduce(Reducer::Prod, std::move(s), axis, std::move(where));
}
Expr min(Expr s, const std::vector<IterVar>& axis, Expr where) {
  return reduce(Reducer::Min, std::move(s), axis, std::move(where));
}
Expr max(Expr s, const std::vector<IterVar>& axis, Expr where) {
  return reduce(Reducer::Max, std::move(s), axis, std::move(where));
}

Expr sum(Expr s, std::initializer_list<IterVar> axis, Expr where) {
  return reduce(Reducer::Sum, std::move(s), axis, std::move(where));
}
Expr prod(Expr s, std::initializer_list<IterVar> axis, Expr where) {
  return reduce(Reducer::Prod, std::move(s), axis, std::move(where));
}
Expr min(Expr s, std::initializer_list<IterVar> axis, Expr where) {
  return reduce(Reducer::Min, std::move(s), axis, std::move(where));
}
Expr max(Expr s, std::initializer_list<IterVar> axis, Expr where) {
  return reduce(Reducer::Max, std::move(s), axis, std::move(where));
}

// ---- User reducers ----

CommReducer::CommReducer(std::string name, Combine combine, Identity identity)
    : name_(std::move(name)), combine_(std::move(combine)), identity_(std::move(identity)) {
  if (!combine_ || !identity_)
    throw Error(fmt::format("comm_reducer '{}': the combine and identity functions must be given", name_));
}

std::vector<Expr> CommReducer::operator()(std::vector<Expr> sources, const std::vector<IterVar>& axis,
                                          Expr where) const {
  const std::string what = fmt::format("comm_reducer '{}'", name_);
  if (sources.empty()) throw Error(fmt::format("{}: needs at least one source", what));
  std::vector<DataType> types;
  for (const Expr& s : sources) {
    check_source(what.c_str(), s);
    types.push_back(s.dtype());
  }
  check_axes_and_where(what.c_str(), axis, where);

  auto rule = std::make_shared<CommReducerNode>();
  rule->name = name_;
  std::unordered_set<const VarNode*> args;
  std::vector<Expr> lhs, rhs;
  for (size_t i = 0; i < types.size(); ++i) {
    rule->lhs.emplace_back(fmt::format("{}.a{}", name_, i), types[i]);
    rule->rhs.emplace_back(fmt::format("{}.b{}", name_, i), types[i]);
    lhs.push_back(rule->lhs.back());
    rhs.push_back(rule->rhs.back());
    args.insert({rule->lhs.back().get(), rule->rhs.back().get()});
  }
  rule->result = combine_(lhs, rhs);
  check_rule_values(name_, "combine", rule->result, types);
  for (const Expr& e : rule->result) RuleChecker(name_, "combine", args).visit(e);
  rule->identity = identity_(types);
  check_rule_values(name_, "identity", rule->identity, types);
  for (const Expr& e : rule->identity) RuleChecker(name_, "identity", {}).visit(e);
  return make_reduces(Reducer::Custom, rule, sources, axis, where);
}

Expr CommReducer::operator()(Expr source, const std::vector<IterVar>& axis, Expr where) const {
  return (*this)(std::vector<Expr>{std::move(source)}, axis, std::move(where))[0];
}

CommReducer comm_reducer(std::function<Expr(Expr, Expr)> combine, std::function<Expr(DataType)> identity,
                         std::string name) {
  if (!combine || !identity)
    throw Error(fmt::format("comm_reducer '{}': the combine and identity functions must be given", name));
  return CommReducer(
      std::move(name),
      [combine](const std::vector<Expr>& a, const std::vector<Expr>& b) {
        return std::vector<Expr>{combine(a[0], b[0])};
      },
      [identity](const std::vector<DataType>& t) { return std::vector<Expr>{identity(t[0])}; });
}

CommReducer comm_reducer(CommReducer::Combine combine, CommReducer::Identity identity, std::string name) {
  return CommReducer(std::move(name), std::move(combine), std::move(identity));
}

// ---- Row reducers ----

RowReducer::RowReducer(std::string name, RowCombine row, ElementCombine element, CommReducer::Identity row_identity,
                       CommReducer::Identity element_identity)
    : name_(std::move(name)),
      row_(std::move(row)),
      element_(std::move(element)),
      row_identity_(std::move(row_identity)),
      element_identity_(std::move(element_identity)) {
  if (!row_ || !element_ || !row_identity_ || !element_identity_)
    throw Error(fmt::format("row reducer '{}': the row and element rules and both identities must be given", name_));
}

namespace {

std::vector<DataType> checked_types(const std::string& what, const char* part, const std::vector<Expr>& sources) {
  if (sources.empty()) throw Error(fmt::format("{}: needs at least one {} source", what, part));
  std::vector<DataType> types;
  for (const Expr& e : sources) {
    check_source(what.c_str(), e);
    types.push_back(e.dtype());
  }
  return types;
}

// Fresh argument variables name.<tag><i>, one per type, recorded in `args`.
std::vector<Var> rule_vars(const std::string& name, const char* tag, size_t first, const std::vector<DataType>& types,
                           std::unordered_set<const VarNode*>& args) {
  std::vector<Var> out;
  for (size_t i = 0; i < types.size(); ++i) {
    out.emplace_back(fmt::format("{}.{}{}", name, tag, first + i), types[i]);
    args.insert(out.back().get());
  }
  return out;
}

std::vector<Expr> as_exprs(const std::vector<Var>& vars) { return std::vector<Expr>(vars.begin(), vars.end()); }

// Each use of a factor's own node (the Expr the row rule returned as a factor, reused in
// its values or later factors) becomes the factor's variable: computed once per step.
class FactorUses : public IRMutator {
 public:
  std::map<const ExprNode*, Var> factors;
  Expr mutate(const Expr& e) override {
    auto it = e.defined() ? factors.find(e.get()) : factors.end();
    return it != factors.end() ? Expr(it->second) : IRMutator::mutate(e);
  }
};

}  // namespace

std::vector<Expr> RowReducer::operator()(std::vector<Expr> row_sources, std::vector<Expr> element_sources,
                                         const std::vector<IterVar>& axis, Expr where) const {
  const std::string what = fmt::format("row reducer '{}'", name_);
  const std::vector<DataType> row_types = checked_types(what, "row", row_sources);
  const std::vector<DataType> element_types = checked_types(what, "element", element_sources);
  check_axes_and_where(what.c_str(), axis, where);

  auto rule = std::make_shared<CommReducerNode>();
  rule->name = name_;
  rule->row_values = static_cast<int>(row_types.size());
  std::unordered_set<const VarNode*> row_args, element_args;
  std::vector<Var> ra = rule_vars(name_, "a", 0, row_types, row_args);
  std::vector<Var> rb = rule_vars(name_, "b", 0, row_types, row_args);
  std::vector<Var> ea = rule_vars(name_, "a", row_types.size(), element_types, element_args);
  std::vector<Var> eb = rule_vars(name_, "b", row_types.size(), element_types, element_args);

  RowStep step = row_(as_exprs(ra), as_exprs(rb));
  check_rule_values(name_, "row rule", step.values, row_types);
  for (const Expr& e : step.values) RuleChecker(name_, "row rule", row_args).visit(e);
  FactorUses uses;
  for (size_t i = 0; i < step.factors.size(); ++i) {
    const Expr& f = step.factors[i];
    if (!f.defined()) throw Error(fmt::format("row reducer '{}': the row rule's factor {} is undefined", name_, i));
    RuleChecker(name_, "row rule's factors", row_args).visit(f);
    const bool named = i < step.factor_names.size() && !step.factor_names[i].empty();
    rule->factors.emplace_back(named ? step.factor_names[i] : fmt::format("{}.f{}", name_, i), f.dtype());
    rule->factor_values.push_back(uses.mutate(f));  // earlier factors by their variables
    uses.factors.emplace(f.get(), rule->factors.back());
    element_args.insert(rule->factors.back().get());
  }
  for (Expr& e : step.values) e = uses.mutate(e);
  std::vector<Expr> element_values = element_(as_exprs(ea), as_exprs(eb), as_exprs(rule->factors));
  check_rule_values(name_, "element rule", element_values, element_types);
  for (const Expr& e : element_values) RuleChecker(name_, "element rule", element_args).visit(e);

  rule->lhs = ra;
  rule->lhs.insert(rule->lhs.end(), ea.begin(), ea.end());
  rule->rhs = rb;
  rule->rhs.insert(rule->rhs.end(), eb.begin(), eb.end());
  rule->result = step.values;
  rule->result.insert(rule->result.end(), element_values.begin(), element_values.end());
  rule->identity = row_identity_(row_types);
  check_rule_values(name_, "row identity", rule->identity, row_types);
  std::vector<Expr> element_identity = element_identity_(element_types);
  check_rule_values(name_, "element identity", element_identity, element_types);
  rule->identity.insert(rule->identity.end(), element_identity.begin(), element_identity.end());
  for (const Expr& e : rule->identity) RuleChecker(name_, "identity", {}).visit(e);

  std::vector<Expr> sources = std::move(row_sources);
  sources.insert(sources.end(), element_sources.begin(), element_sources.end());
  return make_reduces(Reducer::Custom, rule, sources, axis, where);
}

namespace {

void check_float_values(const char* what, const std::vector<Expr>& values) {
  for (const Expr& v : values) {
    check_source(what, v);
    if (!v.dtype().is_float())
      throw Error(fmt::format("{}: the values must be floats, got {} (cast them)", what, v.dtype().to_string()));
  }
}

// {max, sum, acc...} of a softmax-weighted sum, combined as partial results: the new max,
// and each side's sum and acc rescaled by exp(its max - the new max).
RowReducer online_softmax_rule(DataType t) {
  // A partial result's weight: exp(its max - the new max), and 0 for an empty one (max
  // -inf), whose exp(-inf - -inf) would be NaN. The side holding the new max has weight
  // exp(0) = 1, so one exp serves both sides: exp(-|a - b|), the same value as exp(smaller
  // - larger) (a difference's rounding does not depend on its order). Where a - b is NaN
  // neither side holds the max and both weights are that NaN, so a NaN score still
  // spoils its row. (An infinite max now weighs 1 where exp(inf - inf) gave NaN: the
  // softmax's limit.)
  auto weight = [t](const Expr& partial_max, const Expr& holds_new_max, const Expr& other_weight) {
    return select(partial_max == min_value(t), make_zero(t), select(holds_new_max, make_const(t, 1.0), other_weight));
  };
  return RowReducer(
      "online_softmax",
      [weight, t](const std::vector<Expr>& a, const std::vector<Expr>& b) {
        Expr m = max(a[0], b[0]);
        Expr difference = a[0] - b[0];
        Expr zero = make_zero(t);
        Expr smaller = exp(-abs(difference));
        Expr wa = weight(a[0], difference >= zero, smaller), wb = weight(b[0], difference <= zero, smaller);
        return RowReducer::RowStep{{m, a[1] * wa + b[1] * wb},
                                   {m, difference, smaller, wa, wb},
                                   {"max_now", "max_gap", "scale_smaller", "scale_old", "scale_new"}};
      },
      [](const std::vector<Expr>& a, const std::vector<Expr>& b, const std::vector<Expr>& f) {
        std::vector<Expr> out;
        for (size_t i = 0; i < a.size(); ++i) {
          const DataType vt = a[i].dtype();
          out.push_back(a[i] * cast(vt, f[3]) + b[i] * cast(vt, f[4]));
        }
        return out;
      },
      [](const std::vector<DataType>& ts) {
        return std::vector<Expr>{min_value(ts[0]), make_zero(ts[1])};
      },
      [](const std::vector<DataType>& ts) {
        std::vector<Expr> out;
        for (const DataType& vt : ts) out.push_back(make_zero(vt));
        return out;
      });
}

}  // namespace

std::vector<Expr> online_softmax(Expr score, std::vector<Expr> values, const std::vector<IterVar>& axis, Expr where) {
  check_source("online_softmax", score);
  const DataType t = score.dtype();
  if (!t.is_float())
    throw Error(fmt::format("online_softmax: the score must be a float, got {} (cast it)", t.to_string()));
  check_float_values("online_softmax", values);
  return online_softmax_rule(t)({score, make_const(t, int64_t{1})}, std::move(values), axis, std::move(where));
}

std::vector<Expr> online_softmax_merge(Expr max, Expr sum, std::vector<Expr> values, const std::vector<IterVar>& axis,
                                       Expr where) {
  check_source("online_softmax_merge", max);
  check_source("online_softmax_merge", sum);
  const DataType t = max.dtype();
  if (!t.is_float() || sum.dtype() != t)
    throw Error(fmt::format("online_softmax_merge: the max and sum must be floats of one type, got {} and {}",
                            t.to_string(), sum.dtype().to_string()));
  check_float_values("online_softmax_merge", values);
  return online_softmax_rule(t)({max, sum}, std::move(values), axis, std::move(where));
}

// ---- The tuple reducers te ships ----

namespace {

// {index, value}: the extreme value, the first index on ties; NaN beats any number, and
// of two NaNs the first wins (PyTorch's argmax/argmin).
std::vector<Expr> arg_extreme(bool largest, const Expr& source, const std::vector<IterVar>& axis, const Expr& where) {
  const char* what = largest ? "argmax" : "argmin";
  check_source(what, source);
  if (axis.size() != 1)
    throw Error(
        fmt::format("{}: reduces over exactly one axis, got {} (fuse the axes into one first)", what, axis.size()));
  if (!axis[0].defined()) throw Error(fmt::format("{}: a reduction axis is undefined", what));
  const bool is_float = source.dtype().is_float();
  CommReducer rule(
      what,
      [largest, is_float](const std::vector<Expr>& a, const std::vector<Expr>& b) {
        const Expr &ia = a[0], &va = a[1], &ib = b[0], &vb = b[1];
        Expr better = largest ? va > vb : va < vb;
        Expr pick_a = better || (va == vb && ia < ib);
        if (is_float) pick_a = pick_a || (isnan(va) && (!isnan(vb) || ia < ib));
        return std::vector<Expr>{select(pick_a, ia, ib), select(pick_a, va, vb)};
      },
      [largest](const std::vector<DataType>& t) {
        return std::vector<Expr>{max_value(t[0]), largest ? min_value(t[1]) : max_value(t[1])};
      });
  return rule({axis[0].var(), source}, axis, where);
}

}  // namespace

std::vector<Expr> argmax(Expr source, const std::vector<IterVar>& axis, Expr where) {
  return arg_extreme(true, source, axis, where);
}
std::vector<Expr> argmin(Expr source, const std::vector<IterVar>& axis, Expr where) {
  return arg_extreme(false, source, axis, where);
}

std::vector<Expr> welford(Expr source, const std::vector<IterVar>& axis, Expr where) {
  check_source("welford", source);
  const DataType t = source.dtype();
  if (!t.is_float()) throw Error(fmt::format("welford: the source must be a float, got {} (cast it)", t.to_string()));
  CommReducer rule(
      "welford",
      [t](const std::vector<Expr>& a, const std::vector<Expr>& b) {
        const Expr &mean_a = a[0], &m2_a = a[1], &n_a = a[2], &mean_b = b[0], &m2_b = b[1], &n_b = b[2];
        Expr n = n_a + n_b;
        Expr delta = mean_b - mean_a;
        Expr w = select(n == make_zero(t), make_zero(t), n_b / n);  // b's share of the count
        return std::vector<Expr>{mean_a + delta * w, m2_a + m2_b + delta * delta * n_a * w, n};
      },
      [](const std::vector<DataType>& ts) {
        return std::vector<Expr>{make_zero(ts[0]), make_zero(ts[1]), make_zero(ts[2])};
      });
  return rule({source, make_zero(t), make_const(t, int64_t{1})}, axis, where);
}

// ---- The rule of each reducer, for lowering ----

Expr combine_with(Reducer r, const Expr& a, const Expr& b) {
  switch (r) {
    case Reducer::Sum: return a + b;
    case Reducer::Prod: return a * b;
    case Reducer::Min: return min(a, b);
    case Reducer::Max: return max(a, b);
    case Reducer::Custom: break;
  }
  TE_ICHECK(false, "combine_with: a custom reducer combines through its rule (reduce_combine)");
  return a;
}

std::vector<Expr> reduce_identity(const ReduceNode& r) {
  if (r.reducer != Reducer::Custom) return {reducer_identity(r.reducer, r.sources[0].dtype())};
  return r.combiner->identity;
}

std::vector<Expr> reduce_combine(const ReduceNode& r, const std::vector<Expr>& a, const std::vector<Expr>& b) {
  TE_ICHECK(a.size() == r.sources.size() && b.size() == r.sources.size(), "reduce_combine: wrong number of values");
  if (r.reducer != Reducer::Custom) return {combine_with(r.reducer, a[0], b[0])};
  std::vector<std::pair<Var, Expr>> args;
  for (size_t i = 0; i < a.size(); ++i) {
    args.emplace_back(r.combiner->lhs[i], a[i]);
    args.emplace_back(r.combiner->rhs[i], b[i]);
  }
  std::vector<Expr> out;
  for (Expr e : r.combiner->result) {
    // A row reducer's factors, the later ones first (they may use the earlier ones).
    for (size_t f = r.combiner->factors.size(); f-- > 0;)
      e = substitute(e, {{r.combiner->factors[f], r.combiner->factor_values[f]}});
    out.push_back(substitute(e, args));
  }
  return out;
}

}  // namespace te
