// Function::make_arguments: a call's arguments from its inputs and named values, with
// new arrays for the outputs (what `te run` does with .npy files).
#include <fmt/format.h>

#include <algorithm>

#include "codegen_llvm/module_impl.h"
#include "codegen_llvm/shape_eval.h"

namespace te {
namespace {

std::string joined(const std::vector<std::string>& names) {
  return names.empty() ? "(none)" : fmt::format("{}", fmt::join(names, ", "));
}

// The variables an expression reads, in order of first appearance.
class VarNames : public IRVisitor {
 public:
  std::vector<std::string> names;

 protected:
  void visit_var(const VarNode* v) override {
    if (std::find(names.begin(), names.end(), v->name) == names.end()) names.push_back(v->name);
  }
};

}  // namespace

std::vector<std::string> Function::param_names() const {
  if (!impl_) throw Error("Function: an empty Function has no parameters");
  std::vector<std::string> names;
  for (const Param& p : impl_->functions[index_].func.params) names.push_back(p.name());
  return names;
}

bool Function::writes(size_t param) const {
  if (!impl_) throw Error("Function: an empty Function has no parameters");
  const detail::FunctionEntry& e = impl_->functions[index_];
  if (param >= e.param_written.size())
    throw Error(fmt::format("{}: no parameter {} ({} parameters)", e.func.name, param, e.param_written.size()));
  return e.param_written[param];
}

std::vector<Argument> Function::make_arguments(const std::vector<NDArray>& inputs,
                                               const std::map<std::string, Argument>& values) const {
  if (!impl_) throw Error("Function: an empty Function cannot be called");
  const detail::FunctionEntry& e = impl_->functions[index_];
  const LoweredFunc& f = e.func;

  std::vector<std::string> input_names;
  for (size_t p = 0; p < f.params.size(); ++p)
    if (f.params[p].is_buffer() && !e.param_written[p]) input_names.push_back(f.params[p].name());
  if (inputs.size() != input_names.size())
    throw Error(fmt::format("{}: takes {} input{} ({}), got {}", f.name, input_names.size(),
                            input_names.size() == 1 ? "" : "s", joined(input_names), inputs.size()));

  // Every variable of the signature by name: shape variables and scalar parameters.
  std::map<std::string, const VarNode*> vars;
  std::vector<std::string> var_names;
  for (const codegen::KernelArg& a : e.sig.args)
    if (a.var.defined()) {
      vars[a.var.name()] = a.var.get();
      var_names.push_back(a.var.name());
    }
  codegen::IntBindings env;
  for (const auto& [name, value] : values) {
    auto it = vars.find(name);
    if (it == vars.end())
      throw Error(
          fmt::format("{}: no shape variable or scalar parameter '{}' (it has: {})", f.name, name, joined(var_names)));
    if (value.is_array()) throw Error(fmt::format("{}: the value of '{}' must be a number", f.name, name));
    if (value.kind() == Argument::Kind::Int) env[it->second] = value.int_value();
  }

  // Ranks first: binding n from a 2-D A would blame the next input for A's mistake.
  size_t next = 0;
  for (size_t p = 0; p < f.params.size(); ++p) {
    if (!f.params[p].is_buffer() || e.param_written[p]) continue;
    const NDArray& in = inputs[next++];
    if (in.ndim() != f.params[p].buffer.ndim())
      throw Error(fmt::format("{}: input '{}' has rank {} (shape {}), expected rank {}", f.name, f.params[p].name(),
                              in.ndim(), in.shape_string(), f.params[p].buffer.ndim()));
  }

  // Shape variables bound by the inputs, which a given value must agree with.
  next = 0;
  for (size_t p = 0; p < f.params.size(); ++p) {
    if (!f.params[p].is_buffer() || e.param_written[p]) continue;
    const NDArray& in = inputs[next++];
    const std::vector<Expr>& shape = f.params[p].buffer.shape();
    for (size_t d = 0; d < shape.size() && d < in.shape().size(); ++d) {
      const auto* v = shape[d].as<VarNode>();
      if (v == nullptr) continue;
      auto [it, fresh] = env.emplace(v, in.shape()[d]);
      if (!fresh && it->second != in.shape()[d])
        throw Error(
            fmt::format("{}: {} is {} (given or bound earlier) but input '{}' has {} in "
                        "dimension {}",
                        f.name, v->name, it->second, f.params[p].name(), in.shape()[d], d));
    }
  }

  std::vector<Argument> args;
  next = 0;
  for (size_t p = 0; p < f.params.size(); ++p) {
    const Param& param = f.params[p];
    if (!param.is_buffer()) {
      auto it = values.find(param.var.name());
      if (it == values.end())
        throw Error(fmt::format("{}: the scalar parameter '{}' needs a value", f.name, param.var.name()));
      args.push_back(it->second);
      continue;
    }
    if (!e.param_written[p]) {
      args.emplace_back(inputs[next++]);
      continue;
    }
    std::vector<int64_t> shape;
    for (const Expr& dim : param.buffer.shape()) {
      std::optional<int64_t> extent = codegen::eval_shape_expr(dim, env);
      if (!extent) {
        VarNames read;
        read.visit(dim);
        std::vector<std::string> unbound;
        for (const std::string& name : read.names)
          if (vars.count(name) && !env.count(vars[name])) unbound.push_back(name);
        throw Error(
            fmt::format("{}: the shape of output '{}' needs {}, which no input binds; "
                        "give its value",
                        f.name, param.name(), joined(unbound)));
      }
      if (*extent < 0)
        throw Error(fmt::format("{}: output '{}' would have extent {} in dimension {}", f.name, param.name(), *extent,
                                shape.size()));
      shape.push_back(*extent);
    }
    args.emplace_back(NDArray::empty(shape, param.buffer.dtype()));
  }
  return args;
}

}  // namespace te
