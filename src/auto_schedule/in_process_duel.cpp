// The search's last check: the config it chose against the rules' own, both built and
// timed here, in the process that will run the kernel, in interleaved rounds. Forked
// workers place buffers and pages otherwise than the caller does (a C1D config 2% faster
// in its worker ran 10% slower in the program), and a machine's load drifts between
// trials: timed side by side here, each round alternating which goes first, both see the
// same memory and the same drift. A lead the rounds do not agree on is not kept: the
// chosen config must win every round but one, by 3% at the median of the rounds' ratios
// (a config 3% faster in one duel ran 2-5% slower minutes later in the bench, session 38,
// where a median of seven rounds had hidden two lost ones).
#include <fmt/format.h>

#include <algorithm>

#include "auto_schedule/search.h"
#include "te/build.h"
#include "te/module.h"

namespace te::auto_sched {

namespace {

constexpr int kRounds = 9;        // each config timed once per round
constexpr int kMinRoundMs = 20;   // a round's measurement of one config lasts at least this
constexpr double kBeatBy = 1.03;  // the chosen config must be this much faster
constexpr int kRoundsToLose = 1;  // at most this many rounds may go to the rules

}  // namespace

DuelRounds compare_rounds(const std::vector<double>& chosen, const std::vector<double>& rules) {
  DuelRounds out;
  std::vector<double> ratios;  // chosen / rules, round by round
  for (size_t i = 0; i < std::min(chosen.size(), rules.size()); ++i) {
    ratios.push_back(chosen[i] / std::max(rules[i], 1e-12));
    out.won += chosen[i] < rules[i];
  }
  out.rounds = static_cast<int>(ratios.size());
  if (ratios.empty()) return out;
  out.median_ratio = autotune::median_time(ratios);
  out.keep_chosen = out.median_ratio * kBeatBy < 1 && out.won >= out.rounds - kRoundsToLose;
  return out;
}

DuelResult duel_in_process(const autotune::Task& task, const autotune::Config& chosen, const autotune::Config& rules) {
  DuelResult out;
  std::vector<Function> fns;
  for (const autotune::Config* c : {&chosen, &rules}) {
    LoweredFunc f = task.build(*c);
    BuildOptions options;
    options.target = task.target;
    fns.push_back(build(f, options)(f.name));
  }
  std::vector<Argument> args = task.make_args();
  std::vector<std::vector<double>> times(2);
  for (int round = 0; round < kRounds; ++round)
    for (int k = 0; k < 2; ++k) {
      const size_t which = static_cast<size_t>((round + k) % 2);  // who goes first alternates
      TimingResult t = time_evaluator(fns[which], 1, 1, kMinRoundMs).run(args);
      times[which].push_back(std::max(t.results.at(0), 1e-9));
    }
  out.chosen_s = autotune::median_time(times[0]);
  out.rules_s = autotune::median_time(times[1]);
  out.rounds = compare_rounds(times[0], times[1]);
  const std::string target = autotune::target_string(task.target), key = duel_key(task);
  out.records.push_back(autotune::make_record(key, chosen, true, "", times[0], 0, target));
  out.records.push_back(autotune::make_record(key, rules, true, "", times[1], 0, target));
  return out;
}

std::string duel_key(const autotune::Task& task) { return task.key + "/in_process"; }

std::optional<bool> duel_verdict(const std::vector<autotune::Record>& records, const autotune::Task& task,
                                 const autotune::Config& chosen, const autotune::Config& rules) {
  const std::string key = duel_key(task), target = autotune::target_string(task.target);
  const autotune::Record *last_chosen = nullptr, *last_rules = nullptr;
  for (const autotune::Record& r : records) {
    if (!r.ok || r.key != key || r.target != target) continue;
    std::optional<autotune::Config> c = task.space.from_labels(r.config);
    if (!c) continue;
    if (c->index() == chosen.index()) last_chosen = &r;
    if (c->index() == rules.index()) last_rules = &r;
  }
  if (!last_chosen || !last_rules) return std::nullopt;
  return compare_rounds(last_chosen->times, last_rules->times).keep_chosen;
}

}  // namespace te::auto_sched
