// One trial, as a worker runs it: schedule, lower, compile, check against the reference
// output, time. Every failure becomes the result's error, prefixed by the step it hit.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <algorithm>
#include <cstring>
#include <limits>

#include "autotune/float64_reference.h"
#include "autotune/wire.h"
#include "te/autotune/measure.h"
#include "te/autotune/records.h"
#include "te/build.h"
#include "te/error.h"
#include "te/module.h"

namespace te::autotune {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// "" when out matches ref within the tolerances; otherwise the first mismatch.
std::string compare(const NDArray& out, const NDArray& ref, const std::string& name, const MeasureOptions& o) {
  // A float64 reference (MeasureOptions::reference_float64) checks any float output.
  const bool same_kind = out.dtype() == ref.dtype() || (out.dtype().is_float() && ref.dtype().is_float());
  if (!same_kind || out.shape() != ref.shape())
    return fmt::format("output '{}' has shape {} but the reference has {}", name, out.shape_string(),
                       ref.shape_string());
  bool is_float = out.dtype().is_float();
  double atol = o.atol;
  if (o.scale_atol && is_float) {
    double largest = 1;
    for (int64_t i = 0; i < ref.size(); ++i) {
      const double v = element_value(ref, i);
      if (std::isfinite(v)) largest = std::max(largest, std::fabs(v));
    }
    atol *= largest;
  }
  for (int64_t i = 0; i < out.size(); ++i) {
    double a = element_value(out, i), b = element_value(ref, i);
    if (std::isnan(a) && std::isnan(b)) continue;  // both left unwritten, or both NaN
    bool close = is_float ? std::fabs(a - b) <= atol + o.rtol * std::fabs(b) : a == b;
    if (!close) return fmt::format("output '{}' element {} is {}, expected {}", name, i, a, b);
  }
  return "";
}

}  // namespace

double MeasureResult::cost() const {
  if (!ok || times.empty()) return std::numeric_limits<double>::infinity();
  return median_time(times);
}

std::vector<size_t> output_positions(const Task& task, const std::vector<Argument>& args) {
  if (!task.outputs.empty()) {
    for (size_t p : task.outputs)
      if (p >= args.size() || !args[p].is_array())
        throw Error(fmt::format("tune '{}': output position {} is not an array argument ({} arguments)", task.key, p,
                                args.size()));
    return task.outputs;
  }
  for (size_t p = args.size(); p-- > 0;)
    if (args[p].is_array()) return {p};
  throw Error(fmt::format("tune '{}': make_args gave no array to write", task.key));
}

MeasureResult run_trial(const Task& task, const Config& config, std::vector<Argument>& args,
                        const std::vector<NDArray>& reference, const MeasureOptions& options,
                        const std::vector<NDArray>& as_written) {
  MeasureResult r;
  auto t0 = std::chrono::steady_clock::now();
  auto failed = [&](const std::string& step, const std::string& what) {
    r.ok = false;
    r.error = step + ": " + what;
    r.times.clear();
    return r;
  };
  LoweredFunc f;
  try {
    f = task.build(config);
  } catch (const std::exception& e) {
    return failed("schedule/lower failed", e.what());
  } catch (...) {
    return failed("schedule/lower failed", "an exception that is not a std::exception");
  }
  Function fn;
  try {
    BuildOptions build_options;
    build_options.target = task.target;
    fn = build(f, build_options)(f.name);
  } catch (const std::exception& e) {
    return failed("build failed", e.what());
  }
  r.build_s = seconds_since(t0);
  std::vector<size_t> outs;
  try {
    outs = output_positions(task, args);
    detail::poison_outputs(args, outs);
    fn.call(args);
  } catch (const std::exception& e) {
    return failed("run failed", e.what());
  }
  if (!reference.empty()) {
    for (size_t k = 0; k < outs.size() && k < reference.size(); ++k) {
      std::string name = outs[k] < f.params.size() ? f.params[outs[k]].name() : std::to_string(outs[k]);
      std::string diff = compare(args[outs[k]].array(), reference[k], name, options);
      if (!diff.empty() && k < as_written.size() &&
          compare(args[outs[k]].array(), as_written[k], name, options).empty())
        diff.clear();
      if (!diff.empty()) return failed("wrong output", diff);
    }
  }
  try {
    TimingResult t = time_evaluator(fn, options.number, options.repeat, options.min_repeat_ms).run(args);
    for (double s : t.results) r.times.push_back(std::max(s, 1e-9));  // records need times > 0
  } catch (const std::exception& e) {
    return failed("timing failed", e.what());
  }
  r.ok = true;
  return r;
}

std::vector<MeasureResult> FunctionMeasurer::measure(const std::vector<Config>& configs) {
  std::vector<MeasureResult> out;
  for (const Config& c : configs) {
    try {
      out.push_back(fn_(c));
    } catch (const std::exception& e) {
      MeasureResult r;
      r.error = e.what();
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace te::autotune
