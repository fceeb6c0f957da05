// SearchTuner: warm-up at random, then model-ranked candidates bred from the best.
#include "auto_schedule/search_tuner.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_set>

namespace te::auto_sched {

using autotune::Config;

SearchHistory& SearchHistory::process() {
  static SearchHistory history;
  return history;
}

void SearchHistory::add(const std::vector<std::vector<float>>& rows, const std::vector<float>& targets) {
  std::lock_guard<std::mutex> lock(mutex_);
  rows_.insert(rows_.end(), rows.begin(), rows.end());
  targets_.insert(targets_.end(), targets.begin(), targets.end());
}

void SearchHistory::recent(size_t limit, std::vector<std::vector<float>>* rows, std::vector<float>* targets) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t from = rows_.size() > limit ? rows_.size() - limit : 0;
  rows->assign(rows_.begin() + long(from), rows_.end());
  targets->assign(targets_.begin() + long(from), targets_.end());
}

size_t SearchHistory::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return rows_.size();
}

SearchTuner::SearchTuner(autotune::ConfigSpace space, FeatureFn features, SearchTunerOptions options, CodeFn code)
    : Tuner(std::move(space)),
      features_(std::move(features)),
      options_(options),
      rng_(options.seed),
      code_(std::move(code)) {
  if (options_.history) options_.history->recent(options_.history_rows, &prior_rows_, &prior_targets_);
  dirty_ = !prior_rows_.empty();
}

bool SearchTuner::fresh_code(const Config& c) {
  features_of(c);  // lowered once, and counted: the code is of the same lowering
  std::optional<uint64_t> code = code_(c);
  if (!code || codes_.insert(*code).second) return true;  // one that does not lower fails when measured
  ++duplicates_;
  excluded_.insert(c.index());
  return false;
}

const std::optional<std::vector<float>>& SearchTuner::features_of(const Config& c) {
  auto it = cache_.find(c.index());
  if (it == cache_.end()) it = cache_.emplace(c.index(), features_(c)).first;
  return it->second;
}

Config SearchTuner::mutate(const Config& c) {
  std::vector<size_t> idx = c.indices();
  const auto& knobs = space_.knobs();
  const int changes = std::uniform_int_distribution<int>(1, 2)(rng_);
  for (int k = 0; k < changes; ++k) {
    size_t knob = std::uniform_int_distribution<size_t>(0, knobs.size() - 1)(rng_);
    const size_t options = knobs[knob].size();
    if (options < 2) continue;
    // Ordered options: a step or two away; the neighbours of a tile size are its likely rivals.
    int step = std::uniform_int_distribution<int>(1, 2)(rng_) * (std::bernoulli_distribution(0.5)(rng_) ? 1 : -1);
    long next = long(idx[knob]) + step;
    if (next < 0 || next >= long(options)) next = long(idx[knob]) - step;
    idx[knob] = size_t(std::clamp(next, 0L, long(options) - 1));
  }
  return space_.from_indices(idx);
}

void SearchTuner::observe(const std::vector<Config>& configs, const std::vector<double>& costs) {
  // Measured configs (resumed, or measured first) claim their code too.
  if (code_)
    for (const Config& c : configs)
      if (std::optional<uint64_t> code = code_(c)) codes_.insert(*code);
  measured_.insert(measured_.end(), configs.begin(), configs.end());
  costs_.insert(costs_.end(), costs.begin(), costs.end());
  dirty_ = true;
}

void SearchTuner::own_rows(std::vector<std::vector<float>>* rows, std::vector<float>* targets) {
  double best = std::numeric_limits<double>::infinity();
  for (double c : costs_) best = std::min(best, c);
  if (!std::isfinite(best)) return;
  for (size_t i = 0; i < measured_.size(); ++i) {
    const auto& f = features_of(measured_[i]);
    if (!f) continue;
    // Failed configs are taught as much slower than the best, so that they rank last.
    double rel = std::isfinite(costs_[i]) ? costs_[i] / best : 64.0;
    rows->push_back(*f);
    targets->push_back(float(std::log2(rel)));
  }
}

void SearchTuner::refit() {
  if (!dirty_) return;
  dirty_ = false;
  std::vector<std::vector<float>> rows = prior_rows_;
  std::vector<float> targets = prior_targets_;
  own_rows(&rows, &targets);
  model_.fit(rows, targets);
}

void SearchTuner::contribute(SearchHistory& h) {
  std::vector<std::vector<float>> rows;
  std::vector<float> targets;
  own_rows(&rows, &targets);
  h.add(rows, targets);
}

std::vector<Config> SearchTuner::propose(size_t n) {
  if (!code_) return propose_ranked(n);
  // Duplicates drop out of a batch: ask again for the rest (the skipped and the chosen
  // are excluded) until n distinct codes, the space runs out, or the batch has lowered
  // its share of candidates (then the rest of the space is likely the same code; a batch
  // with none new ends the search).
  std::vector<Config> out;
  const size_t lowered_before = lowered();
  while (out.size() < n && lowered() - lowered_before < options_.lowerings_per_batch) {
    std::vector<Config> batch = propose_ranked(n - out.size());
    if (batch.empty()) break;
    for (const Config& c : batch) {
      excluded_.insert(c.index());
      if (fresh_code(c)) out.push_back(c);
    }
  }
  // Proposed configs are seen() from now on; only the skipped ones stay excluded.
  for (const Config& c : out) excluded_.erase(c.index());
  return out;
}

std::vector<Config> SearchTuner::propose_ranked(size_t n) {
  size_t ok = 0;
  for (double c : costs_) ok += std::isfinite(c);
  // With earlier searches' rows the model ranks from the start: no random warm-up.
  const size_t warmup = prior_rows_.empty() ? options_.warmup : 0;
  if (ok < warmup || space_.knobs().empty()) return random_unseen(n, rng_, excluded_);
  refit();
  if (!model_.fitted()) return random_unseen(n, rng_, excluded_);

  // Parents: the cheapest measured configs (none yet: the candidates are random ones).
  std::vector<size_t> order(measured_.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return costs_[a] < costs_[b]; });
  std::vector<Config> parents;
  for (size_t i = 0; i < order.size() && parents.size() < options_.parents; ++i)
    if (std::isfinite(costs_[order[i]])) parents.push_back(measured_[order[i]]);

  // Candidates: mutations of the parents (and of their mutations), and random configs.
  std::unordered_set<uint64_t> taken = excluded_;
  std::vector<Config> pool;
  auto consider = [&](const Config& c) {
    if (seen(c.index()) || !taken.insert(c.index()).second) return;
    if (features_of(c)) pool.push_back(c);
  };
  const size_t budget = std::max(options_.candidates, n * 4);
  for (size_t tries = 0; !parents.empty() && pool.size() < budget * 3 / 4 && tries < budget * 4; ++tries) {
    const Config& p = parents[tries % parents.size()];
    Config child = mutate(p);
    if (std::bernoulli_distribution(0.3)(rng_)) child = mutate(child);
    consider(child);
  }
  for (const Config& c : random_unseen(budget - std::min(budget, pool.size()), rng_, taken)) consider(c);

  std::vector<std::vector<float>> rows;
  for (const Config& c : pool) rows.push_back(*features_of(c));
  std::vector<float> score = model_.predict(rows);
  std::vector<size_t> rank(pool.size());
  std::iota(rank.begin(), rank.end(), 0);
  std::stable_sort(rank.begin(), rank.end(), [&](size_t a, size_t b) { return score[a] < score[b]; });

  const size_t exploit = n - size_t(std::floor(double(n) * options_.explore));
  std::vector<Config> out;
  std::unordered_set<uint64_t> chosen = excluded_;
  for (size_t i = 0; i < rank.size() && out.size() < exploit; ++i) {
    out.push_back(pool[rank[i]]);
    chosen.insert(pool[rank[i]].index());
  }
  for (const Config& c : random_unseen(n - out.size(), rng_, chosen)) out.push_back(c);
  return out;
}

}  // namespace te::auto_sched
