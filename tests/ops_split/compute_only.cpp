// Part of test_grid_sample: an op's compute header and one target's schedule header are
// enough on their own. With TE_OPS_COMPUTE_ONLY, te/ops/<op>.h no longer brings its
// schedules (as it still does by default, for one release): this file includes only
// grid_sample's compute and its CPU schedule, checks at compile time that the CUDA
// schedule is not declared, and runs the CPU schedule.
#define TE_OPS_COMPUTE_ONLY
#include <gtest/gtest.h>

#include <te/ops/grid_sample.h>
#include <te/ops/grid_sample_cpu.h>
#include <te/te.h>

#include <type_traits>
#include <utility>
#include <vector>

#include "gridsample_cases.h"
#include "gridsample_reference.h"

// What a call resolves to when no te::ops function of that name is declared: the real
// one (a better match) wins wherever its header is included.
namespace te::ops {
struct NotDeclared {};
NotDeclared schedule_grid_sample_cuda(...);
NotDeclared schedule_grid_sample_cpu(...);
}  // namespace te::ops

template <typename F>
constexpr bool declared = !std::is_same_v<F, te::ops::NotDeclared>;

static_assert(!declared<decltype(te::ops::schedule_grid_sample_cuda(std::declval<te::Schedule&>(),
                                                                    std::declval<const te::Tensor&>()))>,
              "te/ops/grid_sample.h must not bring the CUDA schedule under TE_OPS_COMPUTE_ONLY");
static_assert(declared<decltype(te::ops::schedule_grid_sample_cpu(std::declval<te::Schedule&>(),
                                                                  std::declval<const te::Tensor&>()))>,
              "te/ops/grid_sample_cpu.h declares schedule_grid_sample_cpu");

namespace {

using namespace te;

TEST(GridSampleHeaders, ComputeAndCpuScheduleAlone) {
  const std::vector<int64_t> in{2, 4, 5, 6}, gs{2, 3, 7, 2}, out_shape{2, 4, 3, 7};
  std::vector<float> data(2 * 4 * 5 * 6), grid(2 * 3 * 7 * 2);
  for (size_t i = 0; i < data.size(); ++i) data[i] = float(int(i % 11) - 5) * 0.25f;
  for (size_t i = 0; i < grid.size(); ++i) grid[i] = float(int(i % 13) - 6) * 0.19f;
  Tensor d = placeholder({2, 4, 5, 6}, Float(32), "data");
  Tensor g = placeholder({2, 3, 7, 2}, Float(32), "grid");
  for (const char* mode : {"bilinear", "nearest"}) {
    ops::GridSampleStages st = ops::grid_sample_stages(d, g, {mode, "zeros", false});
    Schedule s = create_schedule({st.out});
    ops::schedule_grid_sample_cpu(s, st);
    LoweredFunc f = lower(s, {d, g, st.out}, "gs");
    NDArray da = NDArray::from_vector(data, in), ga = NDArray::from_vector(grid, gs);
    NDArray oa = NDArray::empty(out_shape, Float(32));
    build(f)("gs")(da, ga, oa);
    auto want = gsref::grid_sample<float>(data, in, grid, gs, {mode, "zeros", false});
    expect_allclose(oa.to_vector<float>(), want, 1e-5, 1e-5, mode);
  }
}

}  // namespace
