/// \file
/// Reverse-mode differentiation of tensor expressions (TVM's te.gradient): the adjoint of
/// each input as plain computes, which the user schedules (or auto_schedule schedules)
/// like any other.
///
///     Tensor A = placeholder({n, k}, Float(32), "A"), B = placeholder({k, m}, Float(32), "B");
///     Tensor C = ops::matmul(A, B, "C");
///     std::vector<Tensor> d = gradient(C, {A, B});  // d[0] = dC . B^T, d[1] = A^T . dC
///
/// What is differentiated today: element-wise computes and the math library (every
/// function with a derivative; floor, round and comparisons give zero), casts, select and
/// if_then_else (the taken side's gradient), min/max (the chosen operand's), let, and sum
/// reductions (with a where condition), through any graph of computes. Each read of a
/// tensor must index it by loop variables of the reading compute, each variable once per
/// read (element-wise, broadcast, transpose, reductions over axes, matmul); other reads
/// are a te::Error naming them.
#pragma once
#include <vector>

#include "te/export.h"
#include "te/tensor.h"

namespace te {

/// The adjoints of `inputs` for `output`: one tensor per input, of its shape and type,
/// holding d(sum of head * output) / d input. head is output's adjoint (undefined: ones).
/// An input the output does not depend on gets zeros. te::Error naming the problem for an
/// undefined tensor, an input given twice, an integer output or input, a head of another
/// shape or type, a scatter, tuple or custom-reducer stage on the way, a read indexed by
/// other than loop variables, or an operation without a derivative.
TE_API std::vector<Tensor> gradient(const Tensor& output, const std::vector<Tensor>& inputs,
                                    const Tensor& head = Tensor());

}  // namespace te
