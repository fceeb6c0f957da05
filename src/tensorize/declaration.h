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

// The shape of declaration tensor k (the inputs, then the output).
const std::vector<Expr>& declaration_shape(const TensorIntrinsicNode& in, size_t k);

// The element strides of declaration tensor k's dense row-major shape, of type t.
std::vector<Expr> dense_strides(const TensorIntrinsicNode& in, size_t k, DataType t);

// The declaration's update (for a reduction: output = combine(output, source); else
// output = body) as a loop nest over fresh variables (returned in *loop_vars, in
// declaration_loops' order), accessing buffers[k] (as declaration tensor k, flat) from
// element offsets[k] on, stepping strides[k][d] along its dimension d.
Stmt instantiate(const TensorIntrinsicNode& in, const std::vector<Buffer>& buffers, const std::vector<Expr>& offsets,
                 const std::vector<std::vector<Expr>>& strides, std::vector<Var>* loop_vars);

}  // namespace te::tensorize
