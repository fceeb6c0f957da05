// The search's learned cost model: gradient-boosted trees (XGBoost, as Ansor uses) from
// loop-IR features to log run time. Only the ranking matters to the search.
#pragma once
#include <vector>

#include "te/export.h"

namespace te::auto_sched {

class TE_API BoostedCostModel {  // exported for its tests only
 public:
  BoostedCostModel() = default;
  ~BoostedCostModel();
  BoostedCostModel(const BoostedCostModel&) = delete;
  BoostedCostModel& operator=(const BoostedCostModel&) = delete;

  // Fits rows of features to targets (replacing the previous fit); te::Error when
  // XGBoost fails. Fewer than two rows leave the model unfitted.
  void fit(const std::vector<std::vector<float>>& rows, const std::vector<float>& targets);
  // One prediction per row (0 for every row while unfitted).
  std::vector<float> predict(const std::vector<std::vector<float>>& rows) const;
  bool fitted() const { return booster_ != nullptr; }

 private:
  void* booster_ = nullptr;  // BoosterHandle
};

}  // namespace te::auto_sched
