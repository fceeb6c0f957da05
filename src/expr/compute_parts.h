// The steps every compute-like constructor shares (compute, compute_tuple, scatter).
#pragma once
#include <string>
#include <vector>

#include "te/tensor.h"

namespace te::compute_parts {

// Each dimension defined, a scalar integer and not a negative constant; `what` names the
// constructor in the error.
void check_shape(const std::vector<Expr>& shape, const std::string& name, const char* what);

// The axes of an iteration space `shape` (appended to op.axis), one variable per
// dimension, named by axis_names or "i", "j", ...
std::vector<Var> make_axes(OperationNode& op, const std::vector<Expr>& shape,
                           const std::vector<std::string>& axis_names, const char* what);

// A defined scalar body.
void check_body(const Expr& body, const std::string& name, const char* what);

// Fills op's inputs (a scatter's base, then what its bodies, reduce-axis bounds and
// more_reads read) and its reduce axes; reductions only at the top of a body.
void finish_compute(OperationNode& op, const std::vector<Expr>& bodies, const std::vector<Expr>& more_reads = {});

}  // namespace te::compute_parts
