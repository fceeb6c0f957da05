// A tensor intrinsic's declaration as loop IR: the update it performs (what the matcher
// compares a stage's nest with, and what interpret() runs in place of the intrinsic).
#pragma once
#include <vector>

#include "te/ir.h"
#include "te/tensorize.h"

namespace te::tensorize {

// The declaration's loops, in nest order: its axes, then its reduction axes.
std::vector<IterVar> declaration_loops(const TensorIntrinsicNode& in);

// One flat, dense buffer per declaration tensor: the inputs, then the output.
std::vector<Buffer> declaration_buffers(const TensorIntrinsicNode& in);

// The declaration's update (for a reduction: output = combine(output, source); else
// output = body) as a loop nest over fresh variables (returned in *loop_vars, in
// declaration_loops' order), accessing buffers[i] (as declaration tensor i, flat, dense:
// row-major strides of its shape) from element offsets[i] on.
Stmt instantiate(const TensorIntrinsicNode& in, const std::vector<Buffer>& buffers, const std::vector<Expr>& offsets,
                 std::vector<Var>* loop_vars);

}  // namespace te::tensorize
