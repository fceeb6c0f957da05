// The search's tuner (Ansor's evolutionary search in small): after a few random configs,
// each round fits the cost model to every measured config's loop-IR features, breeds
// candidates from the best measured ones (one or two decisions changed) and from random
// ones, ranks them by the model and proposes the best, plus a share of random configs so
// that the model keeps learning about the rest of the space.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "auto_schedule/cost_model.h"
#include "te/autotune/tuner.h"

namespace te::auto_sched {

struct TE_API SearchTunerOptions {
  uint64_t seed = 0;
  size_t warmup = 8;         // random configs measured before the model ranks any
  double explore = 0.25;     // share of each batch that is random
  size_t candidates = 128;   // configs ranked per batch
  size_t parents = 8;        // best measured configs that candidates are bred from
};

class TE_API SearchTuner : public autotune::Tuner {  // exported for its tests only
 public:
  // `features`: the loop-IR features of a config's kernel, or nullopt when it does not
  // lower (such configs are never proposed).
  using FeatureFn = std::function<std::optional<std::vector<float>>(const autotune::Config&)>;
  SearchTuner(autotune::ConfigSpace space, FeatureFn features, SearchTunerOptions options = {});

  const BoostedCostModel& model() const { return model_; }

 protected:
  std::vector<autotune::Config> propose(size_t n) override;
  void observe(const std::vector<autotune::Config>& configs, const std::vector<double>& costs) override;

 private:
  const std::optional<std::vector<float>>& features_of(const autotune::Config& c);
  autotune::Config mutate(const autotune::Config& c);
  void refit();

  FeatureFn features_;
  SearchTunerOptions options_;
  std::mt19937_64 rng_;
  BoostedCostModel model_;
  std::map<uint64_t, std::optional<std::vector<float>>> cache_;
  std::vector<autotune::Config> measured_;
  std::vector<double> costs_;  // seconds; infinity for failures
  bool dirty_ = false;
};

}  // namespace te::auto_sched
