// Module and Function: natively compiled kernels you can call, and time_evaluator.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "te/argument.h"

namespace te {

namespace detail {
struct ModuleImpl;
}

// One function of a built Module. Cheap to copy; keeps the Module's code alive.
//
// f(args...) takes the parameters of the LoweredFunc in order: an NDArray for each
// buffer, then a number for each scalar parameter. Every call checks the arguments
// (count, dtype, rank, each extent against the shape variables bound by earlier
// arguments, storage, scalar types and ranges, arrays that overlap one the kernel
// writes) and throws te::Error naming the parameter; a failed Assert in the kernel
// throws te::Error with its message. Safe to call from several threads at once.
class Function {
 public:
  Function() = default;
  template <typename... Args>
  void operator()(Args&&... args) const {
    call(std::vector<Argument>{Argument(std::forward<Args>(args))...});
  }
  void call(const std::vector<Argument>& args) const;

  bool defined() const { return impl_ != nullptr; }
  const std::string& name() const;
  // "vadd(A: float32[n], B: float32[n], C: float32[n])": what a call expects.
  std::string signature() const;

 private:
  friend class Module;
  friend class TimeEvaluator;
  Function(std::shared_ptr<const detail::ModuleImpl> impl, size_t index)
      : impl_(std::move(impl)), index_(index) {}
  std::shared_ptr<const detail::ModuleImpl> impl_;
  size_t index_ = 0;
};

// Compiled code for one or more LoweredFuncs (see te::build). Copies share the code,
// which is freed when the last Module or Function referring to it is gone.
class Module {
 public:
  Module() = default;
  explicit Module(std::shared_ptr<const detail::ModuleImpl> impl) : impl_(std::move(impl)) {}

  // The function called name; te::Error listing the names there are if none is.
  Function operator()(const std::string& name) const { return get_function(name); }
  Function get_function(const std::string& name) const;
  std::vector<std::string> function_names() const;
  bool defined() const { return impl_ != nullptr; }

 private:
  std::shared_ptr<const detail::ModuleImpl> impl_;
};

// Seconds per call, like TVM's ProfileResult: one entry per repeat.
struct TimingResult {
  std::vector<double> results;
  double mean = 0;
  double median() const;
  double min() const;
  double max() const;
};

// Times a Function like TVM's time_evaluator: one untimed warm-up call, then `repeat`
// measurements, each the average over `number` calls. When a measurement takes less
// than min_repeat_ms, `number` grows and that measurement is taken again. Arguments
// are checked once per run, not per timed call.
class TimeEvaluator {
 public:
  TimeEvaluator(Function f, int number, int repeat, int min_repeat_ms);
  template <typename... Args>
  TimingResult operator()(Args&&... args) const {
    return run(std::vector<Argument>{Argument(std::forward<Args>(args))...});
  }
  TimingResult run(const std::vector<Argument>& args) const;

 private:
  Function f_;
  int number_, repeat_, min_repeat_ms_;
};

// number >= 1, repeat >= 1, min_repeat_ms >= 0; te::Error otherwise.
TimeEvaluator time_evaluator(const Function& f, int number = 10, int repeat = 1,
                             int min_repeat_ms = 0);

}  // namespace te
