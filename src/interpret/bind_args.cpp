// Binding interpret()'s arguments to a LoweredFunc's parameters, with every check a
// built function makes at its call: count, kind, dtype, rank and shapes.
#include <fmt/format.h>

#include "expr/buffer_util.h"
#include "expr/int_arith.h"
#include "interpret/interpreter.h"
#include "interpret/lane_ops.h"

namespace te::interp {
namespace {

std::string param_list(const LoweredFunc& f) {
  std::string s;
  for (size_t k = 0; k < f.params.size(); ++k) s += (k ? ", " : "") + f.params[k].name();
  return s;
}

// The value of a scalar argument for parameter p. Integer parameters take only integers
// that fit their type; float parameters take either kind (rounded to their type).
Scalar scalar_argument(const Argument& a, const Param& p) {
  DataType t = p.var.dtype();
  if (a.kind() == Argument::Kind::Float) {
    if (!t.is_float())
      throw Error(
          fmt::format("scalar parameter '{}' has type {} but was given a floating-point "
                      "number ({})",
                      p.name(), t.to_string(), a.float_value()));
    return float_scalar(round_to_float_type(a.float_value(), t));
  }
  int64_t v = a.int_value();
  if (t.is_float()) return cast_lane(Int(64), t, int_scalar(v));
  bool fits = arith::wrap(v, t) == v && (!t.is_uint() || v >= 0);
  if (!fits)
    throw Error(fmt::format("scalar parameter '{}' has type {}, which cannot hold {}", p.name(), t.to_string(), v));
  return int_scalar(v);
}

void check_fits_int32_indices(const LoweredFunc& f, const Param& p, const NDArray& arr) {
  if (beyond_int32_indices(p.buffer, arr.shape()))
    throw Error(
        fmt::format("parameter '{}' has shape {}: more than 2147483647 elements, beyond the int32 "
                    "indices of '{}' (declare its extents as int64 to index larger arrays)",
                    p.name(), arr.shape_string(), f.name));
}

}  // namespace

void Interpreter::bind_arguments(const std::vector<Argument>& args, Frame& root) {
  const LoweredFunc& f = func_;
  if (args.size() != f.params.size())
    throw Error(fmt::format("takes {} arguments ({}) but {} were given", f.params.size(), param_list(f), args.size()));

  // Which argument bound each variable slot first, for messages.
  std::vector<std::string> bound_by(static_cast<size_t>(program_.var_slots));
  // `who` names the argument ("parameter 'B' dimension 0"), `is` its verb.
  auto bind_or_check = [&](int slot, int64_t value, const std::string& who, const char* is) {
    const size_t s = static_cast<size_t>(slot);
    const VarNode* var = program_.slot_vars[s];
    if (!bound_by[s].empty()) {
      if (root.vars[s].i == value) return;
      throw Error(fmt::format("{} {} {}, but shape variable '{}' is already {} (from {})", who, is, value, var->name,
                              root.vars[s].i, bound_by[s]));
    }
    if (!var->dtype.is_integer() || arith::wrap(value, var->dtype) != value)
      throw Error(fmt::format("{} {} {}, which shape variable '{}' of type {} cannot hold", who, is, value, var->name,
                              var->dtype.to_string()));
    root.vars[s] = int_scalar(value);
    bound_by[s] = who;
  };

  // First: kinds, dtypes and ranks; bind bare shape variables and scalars in order.
  for (size_t k = 0; k < args.size(); ++k) {
    const Param& p = f.params[k];
    const ParamBinding& binding = program_.params[k];
    const Argument& a = args[k];
    if (!p.is_buffer()) {
      if (a.is_array()) throw Error(fmt::format("scalar parameter '{}' (argument {}) was given an array", p.name(), k));
      Scalar v = scalar_argument(a, p);
      if (p.var.dtype().is_float())
        root.vars[static_cast<size_t>(binding.var_slot)] = v;
      else
        bind_or_check(binding.var_slot, v.i, fmt::format("scalar parameter '{}'", p.name()), "is");
      continue;
    }
    const Buffer& b = p.buffer;
    if (!a.is_array())
      throw Error(
          fmt::format("parameter '{}' (argument {}) is a buffer of {} but was given a "
                      "number",
                      p.name(), k, b.dtype().to_string()));
    const NDArray& arr = a.array();
    if (!arr.defined())
      throw Error(fmt::format("parameter '{}' (argument {}) was given an undefined NDArray", p.name(), k));
    if (arr.dtype() != b.dtype())
      throw Error(fmt::format("parameter '{}' expects an array of {}, but was given {}", p.name(),
                              b.dtype().to_string(), arr.dtype().to_string()));
    if (arr.ndim() != b.ndim())
      throw Error(
          fmt::format("parameter '{}' expects a {}-dimensional array, but was given "
                      "shape {} ({} dimensions)",
                      p.name(), b.ndim(), arr.shape_string(), arr.ndim()));
    for (size_t d = 0; d < binding.shape_var_slots.size(); ++d)
      if (binding.shape_var_slots[d] >= 0)
        bind_or_check(binding.shape_var_slots[d], arr.shape()[d],
                      fmt::format("parameter '{}' dimension {}", p.name(), d), "has extent");
  }

  // Then shape entries that are expressions, now that every variable is bound.
  for (size_t k = 0; k < args.size(); ++k) {
    const Param& p = f.params[k];
    if (!p.is_buffer()) continue;
    const auto& exprs = program_.params[k].shape_exprs;
    for (size_t d = 0; d < exprs.size(); ++d) {
      if (!exprs[d]) continue;
      int64_t want = eval(exprs[d], root).i;
      int64_t got = args[k].array().shape()[d];
      if (want != got)
        throw Error(
            fmt::format("parameter '{}' dimension {} has extent {}, but its shape "
                        "expression requires {}",
                        p.name(), d, got, want));
    }
  }

  // Finally the storage the body's loads and stores see.
  for (size_t k = 0; k < args.size(); ++k) {
    const Param& p = f.params[k];
    if (!p.is_buffer()) continue;
    check_fits_int32_indices(f, p, args[k].array());
    param_arrays_.push_back(args[k].array());  // shares the caller's memory
    NDArray& arr = param_arrays_.back();
    auto st = std::make_unique<BufferStorage>();
    st->buffer = p.buffer.get();
    st->dtype = arr.dtype();
    st->elem = elem_of(arr.dtype());
    st->data = arr.data();
    st->size = arr.size();
    st->shape = arr.shape();
    root.buffers[static_cast<size_t>(program_.params[k].buffer_slot)] = st.get();
    param_storage_.push_back(std::move(st));
  }
}

}  // namespace te::interp
