// Builds an IR node of type T from its fields: the one constructor helper that the
// expression and statement builders, the folder and the simplifier share.
#pragma once
#include <memory>
#include <utility>

#include "te/expr.h"
#include "te/ir.h"

namespace te {

template <typename T, typename... A>
Expr make_expr(A&&... args) {
  return Expr(std::make_shared<const T>(std::forward<A>(args)...));
}

template <typename T, typename... A>
Stmt make_stmt(A&&... args) {
  return Stmt(std::make_shared<const T>(std::forward<A>(args)...));
}

}  // namespace te
