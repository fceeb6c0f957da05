/// \file
/// Measuring configs: build + check + time each one in a worker process, so that a config
/// that crashes, hangs, throws or computes the wrong answer is recorded as failed (with its
/// reason) and never takes the tuner down.
///
/// LocalMeasurer forks workers from the calling process: the schedule comes from the
/// user's C++ callback, so the worker must be the user's own program. The tuning process
/// itself never compiles or runs a kernel (it only forks, reads and writes), and so stays
/// free of the JIT's and the thread pool's state; a worker is forked before any trial and
/// serves trials one at a time until it dies or times out, and is then replaced. A worker
/// makes its own thread pool (a forked child has none of its parent's threads), so tune()
/// may be called after this process ran kernels with parallel loops.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "te/argument.h"
#include "te/autotune/space.h"
#include "te/export.h"
#include "te/ir.h"
#include "te/target.h"

namespace te::autotune {

/// What to tune: a kernel key, its space, the schedule callback and the arguments.
struct TE_API Task {
  std::string key;    ///< names the kernel and its shapes in records ("sgemm/1024")
  ConfigSpace space;  ///< the knobs of its schedule
  /// The kernel with a config's schedule. A te::Error (or any exception) marks the config failed.
  std::function<LoweredFunc(const Config&)> build;
  /// The kernel with the default schedule: its output is what every config must match.
  /// Empty: outputs are not checked.
  std::function<LoweredFunc()> reference;
  /// The arguments of every call (called once, in the tuning process, which must not run
  /// kernels): inputs filled with data, outputs allocated.
  std::function<std::vector<Argument>()> make_args;
  /// The positions of the arguments the kernel writes (default: the last array).
  std::vector<size_t> outputs;
  /// What each config is compiled for (build()'s BuildOptions::target): the host by
  /// default, or a CPU it can run ("llvm -mcpu=x86-64-v3" on an AVX-512 host: the
  /// configs are measured here). Records name it (target_string); LocalMeasurer gives a
  /// te::Error for a target this host cannot run (check_runs_on_host).
  Target target;
};

/// How a config is measured.
struct TE_API MeasureOptions {
  int number = 1;                    ///< time_evaluator: calls per measurement
  int repeat = 3;                    ///< measurements (the record's times)
  int min_repeat_ms = 0;             ///< grow `number` until one measurement takes this long
  double timeout_s = 10;             ///< per trial: schedule, lower, compile, check and time
  double reference_timeout_s = 300;  ///< computing the reference output once
  double rtol = 1e-4;                ///< relative tolerance: |out - ref| <= atol + rtol * |ref|
  double atol = 1e-5;                ///< absolute tolerance, as above
  /// Multiply atol by the reference output's largest magnitude (at least 1): a long sum's
  /// rounding error follows the size of its terms, not of its result, which cancelling
  /// terms can bring near 0 (an element of a 1029-term convolution off by 1e-5 at 2e-4).
  bool scale_atol = false;
  /// Run Task::reference with its floating-point types widened to float64 (inputs
  /// converted): configs are checked against the true result, not against the default
  /// schedule's float32 rounding (an in-order sum of millions of terms drifts by 1e-3).
  /// A reference that cannot be widened (extern calls, tensor intrinsics) runs as it is.
  bool reference_float64 = false;
};

/// The outcome of measuring one config.
struct TE_API MeasureResult {
  bool ok = false;            ///< built, correct and timed
  std::string error;          ///< why it failed: "schedule/lower failed: ...", "timeout ..."
  std::vector<double> times;  ///< seconds per call, one per repeat
  double build_s = 0;         ///< schedule + lower + compile
  double cost() const;        ///< median time (median_time); infinity when failed
};

/// Measures configs of a task: locally, over MPI, or by a function.
class TE_API Measurer {
 public:
  virtual ~Measurer() = default;
  /// One result per config, in order.
  virtual std::vector<MeasureResult> measure(const std::vector<Config>& configs) = 0;
  /// How many configs it measures at once: tune() makes batches at least this large.
  virtual size_t parallelism() const { return 1; }
};

/// Measures in forked worker processes (see above), one trial at a time.
class TE_API LocalMeasurer : public Measurer {
 public:
  /// A measurer of task's configs.
  LocalMeasurer(Task task, MeasureOptions options = {});
  ~LocalMeasurer() override;
  LocalMeasurer(const LocalMeasurer&) = delete;
  LocalMeasurer& operator=(const LocalMeasurer&) = delete;

  /// Measures each config in a worker process (restarted after a crash or timeout).
  std::vector<MeasureResult> measure(const std::vector<Config>& configs) override;
  /// Workers started so far (one, plus one after each crash or timeout).
  int workers_started() const { return workers_started_; }

 private:
  void prepare();  ///< arguments and the reference output, once
  /// The reference's outputs, computed in a child process: `wide` (the float64 reference)
  /// or, when it is empty, Task::reference as it is.
  std::vector<NDArray> run_reference(const std::optional<LoweredFunc>& wide, std::vector<Argument> ref_args,
                                     const std::vector<size_t>& outs);
  void start_worker();
  void stop_worker(bool kill_now);
  MeasureResult measure_one(const Config& c);

  Task task_;
  MeasureOptions options_;
  bool prepared_ = false;
  std::vector<Argument> args_;
  std::vector<NDArray> reference_;             ///< one per output
  std::vector<NDArray> reference_as_written_;  ///< with a float64 reference_: the default schedule's own
  pid_t worker_ = -1;
  int fd_ = -1;  ///< the tuner's end of the worker's socket
  int workers_started_ = 0;
};

/// Measures in this process by calling a function: synthetic objectives and tests of tuners.
class TE_API FunctionMeasurer : public Measurer {
 public:
  /// A measurer that calls fn for each config.
  explicit FunctionMeasurer(std::function<MeasureResult(const Config&)> fn) : fn_(std::move(fn)) {}
  /// fn of each config.
  std::vector<MeasureResult> measure(const std::vector<Config>& configs) override;

 private:
  std::function<MeasureResult(const Config&)> fn_;
};

/// Runs one trial in this process (what a worker does): schedule and build the config's
/// kernel, run it on args with the outputs cleared, compare them with reference (when not
/// empty), then time it. Never throws: every failure is the result's error. `as_written`
/// (with a float64 reference): the reference schedule's outputs in their own types; an
/// output within the tolerances of either reference is right (the definition's own
/// float32 rounding is no config's fault).
TE_API MeasureResult run_trial(const Task& task, const Config& config, std::vector<Argument>& args,
                               const std::vector<NDArray>& reference, const MeasureOptions& options,
                               const std::vector<NDArray>& as_written = {});

/// A result as one line of JSON (how workers and MPI ranks send them), and back: a line
/// that is not one gives a failed result saying so (never throws).
TE_API std::string format_result(const MeasureResult& r);
/// The result format_result wrote (a failed result for a malformed line).
TE_API MeasureResult parse_result(const std::string& line);

/// The output positions of a task (its `outputs`, or the last array of args).
TE_API std::vector<size_t> output_positions(const Task& task, const std::vector<Argument>& args);

}  // namespace te::autotune
