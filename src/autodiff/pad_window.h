// A gather's window condition moved into the data: a convolution's input gradient sums,
// over the taps, the output gradient at the output rows a tap reaches, and only where
// that row lies inside the output. When the variables that must stay in range appear in
// the term only as whole indices of one tensor (the adjoint), reading that tensor
// zero-padded by the window's reach beyond its edges gives the same sum with no
// condition: a reduction without a guard, whose vector code needs no masks (PyTorch and
// TVM compute the input gradient as a convolution of the padded output gradient).
#pragma once
#include <optional>
#include <vector>

#include "autodiff/solve_read.h"
#include "te/tensor.h"

namespace te::autodiff {

// The term (in the reading compute's loop variables) with the tensor read through a
// zero-padded copy, valid where g.other holds; nullopt when g's range checks are not of
// that form (a strided read, a checked variable used elsewhere in the term, in an index
// expression or in reads of two tensors, or a reach that is not constant).
std::optional<Expr> read_padded(const Gather& g, const Expr& term, const std::vector<Expr>& x_shape,
                                const std::vector<Var>& j, const std::vector<const LoopVar*>& free);

}  // namespace te::autodiff
