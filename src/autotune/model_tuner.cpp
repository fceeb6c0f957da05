// CostModel (ridge regression on knob features) and ModelTuner (simulated annealing on it).
#include <algorithm>
#include <cmath>
#include <map>

#include "te/autotune/tuner.h"
#include "te/error.h"

namespace te::autotune {

namespace {
// Solves A x = b for a symmetric positive definite A (n x n, row-major) by Cholesky;
// false when A is not positive definite.
bool solve_spd(std::vector<double> a, std::vector<double> b, size_t n, std::vector<double>* x) {
  for (size_t j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (size_t k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
    if (!(d > 0)) return false;
    d = std::sqrt(d);
    a[j * n + j] = d;
    for (size_t i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      for (size_t k = 0; k < j; ++k) s -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = s / d;
    }
  }
  for (size_t i = 0; i < n; ++i) {  // L y = b
    double s = b[i];
    for (size_t k = 0; k < i; ++k) s -= a[i * n + k] * b[k];
    b[i] = s / a[i * n + i];
  }
  for (size_t i = n; i-- > 0;) {  // L^T x = y
    double s = b[i];
    for (size_t k = i + 1; k < n; ++k) s -= a[k * n + i] * b[k];
    b[i] = s / a[i * n + i];
  }
  *x = std::move(b);
  return true;
}
}  // namespace

CostModel::CostModel(const ConfigSpace& space, double lambda) : knobs_(space.knobs()), lambda_(lambda) {
  size_t quadratic = 0;
  for (const Knob& k : knobs_) {
    if (k.size() < 2) continue;
    if (k.ordered()) {
      num_linear_ += 1;
      quadratic += 1;
    } else {
      num_linear_ += k.size() - 1;
    }
  }
  pairwise_ = num_linear_ <= 24;  // beyond that the pairs outnumber any realistic budget
  num_features_ = 1 + num_linear_ + quadratic + (pairwise_ ? num_linear_ * (num_linear_ - 1) / 2 : 0);
}

std::vector<double> CostModel::linear_features(const std::vector<size_t>& indices) const {
  std::vector<double> f;
  f.reserve(num_linear_);
  for (size_t i = 0; i < knobs_.size(); ++i) {
    const Knob& k = knobs_[i];
    if (k.size() < 2) continue;
    if (k.ordered()) {
      f.push_back(double(indices[i]) / double(k.size() - 1));
    } else {
      for (size_t o = 1; o < k.size(); ++o) f.push_back(indices[i] == o ? 1.0 : 0.0);
    }
  }
  return f;
}

std::vector<double> CostModel::features(const Config& c) const {
  if (c.indices().size() != knobs_.size()) throw Error("CostModel: the config is not of the model's space");
  std::vector<double> lin = linear_features(c.indices());
  std::vector<double> f;
  f.reserve(num_features_);
  f.push_back(1.0);
  f.insert(f.end(), lin.begin(), lin.end());
  size_t li = 0;
  for (size_t i = 0; i < knobs_.size(); ++i) {
    const Knob& k = knobs_[i];
    if (k.size() < 2) continue;
    if (k.ordered()) {
      double t = lin[li];
      f.push_back(t * t);
      li += 1;
    } else {
      li += k.size() - 1;
    }
  }
  if (pairwise_)
    for (size_t a = 0; a < lin.size(); ++a)
      for (size_t b = a + 1; b < lin.size(); ++b) f.push_back(lin[a] * lin[b]);
  return f;
}

bool CostModel::fit(const std::vector<Config>& configs, const std::vector<double>& log_costs) {
  weights_.clear();
  if (configs.size() != log_costs.size() || configs.size() < 2) return false;
  const size_t n = num_features_;
  std::vector<double> a(n * n, 0.0), b(n, 0.0);
  for (size_t s = 0; s < configs.size(); ++s) {
    std::vector<double> f = features(configs[s]);
    for (size_t i = 0; i < n; ++i) {
      if (f[i] == 0) continue;
      b[i] += f[i] * log_costs[s];
      for (size_t j = 0; j < n; ++j) a[i * n + j] += f[i] * f[j];
    }
  }
  // The intercept is not penalized (a tiny ridge keeps the system definite).
  for (size_t i = 0; i < n; ++i) a[i * n + i] += i == 0 ? 1e-9 : lambda_;
  return solve_spd(std::move(a), std::move(b), n, &weights_);
}

double CostModel::predict(const Config& c) const {
  if (weights_.empty()) return 0;
  std::vector<double> f = features(c);
  double y = 0;
  for (size_t i = 0; i < f.size(); ++i) y += weights_[i] * f[i];
  return y;
}

ModelTuner::ModelTuner(ConfigSpace space, ModelTunerOptions options)
    : Tuner(std::move(space)), options_(options), rng_(options.seed), model_(space_) {}

void ModelTuner::observe(const std::vector<Config>& configs, const std::vector<double>& costs) {
  measured_.insert(measured_.end(), configs.begin(), configs.end());
  costs_.insert(costs_.end(), costs.begin(), costs.end());
  dirty_ = true;
}

Config ModelTuner::neighbour(const Config& c) {
  const auto& knobs = space_.knobs();
  std::vector<size_t> movable;
  for (size_t i = 0; i < knobs.size(); ++i)
    if (knobs[i].size() > 1) movable.push_back(i);
  if (movable.empty()) return c;
  std::vector<size_t> idx = c.indices();
  size_t k = movable[std::uniform_int_distribution<size_t>(0, movable.size() - 1)(rng_)];
  const size_t size = knobs[k].size();
  if (knobs[k].ordered()) {
    // One or two steps along the knob's line.
    int64_t step = std::uniform_int_distribution<int>(1, 2)(rng_) * (std::bernoulli_distribution(0.5)(rng_) ? 1 : -1);
    int64_t v = int64_t(idx[k]) + step;
    if (v < 0) v = -v;
    if (v >= int64_t(size)) v = 2 * int64_t(size - 1) - v;
    idx[k] = size_t(std::clamp<int64_t>(v, 0, int64_t(size) - 1));
  } else {
    size_t o = std::uniform_int_distribution<size_t>(0, size - 2)(rng_);
    idx[k] = o >= idx[k] ? o + 1 : o;
  }
  return space_.from_indices(idx);
}

std::vector<Config> ModelTuner::propose(size_t n) {
  std::vector<Config> ok_configs;
  std::vector<double> logs;
  double worst = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < measured_.size(); ++i)
    if (std::isfinite(costs_[i]) && costs_[i] > 0) worst = std::max(worst, std::log(costs_[i]));
  if (measured_.size() < options_.warmup || !std::isfinite(worst)) return random_unseen(n, rng_);
  if (dirty_) {
    // Failed configs count as 4x the slowest one: the model learns to stay away.
    for (size_t i = 0; i < measured_.size(); ++i) {
      ok_configs.push_back(measured_[i]);
      logs.push_back(std::isfinite(costs_[i]) && costs_[i] > 0 ? std::log(costs_[i]) : worst + std::log(4.0));
    }
    model_.fit(ok_configs, logs);
    dirty_ = false;
  }
  if (!model_.fitted()) return random_unseen(n, rng_);

  size_t n_random = std::min(n, size_t(std::lround(options_.explore * double(n))));
  size_t n_model = n - n_random;

  // Chains start at the best measured configs and at random ones.
  std::vector<size_t> order(measured_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return costs_[a] < costs_[b]; });
  std::vector<Config> starts;
  for (size_t i = 0; i < order.size() && starts.size() < options_.chains / 2; ++i)
    starts.push_back(measured_[order[i]]);
  std::uniform_int_distribution<uint64_t> pick(0, space_.size() - 1);
  while (starts.size() < options_.chains) starts.push_back(space_.at(pick(rng_)));

  std::map<uint64_t, std::pair<double, Config>> candidates;  // unseen configs the chains met
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (Config cur : starts) {
    double cur_pred = model_.predict(cur);
    for (size_t s = 0; s < options_.steps; ++s) {
      double temperature = options_.start_temperature * (1.0 - double(s) / double(options_.steps));
      Config next = neighbour(cur);
      double pred = model_.predict(next);
      if (!seen(next.index())) candidates.emplace(next.index(), std::make_pair(pred, next));
      if (pred <= cur_pred || (temperature > 0 && unit(rng_) < std::exp((cur_pred - pred) / temperature))) {
        cur = next;
        cur_pred = pred;
      }
    }
  }
  std::vector<std::pair<double, Config>> ranked;
  for (auto& [index, pc] : candidates) ranked.push_back(pc);
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Config> out;
  std::unordered_set<uint64_t> taken;
  for (size_t i = 0; i < ranked.size() && out.size() < n_model; ++i) {
    out.push_back(ranked[i].second);
    taken.insert(ranked[i].second.index());
  }
  for (Config& c : random_unseen(n - out.size(), rng_, taken)) out.push_back(std::move(c));
  return out;
}

}  // namespace te::autotune
