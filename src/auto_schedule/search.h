// The measured search of auto_schedule (trials > 0).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "auto_schedule/rules.h"
#include "te/autotune/measure.h"
#include "te/autotune/records.h"

namespace te::auto_sched {

// The tuning task of the rules' space: its key (the computation, target and options), the
// rules replayed with a config, the default schedule as reference, random inputs. Needs
// constant shapes (te::Error naming the tensor otherwise).
autotune::Task search_task(const std::vector<Tensor>& outputs, const AutoScheduleOptions& options,
                           const autotune::ConfigSpace& space);

// The verdict on a duel's rounds (the chosen config's and the rules' seconds, round by
// round): keep the chosen config when it won every round but one and the median of its
// per-round time ratios is more than 3% below 1. Exported for its tests only.
struct DuelRounds {
  bool keep_chosen = false;
  int rounds = 0, won = 0;    // rounds compared; rounds the chosen config was faster in
  double median_ratio = 1.0;  // chosen / rules, the median over the rounds
};
TE_API DuelRounds compare_rounds(const std::vector<double>& chosen, const std::vector<double>& rules);

// The chosen config and the rules' timed here, side by side (in_process_duel.cpp);
// exported for its tests only.
struct DuelResult {
  DuelRounds rounds;                      // the verdict (rounds.keep_chosen)
  double chosen_s = 0, rules_s = 0;       // the medians
  std::vector<autotune::Record> records;  // both configs' times (duel_key), for the records
};
// The key the duel's records are kept under: the search's, "/in_process" appended (its
// times are not the workers', so they stay out of the ranking).
std::string duel_key(const autotune::Task& task);
// The verdict of the last duel the records hold between `chosen` and `rules` (true: keep
// chosen), for a read-back to choose as the search did; nullopt when there is none.
std::optional<bool> duel_verdict(const std::vector<autotune::Record>& records, const autotune::Task& task,
                                 const autotune::Config& chosen, const autotune::Config& rules);
TE_API DuelResult duel_in_process(const autotune::Task& task, const autotune::Config& chosen,
                                  const autotune::Config& rules);

// Searches, measures and returns the best schedule found (the rules' when nothing beats
// them or there is nothing to choose).
Schedule search(const std::vector<Tensor>& outputs, const AutoScheduleOptions& options);

// The best config options.records holds for this graph (the key search() records under),
// replayed without measuring; the rules' schedule when the file holds none of it.
Schedule best_recorded(const std::vector<Tensor>& outputs, const AutoScheduleOptions& options);

}  // namespace te::auto_sched
