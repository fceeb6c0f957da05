// BoostedCostModel over XGBoost's C API. Small data (hundreds of rows, ~30 features):
// one thread, shallow trees, a fixed number of rounds, deterministic.
#include "auto_schedule/cost_model.h"

#include <fmt/format.h>
#include <xgboost/c_api.h>

#include <limits>

#include "te/error.h"

namespace te::auto_sched {

namespace {

void check(int rc, const char* what) {
  if (rc != 0)
    throw Error(fmt::format("auto_schedule: the cost model's {} failed (XGBoost: {})", what, XGBGetLastError()));
}

// A dense matrix of rows (all the same length).
DMatrixHandle matrix_of(const std::vector<std::vector<float>>& rows) {
  const size_t cols = rows.empty() ? 0 : rows[0].size();
  std::vector<float> flat;
  flat.reserve(rows.size() * cols);
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  DMatrixHandle m = nullptr;
  check(XGDMatrixCreateFromMat(flat.data(), bst_ulong(rows.size()), bst_ulong(cols),
                               std::numeric_limits<float>::quiet_NaN(), &m),
        "matrix");
  return m;
}

struct MatrixGuard {
  DMatrixHandle m;
  ~MatrixGuard() { XGDMatrixFree(m); }
};

}  // namespace

BoostedCostModel::~BoostedCostModel() {
  if (booster_) XGBoosterFree(booster_);
}

void BoostedCostModel::fit(const std::vector<std::vector<float>>& rows, const std::vector<float>& targets) {
  if (rows.size() < 2 || rows.size() != targets.size()) return;
  MatrixGuard data{matrix_of(rows)};
  check(XGDMatrixSetFloatInfo(data.m, "label", targets.data(), bst_ulong(targets.size())), "labels");
  BoosterHandle b = nullptr;
  check(XGBoosterCreate(&data.m, 1, &b), "creation");
  const char* params[][2] = {{"objective", "reg:squarederror"},
                             {"max_depth", "6"},
                             {"eta", "0.2"},
                             {"min_child_weight", "1"},
                             {"subsample", "1"},
                             {"nthread", "1"},
                             {"verbosity", "0"},
                             {"seed", "0"}};
  for (auto& p : params) {
    if (XGBoosterSetParam(b, p[0], p[1]) != 0) {
      XGBoosterFree(b);
      check(-1, "parameters");
    }
  }
  for (int round = 0; round < 60; ++round) {
    if (XGBoosterUpdateOneIter(b, round, data.m) != 0) {
      XGBoosterFree(b);
      check(-1, "training");
    }
  }
  if (booster_) XGBoosterFree(booster_);
  booster_ = b;
}

std::vector<float> BoostedCostModel::predict(const std::vector<std::vector<float>>& rows) const {
  std::vector<float> out(rows.size(), 0.0f);
  if (!booster_ || rows.empty()) return out;
  MatrixGuard data{matrix_of(rows)};
  bst_ulong n = 0;
  const float* values = nullptr;
  check(XGBoosterPredict(booster_, data.m, 0, 0, 0, &n, &values), "prediction");
  for (size_t i = 0; i < out.size() && i < n; ++i) out[i] = values[i];
  return out;
}

}  // namespace te::auto_sched
