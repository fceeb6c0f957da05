/// \file
/// tune(): the loop that asks a tuner for configs, measures them, appends records and
/// prints progress; apply_best(): the kernel with the best recorded config.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "te/autotune/measure.h"
#include "te/autotune/records.h"
#include "te/autotune/tuner.h"
#include "te/export.h"

namespace te::autotune {

/// Options of tune().
struct TE_API TuneOptions {
  /// Configs measured for this key and the task's target in all, counting those already in the
  /// records file: a resumed run measures only the rest.
  size_t n_trial = 64;
  /// Configs per round of the tuner (0: 8, at least the measurer's parallelism).
  size_t batch_size = 0;
  /// Stop after this many measured configs without a better one (0: never).
  size_t early_stopping = 0;
  /// Start no new batch once this many seconds have passed (0: no limit but n_trial).
  double time_budget_s = 0;
  /// JSON-lines file the records are appended to and a run resumes from ("" : none).
  std::string records_path;
  bool progress = true;    ///< a progress line on stderr after every batch
  MeasureOptions measure;  ///< how each config is measured
};

/// What tune() found.
struct TE_API TuneResult {
  std::optional<Config> best;   ///< the cheapest config of this key (resumed records included)
  double best_cost = 0;         ///< its time in seconds (infinity when none succeeded)
  size_t resumed = 0;           ///< distinct configs of this key read from the file
  size_t measured = 0;          ///< configs measured by this run
  size_t failed = 0;            ///< of which failed
  std::vector<Record> records;  ///< this run's records
};

/// Tunes with forked local workers (LocalMeasurer).
TE_API TuneResult tune(const Task& task, Tuner& tuner, const TuneOptions& options = {});
/// Tunes with any measurer (MPI ranks, a synthetic function...).
TE_API TuneResult tune(const Task& task, Tuner& tuner, Measurer& measurer, const TuneOptions& options = {});

/// The task's kernel with the cheapest recorded config of its key for its target; with the
/// reference (default) schedule when there is none; te::Error when it has neither.
TE_API LoweredFunc apply_best(const std::vector<Record>& records, const Task& task);
/// The task's kernel with the cheapest config of its key for its target in a records file;
/// te::Error (no fallback to the reference) when the file is missing, a directory, empty,
/// not records, or holds no successful record of this key for its target (load_records,
/// no_record_reason).
TE_API LoweredFunc apply_best(const std::string& records_path, const Task& task);

}  // namespace te::autotune
