#include "codegen_llvm/shape_eval.h"

#include "expr/analysis.h"

namespace te::codegen {

std::optional<int64_t> eval_shape_expr(const Expr& e, const IntBindings& env) {
  return evaluate_int(e, [&](const VarNode* v) -> std::optional<int64_t> {
    auto it = env.find(v);
    if (it == env.end()) return std::nullopt;
    return it->second;
  });
}

}  // namespace te::codegen
