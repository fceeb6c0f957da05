// An OpDef checked and taken apart: what registering an operator (torch.cpp) and
// generating its CUDA kernels at build time (cuda_generator.cpp) both start from, so that
// the two derive the same kernels from the same definition.
#pragma once
#include <string>
#include <vector>

#include "te/torch.h"

namespace te::torch::detail {

// The definition of operator `name`, checked; its backward derived where it has one.
struct OpDefinition {
  std::string name;        // "ns::op"
  std::string ns;          // "ns"
  std::string short_name;  // "op"
  std::string c_name;      // "ns_op": the kernels' function names
  std::vector<std::string> input_names;
  std::vector<bool> input_is_float;  // which inputs get an adjoint
  std::vector<bool> output_is_float;
  std::vector<Tensor> forward_args;  // inputs, then outputs: the forward kernel's parameters
  // The backward, when te::gradient gives one (adjoints non-empty): its arguments are the
  // float outputs' heads ("grad_<output>"), the inputs, then the adjoints (one per float input).
  std::vector<Tensor> heads;
  std::vector<Tensor> adjoints;
  std::vector<Tensor> backward_args;
  std::vector<std::string> backward_arg_names;  // the heads' and the inputs' names
  std::string no_gradient_reason;               // why adjoints is empty
};

// [[noreturn]]: te::Error "te::torch::register_op('<name>'): <msg>".
[[noreturn]] void fail(const std::string& name, const std::string& msg);

// Checks the name and the definition (te::Error naming the problem: see register_op) and
// derives the backward with te::gradient where def.differentiable.
OpDefinition define_op(const std::string& qualified_name, const OpDef& def);

// The schedule of a kernel: the user's (`schedule`, called with create_schedule(outputs)),
// else auto_schedule's for `target`, else te's default (create_schedule) with a warning
// naming the OpDef field (`field`) that would give one. `what`: "forward", "backward".
Schedule schedule_kernel(const std::string& name, const char* what, const char* field, const Target& target,
                         const std::vector<Tensor>& outputs, const std::function<void(Schedule&)>& schedule);

// lower(s, args, c_name), with a te::Error when the kernel needs a variable that no
// input's shape binds.
LoweredFunc lower_kernel(const Schedule& s, const std::vector<Tensor>& args, const std::string& c_name);

}  // namespace te::torch::detail
