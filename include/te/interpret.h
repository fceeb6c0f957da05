/// \file
/// interpret(): runs loop IR directly. The reference semantics every backend is tested against.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "te/argument.h"
#include "te/export.h"
#include "te/ir.h"

namespace te {

/// args follow f.params: an NDArray for each buffer parameter, a number for each scalar.
/// Symbolic shape variables are bound from the arrays (and checked for consistency).
/// Threads bound to GPU axes run as if on a GPU: every (block, thread) pair, with
/// Barrier honoured between the threads of a block. Out-of-bounds accesses, bad
/// arguments and failed asserts throw te::Error.
/// call_extern calls in f run the host functions registered with register_extern
/// (te::Error naming the function when none is, or when its signature differs).
TE_API void interpret(const LoweredFunc& f, const std::vector<Argument>& args);

// ---- Host functions for call_extern ----

/// One argument or result of a host function (see HostFunction): the DataType says which
/// member holds it: `i` for bool (0 or 1), int and uint (a uint64 as its bit pattern),
/// `f` for float32 and float64.
union ExternValue {
  int64_t i;  ///< bool, int and uint values
  double f;   ///< float values
};

/// A host function interpret() calls for `call_extern(ret, name, args)`: its C signature
/// in te's types and the function itself, which takes one ExternValue per parameter.
/// register_extern builds one from a plain C++ function; this form suits generated or
/// variadic-by-table code.
struct TE_API HostFunction {
  DataType ret;                  ///< The result type.
  std::vector<DataType> params;  ///< The parameter types, in order.
  /// Computes the result from params.size() arguments.
  std::function<ExternValue(const ExternValue* args)> fn;
};

/// Registers fn as the host function interpret() calls for call_extern(..., name, ...),
/// replacing any earlier one of that name. Its signature must match each call's (result
/// and argument types, checked when interpret() starts: te::Error otherwise). A float
/// result is rounded to the call's type and an integer one wrapped to it. The registry
/// is process-wide and thread-safe; a running interpret() keeps the function it found.
/// te::Error when name is not a C identifier or a type is not one call_extern passes.
TE_API void register_extern(const std::string& name, HostFunction fn);
/// Removes name's host function; false when there was none.
TE_API bool unregister_extern(const std::string& name);

namespace detail {
/// The te type of a C++ parameter or result type of a host function.
template <typename T>
DataType extern_type_of() {
  using U = std::decay_t<T>;
  static_assert(std::is_arithmetic_v<U> && !std::is_same_v<U, long double>,
                "register_extern: host functions take and return bool, integers, float or double");
  if constexpr (std::is_same_v<U, bool>)
    return Bool();
  else if constexpr (std::is_floating_point_v<U>)
    return Float(static_cast<int>(8 * sizeof(U)));
  else if constexpr (std::is_signed_v<U>)
    return Int(static_cast<int>(8 * sizeof(U)));
  else
    return UInt(static_cast<int>(8 * sizeof(U)));
}
/// An ExternValue as the C++ type T.
template <typename T>
std::decay_t<T> from_extern_value(const ExternValue& v) {
  using U = std::decay_t<T>;
  if constexpr (std::is_same_v<U, bool>)
    return v.i != 0;
  else if constexpr (std::is_floating_point_v<U>)
    return static_cast<U>(v.f);
  else
    return static_cast<U>(v.i);
}
/// A C++ value as an ExternValue.
template <typename T>
ExternValue to_extern_value(T x) {
  ExternValue v;
  if constexpr (std::is_floating_point_v<T>)
    v.f = static_cast<double>(x);
  else
    v.i = static_cast<int64_t>(x);
  return v;
}
/// The HostFunction that calls f (K: the indices of its parameters).
template <typename R, typename... A, size_t... K>
HostFunction host_function(std::function<R(A...)> f, std::index_sequence<K...>) {
  HostFunction h;
  h.ret = extern_type_of<R>();
  h.params = {extern_type_of<A>()...};
  h.fn = [f = std::move(f)](const ExternValue* args) {
    (void)args;  // unused when the function takes nothing
    return to_extern_value<std::decay_t<R>>(f(from_extern_value<A>(args[K])...));
  };
  return h;
}
/// The HostFunction that calls f.
template <typename R, typename... A>
HostFunction host_function(std::function<R(A...)> f) {
  static_assert(!std::is_void_v<R>, "register_extern: a host function must return a value");
  return host_function(std::move(f), std::index_sequence_for<A...>());
}
}  // namespace detail

/// Registers a C++ function, function pointer or lambda (not a generic one) whose
/// parameters and result are bool, integers, float or double: its te signature follows
/// from them (float is float32, int32_t int32, ...).
/// `te::register_extern("my_activation", [](float x, float a) { return x > 0 ? x : a * x; });`
template <typename F>
void register_extern(const std::string& name, F fn) {
  register_extern(name, detail::host_function(std::function{std::move(fn)}));
}

}  // namespace te
