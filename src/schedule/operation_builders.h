// Building operations: computes from bodies, the same operation with new bodies,
// and renaming a body's variables (reductions get fresh axes where their bounds change).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "te/schedule.h"

namespace te::sched {

// A compute operation; its reduce axes and inputs are taken from the body.
Operation make_compute(std::string name, std::vector<Expr> shape, std::vector<IterVar> axis, Expr body);
// A compute with one output per body (a multi-output compute when several).
Operation make_compute(std::vector<std::string> names, std::vector<Expr> shape, std::vector<IterVar> axis,
                       std::vector<Expr> bodies);
// The names of op's outputs, in order.
std::vector<std::string> output_names(const OperationNode& op);
// The same operation with other bodies (same names, shape, axes and scatter target).
Operation with_bodies(const Operation& op, std::vector<Expr> bodies);
// op with fn applied to each body and scatter index, and its scatter base replaced by
// new_ops' entry if it has one; op itself when nothing changes.
Operation map_bodies(const Operation& op, const std::function<Expr(const Expr&)>& fn,
                     const std::map<const OperationNode*, Operation>& new_ops = {});

// e with vars renamed; a Reduce whose axes' bounds use a renamed variable gets fresh axes
// (same names) over the renamed bounds.
Expr rename_vars(const Expr& e, const std::vector<std::pair<Var, Expr>>& rename);

}  // namespace te::sched
