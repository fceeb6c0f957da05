// Evaluates the integer expressions of buffer shapes for the argument checks.
#pragma once
#include <cstdint>
#include <optional>
#include <unordered_map>

#include "te/expr.h"

namespace te::codegen {

using IntBindings = std::unordered_map<const VarNode*, int64_t>;

// The value of an integer expression over the bound variables (te::evaluate_int, with
// te's integer semantics); nullopt when it reads an unbound variable or anything else.
std::optional<int64_t> eval_shape_expr(const Expr& e, const IntBindings& env);

}  // namespace te::codegen
