/// \file
/// Module and Function: natively compiled kernels you can call, and time_evaluator.
#pragma once
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "te/argument.h"
#include "te/export.h"

namespace te {

namespace detail {
struct ModuleImpl;  ///< The compiled code behind a Module (internal).
}

/// One function of a built Module. Cheap to copy; keeps the Module's code alive.
///
/// f(args...) takes the parameters of the LoweredFunc in order: an NDArray for each
/// buffer, then a number for each scalar parameter. Every call checks the arguments
/// (count, dtype, rank, each extent against the shape variables bound by earlier
/// arguments, storage, scalar types and ranges, arrays that overlap one the kernel
/// writes) and throws te::Error naming the parameter; a failed Assert in the kernel
/// throws te::Error with its message. Safe to call from several threads at once.
class TE_API Function {
 public:
  /// An undefined function (defined() is false).
  Function() = default;
  /// Calls the function: `f(a, b, c)` or `f(a, b, c, 0.5)`; each argument converts to
  /// an Argument (NDArray, DLPack tensor pointer or number).
  template <typename... Args>
  void operator()(Args&&... args) const {
    call(std::vector<Argument>{Argument(std::forward<Args>(args))...});
  }
  /// Calls the function with the arguments in parameter order.
  void call(const std::vector<Argument>& args) const;

  /// Whether this refers to a function of a Module.
  bool defined() const { return impl_ != nullptr; }
  /// The function's name (the LoweredFunc's).
  const std::string& name() const;
  /// "vadd(A: float32[n], B: float32[n], C: float32[n])": what a call expects.
  std::string signature() const;
  /// The parameters' names, in call order.
  std::vector<std::string> param_names() const;
  /// Whether the function stores into parameter `param` (an output buffer).
  bool writes(size_t param) const;
  /// The arguments of a call, as a command line runs a kernel on files: `inputs` are the
  /// buffers the function only reads, in parameter order; each buffer it writes is a new
  /// zero-filled array shaped from the shape variables the inputs bind (a dimension that
  /// is exactly a variable binds it) and `values`; each scalar parameter is its entry in
  /// `values`. te::Error for the wrong number of inputs, a name in `values` that is no
  /// variable of the function, a variable no input binds and `values` lacks, or a value
  /// that contradicts an input's shape. Dtypes and shapes are checked by the call.
  std::vector<Argument> make_arguments(const std::vector<NDArray>& inputs,
                                       const std::map<std::string, Argument>& values = {}) const;

 private:
  friend class Module;
  friend class TimeEvaluator;
  Function(std::shared_ptr<const detail::ModuleImpl> impl, size_t index) : impl_(std::move(impl)), index_(index) {}
  std::shared_ptr<const detail::ModuleImpl> impl_;
  size_t index_ = 0;
};

/// Compiled code for one or more LoweredFuncs (see te::build). Copies share the code,
/// which is freed when the last Module or Function referring to it is gone.
class TE_API Module {
 public:
  /// An undefined module (defined() is false).
  Module() = default;
  /// A module of compiled code (made by te::build).
  explicit Module(std::shared_ptr<const detail::ModuleImpl> impl) : impl_(std::move(impl)) {}

  /// The function called name; te::Error listing the names there are if none is.
  Function operator()(const std::string& name) const { return get_function(name); }
  /// The same as operator().
  Function get_function(const std::string& name) const;
  /// The names of the module's functions, in the order they were built.
  std::vector<std::string> function_names() const;
  /// Whether the module holds code.
  bool defined() const { return impl_ != nullptr; }

 private:
  std::shared_ptr<const detail::ModuleImpl> impl_;
};

/// Seconds per call, like TVM's ProfileResult: one entry per repeat.
struct TE_API TimingResult {
  std::vector<double> results;  ///< Seconds per call of each repeat.
  double mean = 0;              ///< The mean of results.
  /// The median of results.
  double median() const;
  /// The smallest of results.
  double min() const;
  /// The largest of results.
  double max() const;
  /// The (population) standard deviation of results, as tvmc prints it.
  double std_dev() const;
};

/// Times a Function like TVM's time_evaluator: one untimed warm-up call, then `repeat`
/// measurements, each the average over `number` calls. When a measurement takes less
/// than min_repeat_ms, `number` grows and that measurement is taken again. Arguments
/// are checked once per run, not per timed call.
class TE_API TimeEvaluator {
 public:
  /// See time_evaluator(), which checks the counts.
  TimeEvaluator(Function f, int number, int repeat, int min_repeat_ms);
  /// Times calls with these arguments.
  template <typename... Args>
  TimingResult operator()(Args&&... args) const {
    return run(std::vector<Argument>{Argument(std::forward<Args>(args))...});
  }
  /// Times calls with these arguments, in parameter order.
  TimingResult run(const std::vector<Argument>& args) const;

 private:
  Function f_;
  int number_, repeat_, min_repeat_ms_;
};

/// A TimeEvaluator for f: number >= 1, repeat >= 1, min_repeat_ms >= 0; te::Error
/// otherwise.
TE_API TimeEvaluator time_evaluator(const Function& f, int number = 10, int repeat = 1, int min_repeat_ms = 0);

}  // namespace te
