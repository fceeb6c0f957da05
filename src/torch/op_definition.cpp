#include "torch/op_definition.h"

#include <cctype>
#include <set>

#include "te/auto_schedule.h"
#include "te/autodiff.h"
#include "te/ir.h"
#include "te/log.h"
#include "te/lower.h"
#include "expr/analysis.h"
#include "expr/extern_calls.h"

namespace te::torch::detail {
namespace {

// s with every character that is not one of a C identifier's made '_'.
std::string identifier_of(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "_" + out;
  return out;
}

// The sum over outputs of each float input's adjoint, one tensor per float input.
std::vector<Tensor> adjoints_of(const std::vector<Tensor>& outputs, const std::vector<Tensor>& heads,
                                const std::vector<Tensor>& float_inputs) {
  std::vector<Tensor> total;
  for (size_t k = 0; k < outputs.size(); ++k) {
    std::vector<Tensor> d = gradient(outputs[k], float_inputs, heads[k]);
    if (total.empty()) {
      total = d;
      continue;
    }
    for (size_t i = 0; i < d.size(); ++i) {
      Tensor a = total[i], b = d[i];
      total[i] = compute(
          a.shape(),
          [&](const std::vector<Var>& v) {
            std::vector<Expr> idx(v.begin(), v.end());
            return a(idx) + b(idx);
          },
          float_inputs[i].name() + "_grad_sum" + std::to_string(k));
    }
  }
  return total;
}

// The checks of register_op on the inputs and outputs; returns the inputs' names.
std::vector<std::string> check_arguments(const std::string& name, const OpDef& def) {
  if (def.inputs.empty()) fail(name, "OpDef::inputs is empty: an operator takes at least one tensor");
  if (def.outputs.empty()) fail(name, "OpDef::outputs is empty: an operator returns at least one tensor");
  std::vector<std::string> names;
  std::set<std::string> seen;
  std::set<const VarNode*> bound;  // the shape variables the inputs bind
  for (size_t i = 0; i < def.inputs.size(); ++i) {
    const Tensor& t = def.inputs[i];
    if (!t.defined()) fail(name, "input " + std::to_string(i) + " is undefined");
    if (!t.is_placeholder())
      fail(name, "input " + std::to_string(i) + " ('" + t.name() +
                     "') is a compute, not a placeholder: an operator's arguments are placeholders");
    if (!is_c_identifier(t.name()))
      fail(name, "input " + std::to_string(i) + " is named '" + t.name() +
                     "', which is not a C identifier (the schema names the argument after it)");
    if (!seen.insert(t.name()).second)
      fail(name, "two inputs are named '" + t.name() + "': the schema's arguments need distinct names");
    names.push_back(t.name());
    for (const Expr& d : t.shape())
      if (const auto* v = d.as<VarNode>()) bound.insert(v);
  }
  for (size_t k = 0; k < def.outputs.size(); ++k) {
    const Tensor& t = def.outputs[k];
    if (!t.defined()) fail(name, "output " + std::to_string(k) + " is undefined");
    for (const Expr& d : t.shape()) {
      for (const Var& v : free_vars(d))
        if (!bound.count(v.get()))
          fail(name, "the shape of output '" + t.name() + "' needs shape variable '" + v.name() +
                         "', which no input's shape binds (a dimension that is exactly a variable binds it)");
    }
  }
  return names;
}

}  // namespace

void fail(const std::string& name, const std::string& msg) {
  throw Error("te::torch::register_op('" + name + "'): " + msg);
}

OpDefinition define_op(const std::string& qualified_name, const OpDef& def) {
  OpDefinition op;
  op.name = qualified_name;
  const size_t sep = qualified_name.find("::");
  if (sep == std::string::npos || !is_c_identifier(qualified_name.substr(0, sep)) ||
      !is_c_identifier(qualified_name.substr(sep + 2)))
    fail(qualified_name, "the name must be \"namespace::name\", both C identifiers");
  op.ns = qualified_name.substr(0, sep);
  op.short_name = qualified_name.substr(sep + 2);
  op.c_name = op.ns + "_" + op.short_name;
  op.input_names = check_arguments(qualified_name, def);
  op.forward_args = def.inputs;
  op.forward_args.insert(op.forward_args.end(), def.outputs.begin(), def.outputs.end());

  std::vector<Tensor> float_inputs, float_outputs;
  for (const Tensor& t : def.inputs) {
    op.input_is_float.push_back(t.dtype().is_float());
    if (t.dtype().is_float()) float_inputs.push_back(t);
  }
  for (const Tensor& t : def.outputs) {
    op.output_is_float.push_back(t.dtype().is_float());
    if (t.dtype().is_float()) float_outputs.push_back(t);
  }

  // The backward: te::gradient of every float output for every float input.
  if (!def.differentiable) {
    op.no_gradient_reason = "it was registered with OpDef::differentiable = false";
    return op;
  }
  if (float_inputs.empty()) {
    op.no_gradient_reason = "it has no floating-point input";
    return op;
  }
  if (float_outputs.empty()) {
    op.no_gradient_reason = "it has no floating-point output";
    return op;
  }
  const std::set<std::string> input_names(op.input_names.begin(), op.input_names.end());
  for (const Tensor& out : float_outputs) {
    std::string head = "grad_" + identifier_of(out.name());
    if (input_names.count(head))
      fail(qualified_name, "the backward's argument '" + head + "' (the adjoint of output '" + out.name() +
                               "') has the name of an input; rename the input");
    op.heads.push_back(placeholder(out.shape(), out.dtype(), head));
    op.backward_arg_names.push_back(head);
  }
  op.backward_arg_names.insert(op.backward_arg_names.end(), op.input_names.begin(), op.input_names.end());
  try {
    op.adjoints = adjoints_of(float_outputs, op.heads, float_inputs);
  } catch (const Error& e) {
    op.no_gradient_reason = std::string("te::gradient: ") + e.what();
    return op;
  }
  op.backward_args = op.heads;
  op.backward_args.insert(op.backward_args.end(), def.inputs.begin(), def.inputs.end());
  op.backward_args.insert(op.backward_args.end(), op.adjoints.begin(), op.adjoints.end());
  return op;
}

Schedule schedule_kernel(const std::string& name, const char* what, const char* field, const Target& target,
                         const std::vector<Tensor>& outputs, const std::function<void(Schedule&)>& schedule) {
  if (schedule) {
    Schedule s = create_schedule(outputs);
    schedule(s);
    return s;
  }
  try {
    AutoScheduleOptions options;
    options.target = target;
    return auto_schedule(outputs, options);
  } catch (const Error& e) {
    // A CUDA kernel needs a schedule binding threads: te's default one has none.
    if (target.is_cuda())
      throw Error(std::string("auto_schedule cannot schedule the ") + what + " kernel for CUDA (give OpDef::" + field +
                  "): " + e.what());
    log_message(LogLevel::Warn, "te::torch::register_op('" + name + "'): auto_schedule cannot schedule the " + what +
                                    " kernel, which runs with te's default schedule instead (give OpDef::" + field +
                                    "): " + e.what());
    return create_schedule(outputs);
  }
}

LoweredFunc lower_kernel(const Schedule& s, const std::vector<Tensor>& args, const std::string& c_name) {
  LoweredFunc f = lower(s, args, c_name);
  for (const Param& p : f.params)
    if (!p.is_buffer())
      throw Error("the kernel needs the value of '" + p.name() +
                  "', which no input's shape binds (a dimension that is exactly a shape variable binds it)");
  return f;
}

}  // namespace te::torch::detail
