#include "lower/allreduce_marker.h"

namespace te::lowering {

namespace {
const std::string kAccumulatorSuffix = ".red";
}

std::string accumulator_name(const std::string& stage) { return stage + kAccumulatorSuffix; }

std::string stage_of_accumulator(const std::string& accumulator) {
  const size_t n = kAccumulatorSuffix.size();
  TE_ICHECK(accumulator.size() > n && accumulator.compare(accumulator.size() - n, n, kAccumulatorSuffix) == 0,
            "stage_of_accumulator: not an accumulator's name");
  return accumulator.substr(0, accumulator.size() - n);
}

// Arguments: the number of values n, the n accumulators, the predicate, the rule, then
// the thread variables.
Stmt make_allreduce_marker(const AllreduceMarker& m) {
  std::vector<Expr> args{make_const(Int(32), static_cast<int64_t>(m.accumulators.size()))};
  args.insert(args.end(), m.accumulators.begin(), m.accumulators.end());
  args.push_back(m.predicate);
  args.push_back(make_const(Int(32), static_cast<int64_t>(m.rule)));
  for (const Var& v : m.threads) args.push_back(v);
  return evaluate(Expr(std::make_shared<CallNode>(Int(32), Intrinsic::ThreadAllreduce, args)));
}

std::optional<AllreduceMarker> as_allreduce_marker(const Stmt& s) {
  const auto* ev = s.as<EvaluateNode>();
  const auto* call = ev ? ev->value.as<CallNode>() : nullptr;
  if (!call || call->op != Intrinsic::ThreadAllreduce) return std::nullopt;
  const int64_t* n = call->args.empty() ? nullptr : as_const_int(call->args[0]);
  TE_ICHECK(n && call->args.size() >= static_cast<size_t>(*n) + 3, "malformed thread_allreduce marker");
  AllreduceMarker m;
  size_t k = 1;
  for (; k <= static_cast<size_t>(*n); ++k) {
    TE_ICHECK(call->args[k].as<LoadNode>(), "thread_allreduce marker: an accumulator is not a Load");
    m.accumulators.push_back(call->args[k]);
  }
  m.predicate = call->args[k++];
  m.rule = static_cast<int>(*as_const_int(call->args[k++]));
  for (; k < call->args.size(); ++k) {
    // A thread loop of one iteration has had its variable replaced by its only value.
    if (!call->args[k].as<VarNode>()) {
      TE_ICHECK(as_const_int(call->args[k]), "thread_allreduce marker: a thread argument is not a variable");
      continue;
    }
    m.threads.push_back(Var(std::static_pointer_cast<const VarNode>(call->args[k].node())));
  }
  return m;
}

}  // namespace te::lowering
