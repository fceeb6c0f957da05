/// \file
/// Tuners: which configs of a space to measure next, given the costs measured so far.
///   GridTuner   every config in index order.
///   RandomTuner configs drawn uniformly at random, never one twice.
///   ModelTuner  simulated annealing on a cost model (ridge regression on the knobs'
///               features over log-time, see CostModel) refitted after every batch, with
///               a share of random configs to keep exploring.
/// A tuner never proposes a config it proposed before or was told about through update()
/// (the records of a resumed run).
#pragma once
#include <cstdint>
#include <limits>
#include <random>
#include <unordered_set>
#include <vector>

#include "te/autotune/space.h"
#include "te/export.h"

namespace te::autotune {

/// Proposes configs of a space to measure, learning from their costs (AutoTVM's tuner
/// interface): next_batch, measure, update, repeat.
class TE_API Tuner {
 public:
  /// A tuner over space.
  explicit Tuner(ConfigSpace space);
  virtual ~Tuner() = default;
  Tuner(const Tuner&) = delete;
  Tuner& operator=(const Tuner&) = delete;

  /// Up to n configs never proposed nor seen before; fewer (or none) when the space runs out.
  std::vector<Config> next_batch(size_t n);
  /// Configs to propose before any other (e.g. the hand-written schedule's, so that a
  /// short run cannot end worse than it); those already seen are passed over.
  void measure_first(const std::vector<Config>& configs);
  /// Costs (seconds; infinity for a config that failed) of measured configs.
  void update(const std::vector<Config>& configs, const std::vector<double>& costs);
  /// True when every config of the space has been proposed or seen.
  bool exhausted() const { return seen_.size() >= space_.size(); }
  /// The space it tunes.
  const ConfigSpace& space() const { return space_; }
  /// The cheapest config measured so far and its cost (infinity when none succeeded).
  const Config& best() const { return best_; }
  /// The cost of best().
  double best_cost() const { return best_cost_; }

 protected:
  /// Proposes up to n configs that are not seen(); next_batch marks them.
  virtual std::vector<Config> propose(size_t n) = 0;
  /// Learns from measured costs (update() calls it); the default ignores them.
  virtual void observe(const std::vector<Config>& /*configs*/, const std::vector<double>& /*costs*/) {}
  /// Whether the config at index was proposed or measured already.
  bool seen(uint64_t index) const { return seen_.count(index) != 0; }
  /// Up to n distinct unseen configs at random (by rejection while the space is mostly
  /// unseen, by enumeration otherwise), not in `taken`.
  std::vector<Config> random_unseen(size_t n, std::mt19937_64& rng, const std::unordered_set<uint64_t>& taken = {});

  ConfigSpace space_;  ///< The space tuned.

 private:
  std::unordered_set<uint64_t> seen_;
  std::vector<Config> first_;
  Config best_;
  double best_cost_ = std::numeric_limits<double>::infinity();
};

/// Proposes every config in index order.
class TE_API GridTuner : public Tuner {
 public:
  /// A grid tuner over space.
  explicit GridTuner(ConfigSpace space) : Tuner(std::move(space)) {}

 protected:
  std::vector<Config> propose(size_t n) override;  ///< See Tuner::propose.

 private:
  uint64_t next_ = 0;
};

/// Proposes unseen configs uniformly at random.
class TE_API RandomTuner : public Tuner {
 public:
  /// A random tuner over space, reproducible for a given seed.
  RandomTuner(ConfigSpace space, uint64_t seed = 0) : Tuner(std::move(space)), rng_(seed) {}

 protected:
  std::vector<Config> propose(size_t n) override;  ///< See Tuner::propose.

 private:
  std::mt19937_64 rng_;
};

/// Predicts log(cost) of a config from its knobs: each ordered knob gives its position t
/// in [0, 1] (its option's index over the last index: log2 of the value for split and
/// power-of-two knobs) and t^2, each Choice knob a one-hot vector, plus the products of
/// every pair of knobs' linear features (the interactions a tile shape has). Fitted by
/// ridge regression (L2 penalty `lambda`, intercept unpenalized) on the measured configs.
class TE_API CostModel {
 public:
  /// An unfitted model of space's configs with ridge penalty lambda.
  explicit CostModel(const ConfigSpace& space, double lambda = 1e-2);
  /// The feature vector of a config (see the class comment).
  std::vector<double> features(const Config& c) const;
  /// The length of features().
  size_t num_features() const { return num_features_; }
  /// Fits on (config, log-cost) pairs; false (and predict() gives 0) with fewer than two.
  bool fit(const std::vector<Config>& configs, const std::vector<double>& log_costs);
  /// The predicted log(cost) of a config (0 before a successful fit).
  double predict(const Config& c) const;
  /// Whether fit() succeeded.
  bool fitted() const { return !weights_.empty(); }

 private:
  std::vector<double> linear_features(const std::vector<size_t>& indices) const;
  std::vector<Knob> knobs_;
  size_t num_linear_ = 0, num_features_ = 0;
  bool pairwise_ = true;
  double lambda_;
  std::vector<double> weights_;
};

/// Options of ModelTuner.
struct TE_API ModelTunerOptions {
  uint64_t seed = 0;               ///< random seed (runs are reproducible)
  size_t warmup = 8;               ///< random configs measured before the model is used
  double explore = 0.2;            ///< share of each batch that is random
  size_t chains = 32;              ///< simulated-annealing chains per batch
  size_t steps = 150;              ///< steps of each chain
  double start_temperature = 1.0;  ///< in units of predicted log-time; cooled to 0
};

/// A model-guided tuner: after `warmup` random configs, fits a CostModel to the measured
/// costs and proposes the configs simulated annealing finds cheapest under it, plus a
/// share of random ones.
class TE_API ModelTuner : public Tuner {
 public:
  /// A model tuner over space.
  explicit ModelTuner(ConfigSpace space, ModelTunerOptions options = {});
  /// The cost model as last fitted.
  const CostModel& model() const { return model_; }

 protected:
  std::vector<Config> propose(size_t n) override;  ///< See Tuner::propose.
  void observe(const std::vector<Config>& configs,
               const std::vector<double>& costs) override;  ///< Refits the model.

 private:
  Config neighbour(const Config& c);
  ModelTunerOptions options_;
  std::mt19937_64 rng_;
  CostModel model_;
  std::vector<Config> measured_;
  std::vector<double> costs_;  ///< seconds, infinity for failures
  bool dirty_ = false;
};

}  // namespace te::autotune
