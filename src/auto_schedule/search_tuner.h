// The search's tuner (Ansor's evolutionary search in small): after a few random configs,
// each round fits the cost model to every measured config's loop-IR features, breeds
// candidates from the best measured ones (one or two decisions changed) and from random
// ones, ranks them by the model and proposes the best, plus a share of random configs so
// that the model keeps learning about the rest of the space.
#pragma once
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <unordered_set>
#include <vector>

#include "auto_schedule/cost_model.h"
#include "te/autotune/tuner.h"

namespace te::auto_sched {

// What this process's earlier searches measured, for the next search's cost model (as
// Ansor's model learns across the tasks of a network): each row a config's loop-IR
// features, its target log2(its time / its task's best), so tasks of any size compare.
class TE_API SearchHistory {  // exported for its tests only
 public:
  // The history te's searches share (auto_schedule with trials > 0).
  static SearchHistory& process();
  void add(const std::vector<std::vector<float>>& rows, const std::vector<float>& targets);
  // The most recent `limit` rows and their targets.
  void recent(size_t limit, std::vector<std::vector<float>>* rows, std::vector<float>* targets) const;
  size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::vector<float>> rows_;
  std::vector<float> targets_;
};

struct TE_API SearchTunerOptions {
  uint64_t seed = 0;
  size_t warmup = 8;        // random configs measured before the model ranks any
  double explore = 0.25;    // share of each batch that is random
  size_t candidates = 128;  // configs ranked per batch
  size_t parents = 8;       // best measured configs that candidates are bred from
  // Candidates lowered (for their features and code) per batch at most. Lowering is the
  // search's own cost, 1-25 ms a candidate: where most of the space lowers to code already
  // measured, an uncapped batch lowered up to the whole space looking for a new one.
  size_t lowerings_per_batch = 512;
  // Earlier searches' measurements (null: none): the model ranks from the first batch,
  // fitted on them and, as they come, on this search's own.
  const SearchHistory* history = nullptr;
  size_t history_rows = 1024;  // the most recent rows of `history` used
};

class TE_API SearchTuner : public autotune::Tuner {  // exported for its tests only
 public:
  // `features`: the loop-IR features of a config's kernel, or nullopt when it does not
  // lower (such configs are never proposed).
  using FeatureFn = std::function<std::optional<std::vector<float>>(const autotune::Config&)>;
  // `code`: a digest of a config's lowered IR (nullopt when it does not lower). A config
  // whose code is that of one proposed or measured before is skipped, not proposed: many
  // configs lower to the same loops (a tile the extent clamps), and measuring them again
  // spends trials on nothing new.
  using CodeFn = std::function<std::optional<uint64_t>(const autotune::Config&)>;
  SearchTuner(autotune::ConfigSpace space, FeatureFn features, SearchTunerOptions options = {}, CodeFn code = nullptr);

  const BoostedCostModel& model() const { return model_; }
  // Adds this search's measured configs (features, log2 of time over the best) to h.
  void contribute(SearchHistory& h);
  // Distinct codes proposed or measured, and the configs skipped as the same code as one.
  size_t distinct_codes() const { return codes_.size(); }
  size_t duplicates_skipped() const { return duplicates_; }
  // Candidates lowered so far (features_ called).
  size_t lowered() const { return cache_.size(); }

 protected:
  std::vector<autotune::Config> propose(size_t n) override;
  void observe(const std::vector<autotune::Config>& configs, const std::vector<double>& costs) override;

 private:
  std::vector<autotune::Config> propose_ranked(size_t n);
  bool fresh_code(const autotune::Config& c);  // records c's code; false when another config had it
  const std::optional<std::vector<float>>& features_of(const autotune::Config& c);
  autotune::Config mutate(const autotune::Config& c);
  void refit();
  // This search's measured configs as model rows: log2(time / best), failures at 64x.
  void own_rows(std::vector<std::vector<float>>* rows, std::vector<float>* targets);

  FeatureFn features_;
  SearchTunerOptions options_;
  std::mt19937_64 rng_;
  BoostedCostModel model_;
  std::map<uint64_t, std::optional<std::vector<float>>> cache_;
  std::vector<autotune::Config> measured_;
  std::vector<double> costs_;  // seconds; infinity for failures
  bool dirty_ = false;
  CodeFn code_;
  std::unordered_set<uint64_t> codes_;     // digests of the code proposed or measured
  std::unordered_set<uint64_t> excluded_;  // configs skipped, and those of this batch so far
  size_t duplicates_ = 0;
  std::vector<std::vector<float>> prior_rows_;  // the history when the search began
  std::vector<float> prior_targets_;
};

}  // namespace te::auto_sched
