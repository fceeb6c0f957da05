// auto_schedule on the CPU, a convolution's padding computed per parallel work item of
// the convolution's tiling (decision `<pad>.work_items`, src/auto_schedule/placement.cpp
// and cpu_tiling.cpp): asked of a padding that one tiled reduction reads; with it, the
// padding's buffer is allocated inside the parallel loop, which runs over runs of rows
// that share the threads evenly; the results match interpret() and a plain C++ loop.
#include <gtest/gtest.h>
#include <te/auto_schedule.h>
#include <te/build.h>
#include <te/te.h>

#include <map>
#include <regex>
#include <string>
#include <vector>

#include "test_util.h"

using namespace te;

namespace {

// A 3x3 convolution, padding 1, NHWC with (3, 3, C, K) weights, the padding a stage of its
// own as TVM writes it.
struct Conv {
  int H, C, K;
  Tensor x, w, pad, y;
};

Conv conv3x3(int H, int C, int K) {
  Conv c{H, C, K, {}, {}, {}, {}};
  c.x = placeholder({1, H, H, C}, Float(32), "x");
  c.w = placeholder({3, 3, C, K}, Float(32), "w");
  c.pad = compute(
      {1, H + 2, H + 2, C},
      [&](Expr n, Expr i, Expr j, Expr ch) {
        return if_then_else(i >= 1 && i <= H && j >= 1 && j <= H, c.x(n, i - 1, j - 1, ch), 0.0f);
      },
      "pad");
  IterVar rh = reduce_axis({0, 3}, "rh"), rw = reduce_axis({0, 3}, "rw"), rc = reduce_axis({0, C}, "rc");
  c.y = compute(
      {1, H, H, K},
      [&](Expr n, Expr i, Expr j, Expr k) { return sum(c.pad(n, i + rh, j + rw, rc) * c.w(rh, rw, rc, k), {rh, rw, rc}); },
      "y");
  return c;
}

std::vector<float> reference(const Conv& c, const std::vector<float>& x, const std::vector<float>& w) {
  std::vector<float> y(static_cast<size_t>(c.H) * c.H * c.K);
  for (int i = 0; i < c.H; ++i)
    for (int j = 0; j < c.H; ++j)
      for (int k = 0; k < c.K; ++k) {
        double s = 0;
        for (int a = 0; a < 3; ++a)
          for (int b = 0; b < 3; ++b)
            for (int ch = 0; ch < c.C; ++ch) {
              const int si = i + a - 1, sj = j + b - 1;
              if (si < 0 || si >= c.H || sj < 0 || sj >= c.H) continue;
              s += double(x[(static_cast<size_t>(si) * c.H + sj) * c.C + ch]) * w[((a * 3 + b) * c.C + ch) * c.K + k];
            }
        y[(static_cast<size_t>(i) * c.H + j) * c.K + k] = static_cast<float>(s);
      }
  return y;
}

}  // namespace

TEST(AutoSchedulePadItems, PaddingComputedPerWorkItemWhenAsked) {
  Conv c = conv3x3(28, 8, 32);
  const std::vector<float> x = uniform_floats(static_cast<size_t>(28) * 28 * 8, 1);
  const std::vector<float> w = uniform_floats(static_cast<size_t>(9) * 8 * 32, 2);
  const std::vector<float> want = reference(c, x, w);
  NDArray xv = NDArray::from_vector(x, {1, 28, 28, 8}), wv = NDArray::from_vector(w, {3, 3, 8, 32});
  for (int threads : {1, 2})
    for (int64_t per_item : {0, 1}) {
      AutoScheduleOptions o;
      o.threads = threads;
      bool asked = false;
      for (const AutoScheduleDecision& d : auto_schedule_decisions({c.y}, o))
        if (d.name == "pad.work_items") asked = d.rule_value == 0 && d.options == std::vector<int64_t>{0, 1};
      EXPECT_TRUE(asked) << threads << " threads";
      LoweredFunc f = lower(auto_schedule_with({c.y}, o, {{"pad.work_items", per_item}}), {c.x, c.w, c.y}, "conv");
      const std::string ir = to_string(f);
      const size_t pad = ir.find("allocate pad"), loop = ir.find(threads > 1 ? "parallel for (" : "for (");
      ASSERT_NE(pad, std::string::npos) << ir;
      ASSERT_NE(loop, std::string::npos) << ir;
      EXPECT_EQ(loop < pad, per_item == 1) << ir;
      if (per_item == 1 && threads == 2) {
        // 28 rows on two threads: 4 runs of 7 (runs of 4 would make 7 items, 4 on one thread).
        std::smatch m;
        ASSERT_TRUE(std::regex_search(ir, m, std::regex(R"(parallel for \([^,]+, 0, (\d+)\))"))) << ir;
        EXPECT_EQ(m[1].str(), "4") << ir;
      }
      NDArray jit = NDArray::empty({1, 28, 28, 32}, Float(32)), ref = NDArray::empty({1, 28, 28, 32}, Float(32));
      build(f)("conv")(xv, wv, jit);
      interpret(f, {xv, wv, ref});
      const std::vector<float> got = jit.to_vector<float>(), interpreted = ref.to_vector<float>();
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_NEAR(got[i], want[i], 1e-4f * (1 + std::abs(want[i])))
            << "JIT, " << threads << " threads, work_items " << per_item << ", at " << i;
        ASSERT_NEAR(interpreted[i], want[i], 1e-4f * (1 + std::abs(want[i])))
            << "interpret, " << threads << " threads, work_items " << per_item << ", at " << i;
      }
    }
}

// Not asked where the reader is no tiled reduction: a padding that an element-wise stage
// reads (a blur written as a sum of shifted copies has no reduction to tile).
TEST(AutoSchedulePadItems, NotAskedWithoutATiledReader) {
  Tensor x = placeholder({1, 16, 16, 8}, Float(32), "x");
  Tensor pad = compute(
      {1, 18, 18, 8},
      [&](Expr n, Expr i, Expr j, Expr ch) {
        return if_then_else(i >= 1 && i <= 16 && j >= 1 && j <= 16, x(n, i - 1, j - 1, ch), 0.0f);
      },
      "pad");
  Tensor y = compute(
      {1, 16, 16, 8}, [&](Expr n, Expr i, Expr j, Expr ch) { return pad(n, i, j, ch) + pad(n, i + 2, j + 2, ch); },
      "y");
  for (const AutoScheduleDecision& d : auto_schedule_decisions({y}))
    EXPECT_NE(d.name, "pad.work_items");
}
