#include "lower/allreduce_marker.h"

namespace te::lowering {

Expr combine_with(Reducer r, const Expr& a, const Expr& b) {
  switch (r) {
    case Reducer::Sum: return a + b;
    case Reducer::Prod: return a * b;
    case Reducer::Min: return min(a, b);
    case Reducer::Max: return max(a, b);
  }
  TE_ICHECK(false, "combine_with: unknown reducer");
  return a;
}

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

// Arguments: accumulator, predicate, reducer (an int), then the thread variables.
Stmt make_allreduce_marker(const AllreduceMarker& m) {
  std::vector<Expr> args{m.accumulator, m.predicate, make_const(Int(32), static_cast<int64_t>(m.reducer))};
  for (const Var& v : m.threads) args.push_back(v);
  return evaluate(Expr(std::make_shared<CallNode>(m.accumulator.dtype(), Intrinsic::ThreadAllreduce, args)));
}

std::optional<AllreduceMarker> as_allreduce_marker(const Stmt& s) {
  const auto* ev = s.as<EvaluateNode>();
  const auto* call = ev ? ev->value.as<CallNode>() : nullptr;
  if (!call || call->op != Intrinsic::ThreadAllreduce) return std::nullopt;
  TE_ICHECK(call->args.size() >= 3 && call->args[0].as<LoadNode>(), "malformed thread_allreduce marker");
  AllreduceMarker m;
  m.accumulator = call->args[0];
  m.predicate = call->args[1];
  m.reducer = static_cast<Reducer>(*as_const_int(call->args[2]));
  for (size_t k = 3; k < call->args.size(); ++k) {
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
