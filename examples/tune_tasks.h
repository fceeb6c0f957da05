// The tuning tasks of examples/tune_sgemm.cpp and examples/tune_grid_sample.cpp, shared
// with bench/bench_tune.cpp (tuned vs default vs hand-written in one benchmark run).
#pragma once
#include <te/autotune.h>
#include <te/ops/grid_sample.h>
#include <te/ops/grid_sample_cpu.h>
#include <te/te.h>

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "matmul_schedule.h"

namespace te_examples {

inline te::LoweredFunc lower_sgemm(const Sgemm& g, const std::string& name) {
  return te::lower(g.schedule, {g.A, g.B, g.C}, name);
}

// sgemm_best's register tile (mr x nr) and column block (nc, in panels of nr) as knobs;
// the reference is the default schedule (the definition as written). Args: A, B, C.
inline te::autotune::Task sgemm_tuning_task(int n) {
  using namespace te::autotune;
  const int lanes = sgemm_params_for_host().lanes;
  Task task;
  task.key = "sgemm/" + std::to_string(n);
  task.space.define_range("mr", 2, 12);
  task.space.define_values("nr", {lanes, 2 * lanes, 3 * lanes, 4 * lanes});
  task.space.define_pow2("nc_panels", 1, 32);
  task.build = [n, lanes](const Config& c) {
    SgemmParams p;
    p.mr = int(c["mr"]);
    p.nr = int(c["nr"]);
    p.nc = int(c["nc_panels"]) * p.nr;
    p.lanes = lanes;
    return lower_sgemm(sgemm_best(n, n, n, p), "sgemm_tuned");
  };
  task.reference = [n] { return lower_sgemm(sgemm_naive(n, n, n), "sgemm_default"); };
  task.make_args = [n] {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> a(size_t(n) * n), b(size_t(n) * n);
    for (float& x : a) x = u(rng);
    for (float& x : b) x = u(rng);
    return std::vector<te::Argument>{te::NDArray::from_vector(a, {n, n}), te::NDArray::from_vector(b, {n, n}),
                                     te::NDArray::empty({n, n}, te::Float(32))};
  };
  return task;
}

// The config of the hand-written schedule (sgemm_params_for_host, and nc as sgemm_best
// picks it), for Tuner::measure_first; nullopt when the space does not hold it.
inline std::optional<te::autotune::Config> sgemm_hand_config(const te::autotune::Task& task, int n) {
  const SgemmParams p = sgemm_params_for_host();
  const int by_cache = (1 << 17) / std::max(n, 1) / p.nr * p.nr, by_threads = (n / 4) / p.nr * p.nr;
  const int nc = std::max(p.nr, std::min({512, by_cache, std::max(by_threads, p.nr)}));
  return task.space.from_labels(
      {{"mr", std::to_string(p.mr)}, {"nr", std::to_string(p.nr)}, {"nc_panels", std::to_string(nc / p.nr)}});
}

struct GridSampleShape {
  int N = 4, C = 32, H = 64, W = 64, Ho = 64, Wo = 64;
  std::string name() const {
    return std::to_string(N) + "x" + std::to_string(C) + "x" + std::to_string(H) + "x" + std::to_string(W) + "-" +
           std::to_string(Ho) + "x" + std::to_string(Wo);
  }
};

// Bilinear, zeros, align_corners = false, NCHW. vector_bytes <= 0: the default schedule
// (nothing scheduled); otherwise schedule_grid_sample_cpu with these parameters.
inline te::LoweredFunc grid_sample_kernel(const GridSampleShape& sh, int vector_bytes, int channel_block, int row_block,
                                          const std::string& name) {
  using namespace te;
  Tensor data = placeholder({sh.N, sh.C, sh.H, sh.W}, Float(32), "data");
  Tensor grid = placeholder({sh.N, sh.Ho, sh.Wo, 2}, Float(32), "grid");
  Tensor out = ops::grid_sample(data, grid, ops::GridSampleOptions{});
  Schedule s = create_schedule({out});
  if (vector_bytes > 0) ops::schedule_grid_sample_cpu(s, out, vector_bytes, channel_block, row_block);
  return lower(s, {data, grid, out}, name);
}

// The hand-written schedule's config: schedule_grid_sample_cpu's defaults (64 bytes; for
// images up to 512 KB blocks of 4 channels and 16 rows, else blocks of 64 channels).
inline std::optional<te::autotune::Config> grid_sample_hand_config(const te::autotune::Task& task,
                                                                   const GridSampleShape& sh) {
  const bool small = int64_t(sh.C) * sh.H * sh.W * 4 <= (512 << 10);
  return task.space.from_labels({{"vector_bytes", "64"},
                                 {"channel_block", std::to_string(std::min(sh.C, small ? 4 : 64))},
                                 {"row_block", std::to_string(std::min(sh.Ho, 16))}});
}

// schedule_grid_sample_cpu's parameters as knobs: the vector width in bytes, the channels
// per block and the rows per block (images up to 512 KB). Args: data, grid (random,
// U(-1, 1)), out.
inline te::autotune::Task grid_sample_tuning_task(const GridSampleShape& sh) {
  using namespace te::autotune;
  Task task;
  task.key = "grid_sample/bilinear/" + sh.name();
  task.space.define_pow2("vector_bytes", 8, 128);
  task.space.define_split("channel_block", sh.C);
  task.space.define_split("row_block", sh.Ho);
  task.build = [sh](const Config& c) {
    return grid_sample_kernel(sh, int(c["vector_bytes"]), int(c["channel_block"]), int(c["row_block"]),
                              "grid_sample_tuned");
  };
  task.reference = [sh] { return grid_sample_kernel(sh, 0, 0, 0, "grid_sample_default"); };
  task.make_args = [sh] {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> d(size_t(sh.N) * sh.C * sh.H * sh.W), g(size_t(sh.N) * sh.Ho * sh.Wo * 2);
    for (float& x : d) x = u(rng);
    for (float& x : g) x = u(rng);
    return std::vector<te::Argument>{te::NDArray::from_vector(d, {sh.N, sh.C, sh.H, sh.W}),
                                     te::NDArray::from_vector(g, {sh.N, sh.Ho, sh.Wo, 2}),
                                     te::NDArray::empty({sh.N, sh.C, sh.Ho, sh.Wo}, te::Float(32))};
  };
  return task;
}

}  // namespace te_examples
