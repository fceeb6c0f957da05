// The derivative of a compute body with respect to one of its tensor reads (forward mode,
// symbolic): the rules of each operator and math function, with zeros dropped as they
// arise, so a body that reads a tensor once gives one term, not a sum of zero Jacobians.
#pragma once
#include <string>

#include "te/expr.h"

namespace te::autodiff {

// d e / d site, where site is one TensorRead node of e (by identity: a node e holds twice
// counts twice). Integer and bool parts have derivative zero. te::Error, naming `where`,
// for what has no derivative: a call outside te, a warp shuffle, a reduction inside an
// expression, float modulo.
Expr derivative(const Expr& e, const TensorReadNode* site, const std::string& where);

// a + b and a * b without the terms a zero makes (derivatives are mostly zeros).
Expr add(const Expr& a, const Expr& b);
Expr mul(const Expr& a, const Expr& b);

}  // namespace te::autodiff
