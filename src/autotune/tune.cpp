// The tuning loop: resume from records, ask the tuner, measure, record, report progress.
#include "te/autotune/tune.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <cmath>
#include <cstdio>

#include "te/error.h"

namespace te::autotune {

namespace {

std::string format_seconds(double s) {
  if (!std::isfinite(s)) return "-";
  if (s < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.3g} ms", s * 1e3);
  return fmt::format("{:.3g} s", s);
}

std::string format_duration(double s) {
  long t = std::lround(std::max(0.0, s));
  if (t >= 3600) return fmt::format("{}h{:02}m{:02}s", t / 3600, (t / 60) % 60, t % 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

}  // namespace

TuneResult tune(const Task& task, Tuner& tuner, const TuneOptions& options) {
  LocalMeasurer measurer(task, options.measure);
  return tune(task, tuner, measurer, options);
}

TuneResult tune(const Task& task, Tuner& tuner, Measurer& measurer, const TuneOptions& options) {
  if (task.key.empty()) throw Error("tune: the task has no key");
  if (task.space.size() != tuner.space().size() || task.space.knobs().size() != tuner.space().knobs().size())
    throw Error(fmt::format("tune '{}': the tuner was made for another space", task.key));
  TuneResult result;
  result.best_cost = std::numeric_limits<double>::infinity();
  const std::string target = target_string(task.target);

  // Resume: this key's records for this target count as measured.
  if (!options.records_path.empty()) {
    RecordFile file = read_records_file(options.records_path);
    if (!file.warnings.empty())
      std::fprintf(stderr, "tune: warning: %s\n", skipped_lines_summary(file, options.records_path).c_str());
    std::vector<Config> configs;
    std::vector<double> costs;
    size_t unknown = 0;
    for (const Record& r : file.records) {
      if (r.key != task.key || r.target != target) continue;
      std::optional<Config> c = task.space.from_labels(r.config);
      if (!c) {
        ++unknown;
        continue;
      }
      configs.push_back(*c);
      costs.push_back(r.cost());
      if (r.cost() < result.best_cost) {
        result.best_cost = r.cost();
        result.best = *c;
      }
    }
    if (unknown)
      std::fprintf(stderr, "tune: warning: %zu records of '%s' are not configs of this space (ignored)\n", unknown,
                   task.key.c_str());
    tuner.update(configs, costs);
    // Configs, not lines: a config measured twice (auto_schedule's close calls) is one.
    std::set<uint64_t> distinct;
    for (const Config& c : configs) distinct.insert(c.index());
    result.resumed = distinct.size();
    if (options.progress && result.resumed)
      std::fprintf(stderr, "tune %s: resumed %zu records from %s, best %s\n", task.key.c_str(), result.resumed,
                   options.records_path.c_str(), format_seconds(result.best_cost).c_str());
  }

  const size_t batch = std::max(options.batch_size ? options.batch_size : size_t(8), measurer.parallelism());
  const auto start = std::chrono::steady_clock::now();
  size_t done = result.resumed, since_best = 0;
  while (done < options.n_trial) {
    if (options.early_stopping && since_best >= options.early_stopping) break;
    if (options.time_budget_s > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= options.time_budget_s)
      break;
    std::vector<Config> configs = tuner.next_batch(std::min(batch, options.n_trial - done));
    if (configs.empty()) break;  // the space is exhausted
    std::vector<MeasureResult> measured = measurer.measure(configs);
    if (measured.size() != configs.size()) throw Error("tune: the measurer returned a result count that differs");
    std::vector<double> costs;
    std::vector<Record> records;
    for (size_t i = 0; i < configs.size(); ++i) {
      const MeasureResult& m = measured[i];
      costs.push_back(m.cost());
      records.push_back(make_record(task.key, configs[i], m.ok, m.error, m.times, m.build_s, target));
      ++since_best;
      if (!m.ok) ++result.failed;
      if (m.cost() < result.best_cost) {
        result.best_cost = m.cost();
        result.best = configs[i];
        since_best = 0;
      }
      if (!m.ok && options.progress)
        std::fprintf(stderr, "tune %s: config [%s] failed: %s\n", task.key.c_str(), configs[i].to_string().c_str(),
                     m.error.c_str());
    }
    if (!options.records_path.empty()) append_records_file(options.records_path, records);
    result.records.insert(result.records.end(), records.begin(), records.end());
    tuner.update(configs, costs);
    done += configs.size();
    result.measured += configs.size();
    if (options.progress) {
      double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      double per_trial = elapsed / double(result.measured);
      std::fprintf(stderr, "tune %s: trial %zu/%zu, %zu failed, best %s [%s], %.2f s/trial, ETA %s\n", task.key.c_str(),
                   done, options.n_trial, result.failed, format_seconds(result.best_cost).c_str(),
                   result.best ? result.best->to_string().c_str() : "none", per_trial,
                   format_duration(per_trial * double(options.n_trial - done)).c_str());
    }
  }
  return result;
}

LoweredFunc apply_best(const std::vector<Record>& records, const Task& task) {
  if (!task.build) throw Error(fmt::format("apply_best '{}': the task has no build callback", task.key));
  const std::string target = target_string(task.target);
  if (std::optional<Config> c = best_config(records, task.key, task.space, target)) return task.build(*c);
  if (task.reference) return task.reference();
  throw Error(fmt::format("apply_best: no record of '{}' for target {} and the task has no reference schedule",
                          task.key, target));
}

LoweredFunc apply_best(const std::string& records_path, const Task& task) {
  if (!task.build) throw Error(fmt::format("apply_best '{}': the task has no build callback", task.key));
  // A file was asked for: falling back to the reference schedule would hide a wrong path
  // or file behind a slow kernel.
  RecordFile file = load_records(records_path);
  const std::string target = target_string(task.target);
  std::optional<Config> c = best_config(file.records, task.key, task.space, target);
  if (!c)
    throw Error(
        fmt::format("tuning records: '{}' holds {}", records_path, no_record_reason(file.records, task.key, target)));
  return task.build(*c);
}

}  // namespace te::autotune
