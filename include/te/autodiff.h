/// \file
/// Reverse-mode differentiation of tensor expressions (TVM's te.gradient): the adjoint of
/// each input as plain computes, which the user schedules (or auto_schedule schedules)
/// like any other.
///
///     Tensor A = placeholder({n, k}, Float(32), "A"), B = placeholder({k, m}, Float(32), "B");
///     Tensor C = ops::matmul(A, B, "C");
///     std::vector<Tensor> d = gradient(C, {A, B});  // d[0] = dC . B^T, d[1] = A^T . dC
///
/// What is differentiated: element-wise computes and the math library (every function
/// with a derivative; floor, round and comparisons give zero), casts, select and
/// if_then_else (the taken side's gradient), min/max (the chosen operand's), let, sum
/// reductions (with a where condition), max/min reductions (the chosen elements', ties
/// sharing evenly as PyTorch's amax), prod reductions (the other factors' product, exact
/// with zeros as PyTorch's prod), argmax/argmin tuple reductions (the value's gradient to
/// the chosen element) and element-wise compute_tuples, through any graph of computes. Each read site sends
/// its tensor one contribution:
///  - reads whose indices are affine in the loop variables (element-wise, broadcasts,
///    transposes, matmul, shifted, strided and dilated convolution windows, diagonals,
///    constant indices) get the gather form: a plain compute over the input's shape that
///    sums over the loops the read leaves free, where the read reaches each element;
///  - reads at computed positions (an index read from memory, as grid_sample's taps and
///    any gather; a division or a clamp of a loop variable) get a scatter-add over the
///    reading compute's axes whose value sums over its reduction axes, each term added at
///    its own position (te::scatter with ScatterTo::accumulate; the ranges may read
///    tensors, as bev_pool_v2's intervals do; atomic adds only where those loops run in
///    parallel over other than an output axis; 16-bit inputs accumulate in float32).
///    The contributions of one tensor share one buffer: the gathers' sum, then each
///    scatter-add in place.
/// Scatters that assign (te::scatter, as bev_pool_v2's output) send each point the
/// adjoint at the element it writes, and their base the adjoint where no point writes
/// (points are taken to write distinct elements, as the forward's result is otherwise
/// order-dependent). A marker NaN or infinity in a body (grid_sample's "not a tap" weight)
/// never turns a zero adjoint into NaN. Refused with a te::Error naming the compute:
/// scatter-adds, custom reductions and tuple reductions other than argmax/argmin
/// (welford), calls outside te.
#pragma once
#include <vector>

#include "te/export.h"
#include "te/tensor.h"

namespace te {

/// How te::gradient builds the adjoints.
struct GradientOptions {
  /// Scatter-adds (the adjoints of gathers) that add in the same order every run: their
  /// stages are ScatterTo::deterministic, so a schedule that would need atomic adds is a
  /// te::Error at lowering, and auto_schedule parallelizes them only over axes that index
  /// the adjoint directly (a batch, a channel). Default: atomics where the schedule asks
  /// for them (PyTorch's CUDA backward does the same).
  bool deterministic = false;
};

/// The adjoints of `inputs` for `output`: one tensor per input, of its shape and type,
/// holding d(sum of head * output) / d input. head is output's adjoint (undefined: ones).
/// An input the output does not depend on gets zeros. te::Error naming the problem for an
/// undefined tensor, an input given twice, an integer output or input, a head of another
/// shape or type, or a stage or operation on the way that has no derivative (above).
TE_API std::vector<Tensor> gradient(const Tensor& output, const std::vector<Tensor>& inputs,
                                    const Tensor& head = Tensor(), const GradientOptions& options = {});

}  // namespace te
