// The function's parameters: the argument buffers in order, then every scalar variable
// the function uses that no argument's shape binds (a dimension that is exactly a
// variable binds it), in order of first appearance: argument shapes first, then the body.
#include <set>

#include "expr/analysis.h"
#include "lower/passes.h"

namespace te::lowering {

std::vector<Param> make_params(const LowerContext& ctx, const Stmt& body) {
  std::vector<Param> params;
  std::set<const VarNode*> taken = bound_vars(body);  // bound inside, or by an argument's shape
  for (const Buffer& buf : ctx.arg_buffers) {
    Param p;
    p.buffer = buf;
    params.push_back(p);
    for (const Expr& e : buf.shape())
      if (const auto* v = e.as<VarNode>()) taken.insert(v);
  }
  std::vector<Var> used;
  for (const Buffer& buf : ctx.arg_buffers)
    for (const Expr& e : buf.shape())
      for (const Var& v : free_vars(e)) used.push_back(v);
  for (const Var& v : mentions(body).vars) used.push_back(v);
  for (const Var& v : used) {
    if (!taken.insert(v.get()).second) continue;
    Param p;
    p.var = v;
    params.push_back(p);
  }
  return params;
}

}  // namespace te::lowering
