// Calling built functions: the argument checks every call makes, and Module/Function.
#include <fmt/format.h>

#include <cstring>
#include <limits>
#include <unordered_map>

#include "codegen_llvm/module_impl.h"
#include "codegen_llvm/shape_eval.h"
#include "expr/buffer_util.h"
#include "expr/float_round.h"
#include "te/runtime/c_runtime_api.h"

namespace te::codegen {
namespace {

std::string shape_text(const std::vector<Expr>& shape) {
  std::vector<std::string> parts;
  for (const Expr& e : shape) parts.push_back(to_string(e));
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

std::string param_text(const Param& p) {
  if (p.is_buffer())
    return fmt::format("{}: {}{}", p.name(), p.buffer.dtype().to_string(), shape_text(p.buffer.shape()));
  return fmt::format("{}: {}", p.name(), p.var.dtype().to_string());
}

bool fits(DataType t, int64_t v) {
  if (t.is_bool()) return v == 0 || v == 1;
  if (t.bits() >= 64) return t.is_int() || v >= 0;
  int64_t limit = int64_t{1} << (t.bits() - 1);
  if (t.is_int()) return v >= -limit && v < limit;
  return v >= 0 && v < 2 * limit;
}

template <typename T>
void put(uint64_t* slot, T v) {
  std::memcpy(slot, &v, sizeof v);
}

void put_int(uint64_t* slot, DataType t, int64_t v) {
  switch (t.is_bool() ? 8 : t.bits()) {
    case 8: put(slot, static_cast<uint8_t>(v)); break;
    case 16: put(slot, static_cast<uint16_t>(v)); break;
    case 32: put(slot, static_cast<uint32_t>(v)); break;
    default: put(slot, v); break;
  }
}

}  // namespace

PreparedCall::PreparedCall(const detail::FunctionEntry& entry, const std::vector<Argument>& args) : entry_(entry) {
  const LoweredFunc& f = entry.func;
  const KernelSignature& sig = entry.sig;
  if (args.size() != f.params.size()) {
    std::vector<std::string> names;
    for (const Param& p : f.params) names.push_back(p.name());
    throw Error(fmt::format("{}: expected {} argument{} ({}), got {}", f.name, f.params.size(),
                            f.params.size() == 1 ? "" : "s", fmt::join(names, ", "), args.size()));
  }
  slots_.assign(sig.args.size(), 0);
  IntBindings env;
  std::unordered_map<const VarNode*, std::string> bound_by;
  struct Deferred {
    size_t param;
    size_t dim;
  };
  std::vector<Deferred> deferred;
  std::vector<const NDArray*> array_of_param(f.params.size(), nullptr);
  arrays_.reserve(f.params.size());

  for (size_t p = 0; p < f.params.size(); ++p) {
    const Param& param = f.params[p];
    const Argument& a = args[p];
    std::string what = fmt::format("{}: argument {} ('{}')", f.name, p + 1, param.name());
    uint64_t* slot = &slots_[static_cast<size_t>(sig.arg_of_param[p])];
    if (param.is_buffer()) {
      const Buffer& buf = param.buffer;
      if (!a.is_array())
        throw Error(fmt::format("{} must be an NDArray of {}{}, got a number", what, buf.dtype().to_string(),
                                shape_text(buf.shape())));
      const NDArray& arr = a.array();
      if (!arr.defined() || arr.data() == nullptr) throw Error(fmt::format("{} is an NDArray without storage", what));
      if (arr.dtype() != buf.dtype())
        throw Error(
            fmt::format("{} has dtype {}, expected {}", what, arr.dtype().to_string(), buf.dtype().to_string()));
      if (arr.ndim() != buf.ndim())
        throw Error(fmt::format("{} has rank {} (shape {}), expected rank {} ({})", what, arr.ndim(),
                                arr.shape_string(), buf.ndim(), shape_text(buf.shape())));
      for (size_t d = 0; d < buf.shape().size(); ++d) {
        const Expr& e = buf.shape()[d];
        int64_t extent = arr.shape()[d];
        const VarNode* v = e.as<VarNode>();
        if (v != nullptr && !env.count(v)) {
          if (!fits(e.dtype(), extent))
            throw Error(
                fmt::format("{}: dimension {} has extent {}, which does not fit shape "
                            "variable '{}' of type {}",
                            what, d, extent, v->name, e.dtype().to_string()));
          env[v] = extent;
          bound_by[v] = param.name();
          continue;
        }
        std::optional<int64_t> expected = eval_shape_expr(e, env);
        if (!expected) {
          deferred.push_back({p, d});
        } else if (*expected != extent) {
          std::string from = v != nullptr ? fmt::format(" (bound by argument '{}')", bound_by[v]) : "";
          throw Error(fmt::format("{} has shape {}, but dimension {} must be {} = {}{}", what, arr.shape_string(), d,
                                  to_string(e), *expected, from));
        }
      }
      if (beyond_int32_indices(buf, arr.shape()))
        throw Error(
            fmt::format("{} has shape {}: more than 2147483647 elements, beyond the int32 indices of "
                        "'{}' (declare its extents as int64 to index larger arrays)",
                        what, arr.shape_string(), f.name));
      arrays_.push_back(arr);
      array_of_param[p] = &arrays_.back();
      put(slot, reinterpret_cast<uintptr_t>(arrays_.back().data()));
      continue;
    }
    DataType t = param.var.dtype();
    if (a.is_array()) throw Error(fmt::format("{} is a {} scalar, got an NDArray", what, t.to_string()));
    if (t.is_float()) {
      // Rounded once to the parameter's type, exactly as interpret() rounds it.
      double v = a.kind() == Argument::Kind::Int ? int_to_float(a.int_value(), Int(64), t)
                                                 : round_to_float_type(a.float_value(), t);
      if (t.bits() == 64)
        put(slot, v);
      else
        put(slot, static_cast<float>(v));
      continue;
    }
    if (a.kind() != Argument::Kind::Int)
      throw Error(
          fmt::format("{} is a {} scalar, got the floating-point value {}", what, t.to_string(), a.float_value()));
    int64_t v = a.int_value();
    if (!fits(t, v)) throw Error(fmt::format("{} is {}, which does not fit {}", what, v, t.to_string()));
    auto known = env.find(param.var.get());
    if (known != env.end() && known->second != v)
      throw Error(
          fmt::format("{} is {}, but argument '{}' binds it to {}", what, v, bound_by[param.var.get()], known->second));
    env[param.var.get()] = v;
    bound_by[param.var.get()] = param.name();
    put_int(slot, t, v);
  }

  for (const Deferred& d : deferred) {
    const Param& param = f.params[d.param];
    const Expr& e = param.buffer.shape()[d.dim];
    int64_t extent = array_of_param[d.param]->shape()[d.dim];
    std::optional<int64_t> expected = eval_shape_expr(e, env);
    if (!expected)
      throw Error(
          fmt::format("{}: argument '{}': extent {} of dimension {} uses a variable that no "
                      "argument binds",
                      f.name, param.name(), to_string(e), d.dim));
    if (*expected != extent)
      throw Error(fmt::format("{}: argument '{}' has shape {}, but dimension {} must be {} = {}", f.name, param.name(),
                              array_of_param[d.param]->shape_string(), d.dim, to_string(e), *expected));
  }

  // Shape variables that are not parameters take the values the arrays gave them.
  for (size_t k = 0; k < sig.args.size(); ++k) {
    const KernelArg& ka = sig.args[k];
    if (!ka.var.defined() || ka.param >= 0) continue;
    auto it = env.find(ka.var.get());
    if (it == env.end())
      throw Error(
          fmt::format("{}: shape variable '{}' is bound by no argument (it appears only "
                      "inside shape expressions)",
                      f.name, ka.var.name()));
    put_int(&slots_[k], ka.var.dtype(), it->second);
  }

  // Buffers are noalias: an array the function writes must not overlap another argument.
  for (size_t p = 0; p < f.params.size(); ++p) {
    for (size_t q = p + 1; q < f.params.size(); ++q) {
      const NDArray* x = array_of_param[p];
      const NDArray* y = array_of_param[q];
      if (x == nullptr || y == nullptr || x->nbytes() == 0 || y->nbytes() == 0) continue;
      if (!entry.param_written[p] && !entry.param_written[q]) continue;
      auto lo = [](const NDArray* a) { return reinterpret_cast<uintptr_t>(a->data()); };
      if (lo(x) < lo(y) + y->nbytes() && lo(y) < lo(x) + x->nbytes()) {
        const std::string& written = entry.param_written[p] ? f.params[p].name() : f.params[q].name();
        throw Error(
            fmt::format("{}: arguments '{}' and '{}' share memory and '{}' is written by "
                        "the function; pass separate arrays",
                        f.name, f.params[p].name(), f.params[q].name(), written));
      }
    }
  }
  pointers_.resize(slots_.size());
  for (size_t k = 0; k < slots_.size(); ++k) pointers_[k] = &slots_[k];
}

void PreparedCall::invoke() const {
  int32_t rc = entry_.packed(const_cast<void**>(pointers_.data()));
  if (rc != 0) {
    std::string message = te_get_last_error();
    if (message.empty()) message = fmt::format("{}: failed with code {}", entry_.func.name, rc);
    throw Error(message);
  }
}

}  // namespace te::codegen

namespace te {

void Function::call(const std::vector<Argument>& args) const {
  if (!impl_) throw Error("Function: calling an empty Function (get one from a built Module)");
  codegen::PreparedCall(impl_->functions[index_], args).invoke();
}

const std::string& Function::name() const {
  if (!impl_) throw Error("Function: an empty Function has no name");
  return impl_->functions[index_].func.name;
}

std::string Function::signature() const {
  if (!impl_) throw Error("Function: an empty Function has no signature");
  const LoweredFunc& f = impl_->functions[index_].func;
  std::vector<std::string> params;
  for (const Param& p : f.params) params.push_back(codegen::param_text(p));
  return fmt::format("{}({})", f.name, fmt::join(params, ", "));
}

Function Module::get_function(const std::string& name) const {
  if (!impl_) throw Error(fmt::format("Module: no function '{}' in an empty Module (use te::build)", name));
  for (size_t k = 0; k < impl_->functions.size(); ++k)
    if (impl_->functions[k].func.name == name) return Function(impl_, k);
  throw Error(fmt::format("Module: no function '{}'; it has: {}", name, fmt::join(function_names(), ", ")));
}

std::vector<std::string> Module::function_names() const {
  std::vector<std::string> names;
  if (impl_)
    for (const auto& f : impl_->functions) names.push_back(f.func.name);
  return names;
}

}  // namespace te
