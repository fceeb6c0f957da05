// call_extern in the interpreter: the registered host function, called once per lane
// (only for the lanes a mask leaves active, as the JIT does), its result brought to the
// call's type the way every lane of that type is held (value.h).
#include <vector>

#include "expr/int_arith.h"
#include "interpret/interpreter.h"
#include "interpret/lane_ops.h"

namespace te::interp {
namespace {

ExternValue to_extern(Scalar s, DataType t) {
  ExternValue v;
  if (t.is_float())
    v.f = s.f;
  else
    v.i = s.i;
  return v;
}

// A host function may return what its type cannot hold (a float32 function written with
// double arithmetic, an int8 one returning 300): the lane gets what C's conversion to
// the type would give (rounded to nearest, wrapped).
Scalar from_extern(ExternValue v, DataType t) {
  if (t.is_float()) return float_scalar(round_to_float_type(v.f, t));
  if (t.is_bool()) return int_scalar(v.i != 0);
  return int_scalar(arith::wrap(v.i, t));
}

Scalar call(const CExpr* e, const std::vector<ExternValue>& args) {
  return from_extern(e->host->fn(args.data()), e->type.element_of());
}

}  // namespace

Scalar Interpreter::eval_extern(const CExpr* e, Frame& f) {
  std::vector<ExternValue> args;
  args.reserve(e->args.size());
  for (const CExpr* a : e->args) args.push_back(to_extern(eval(a, f), a->type));
  return call(e, args);
}

void Interpreter::eval_vector_extern(const CExpr* e, Frame& f, const LaneVec* mask, LaneVec& out) {
  const int n = e->type.lanes();
  std::vector<LaneVec> lanes(e->args.size());
  for (size_t k = 0; k < e->args.size(); ++k) eval_lanes(e->args[k], f, mask, n, lanes[k]);
  std::vector<ExternValue> args(e->args.size());
  out.resize(n);  // masked-off lanes read as zero
  for (int lane = 0; lane < n; ++lane) {
    if (mask && (*mask)[lane].i == 0) continue;
    for (size_t k = 0; k < args.size(); ++k) args[k] = to_extern(lanes[k][lane], e->args[k]->type);
    out[lane] = call(e, args);
  }
}

}  // namespace te::interp
