// Winograd's minimal filtering F(m, r) in one dimension: m outputs of an r-tap correlation
// y[i] = sum_k g[k] x[i + k] from N = m + r - 1 inputs with N multiplications,
// y = Aᵀ [(G g) ⊙ (Bᵀ x)], the matrices made by Toom-Cook from N - 1 interpolation points
// and infinity (Lavin and Gray, 2016; Barabasz et al., 2020, for the points' order).
#pragma once
#include <vector>

#include "te/export.h"

namespace te::sched {

struct TE_API MinimalFilter {
  int outputs = 0;                          // m
  int taps = 0;                             // r
  int points = 0;                           // N = m + r - 1
  std::vector<std::vector<double>> output;  // Aᵀ: m x N
  std::vector<std::vector<double>> filter;  // G: N x r
  std::vector<std::vector<double>> input;   // Bᵀ: N x N
};

// The most points minimal_filter() takes: beyond them the interpolation points grow
// (±3, ±1/3, ...) and float32 results lose digits quickly.
constexpr int kMaxFilterPoints = 12;

// F(m, r) for m, r >= 1 and m + r - 1 <= kMaxFilterPoints; identities for r = 1.
TE_API MinimalFilter minimal_filter(int m, int r);  // exported for its tests

}  // namespace te::sched
