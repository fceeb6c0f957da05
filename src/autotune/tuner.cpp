#include "te/autotune/tuner.h"

#include <algorithm>

#include "te/error.h"

namespace te::autotune {

Tuner::Tuner(ConfigSpace space) : space_(std::move(space)) {}

std::vector<Config> Tuner::next_batch(size_t n) {
  std::vector<Config> out;
  auto take = [&](Config& c) {
    if (out.size() >= n || seen(c.index())) return;
    seen_.insert(c.index());
    out.push_back(std::move(c));
  };
  size_t used = 0;
  for (; used < first_.size() && out.size() < n; ++used) take(first_[used]);
  first_.erase(first_.begin(), first_.begin() + std::ptrdiff_t(used));
  if (out.size() < n)
    for (Config& c : propose(n - out.size())) take(c);
  return out;
}

void Tuner::measure_first(const std::vector<Config>& configs) {
  for (const Config& c : configs) {
    if (c.knobs().size() != space_.knobs().size() || c.index() >= space_.size())
      throw Error("Tuner::measure_first: the config is not of the tuner's space");
    first_.push_back(c);
  }
}

void Tuner::update(const std::vector<Config>& configs, const std::vector<double>& costs) {
  if (configs.size() != costs.size()) throw Error("Tuner::update: one cost per config is needed");
  for (size_t i = 0; i < configs.size(); ++i) {
    seen_.insert(configs[i].index());
    if (costs[i] < best_cost_) {
      best_cost_ = costs[i];
      best_ = configs[i];
    }
  }
  observe(configs, costs);
}

std::vector<Config> Tuner::random_unseen(size_t n, std::mt19937_64& rng, const std::unordered_set<uint64_t>& taken) {
  const uint64_t size = space_.size();
  const uint64_t used = seen_.size() + taken.size();
  std::vector<Config> out;
  if (n == 0 || used >= size) return out;
  auto free = [&](uint64_t i) { return !seen(i) && !taken.count(i); };
  if (size <= (uint64_t(1) << 20) && used * 2 >= size) {
    // Mostly seen: pick among the rest.
    std::vector<uint64_t> rest;
    for (uint64_t i = 0; i < size; ++i)
      if (free(i)) rest.push_back(i);
    std::shuffle(rest.begin(), rest.end(), rng);
    for (size_t k = 0; k < rest.size() && out.size() < n; ++k) out.push_back(space_.at(rest[k]));
    return out;
  }
  // Mostly unseen: each draw is new with probability above 1/2.
  std::uniform_int_distribution<uint64_t> pick(0, size - 1);
  std::unordered_set<uint64_t> chosen;
  for (size_t tries = 0; out.size() < n && tries < 64 * n + 1024; ++tries) {
    uint64_t i = pick(rng);
    if (!free(i) || !chosen.insert(i).second) continue;
    out.push_back(space_.at(i));
  }
  return out;
}

std::vector<Config> GridTuner::propose(size_t n) {
  std::vector<Config> out;
  while (out.size() < n && next_ < space_.size()) {
    if (!seen(next_)) out.push_back(space_.at(next_));
    ++next_;
  }
  return out;
}

std::vector<Config> RandomTuner::propose(size_t n) { return random_unseen(n, rng_); }

}  // namespace te::autotune
