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

#include "ansor_suite.h"
#include "test_util.h"

using namespace te;

namespace {

// A convolution (R x R window, stride S, padding P), NHWC with (R, R, C, K) weights, the
// padding a stage of its own as TVM writes it.
struct Conv {
  int H, C, K, R, S, P, OH;
  Tensor x, w, pad, y;
};

Conv conv(int H, int C, int K, int R = 3, int S = 1, int P = 1) {
  Conv c{H, C, K, R, S, P, (H + 2 * P - R) / S + 1, {}, {}, {}, {}};
  c.x = placeholder({1, H, H, C}, Float(32), "x");
  c.w = placeholder({R, R, C, K}, Float(32), "w");
  c.pad = compute(
      {1, H + 2 * P, H + 2 * P, C},
      [&](Expr n, Expr i, Expr j, Expr ch) {
        return if_then_else(i >= P && i < H + P && j >= P && j < H + P, c.x(n, i - P, j - P, ch), 0.0f);
      },
      "pad");
  IterVar rh = reduce_axis({0, R}, "rh"), rw = reduce_axis({0, R}, "rw"), rc = reduce_axis({0, C}, "rc");
  c.y = compute(
      {1, c.OH, c.OH, K},
      [&](Expr n, Expr i, Expr j, Expr k) {
        return sum(c.pad(n, i * S + rh, j * S + rw, rc) * c.w(rh, rw, rc, k), {rh, rw, rc});
      },
      "y");
  return c;
}

std::vector<float> reference(const Conv& c, const std::vector<float>& x, const std::vector<float>& w) {
  std::vector<float> y(static_cast<size_t>(c.OH) * c.OH * c.K);
  for (int i = 0; i < c.OH; ++i)
    for (int j = 0; j < c.OH; ++j)
      for (int k = 0; k < c.K; ++k) {
        double s = 0;
        for (int a = 0; a < c.R; ++a)
          for (int b = 0; b < c.R; ++b)
            for (int ch = 0; ch < c.C; ++ch) {
              const int si = i * c.S + a - c.P, sj = j * c.S + b - c.P;
              if (si < 0 || si >= c.H || sj < 0 || sj >= c.H) continue;
              s += double(x[(static_cast<size_t>(si) * c.H + sj) * c.C + ch]) *
                   w[((static_cast<size_t>(a) * c.R + b) * c.C + ch) * c.K + k];
            }
        y[(static_cast<size_t>(i) * c.OH + j) * c.K + k] = static_cast<float>(s);
      }
  return y;
}

// The JIT's and interpret()'s results of f against the reference.
void expect_matches(const Conv& c, const LoweredFunc& f, const std::string& what) {
  const std::vector<float> x = uniform_floats(static_cast<size_t>(c.H) * c.H * c.C, 1);
  const std::vector<float> w = uniform_floats(static_cast<size_t>(c.R) * c.R * c.C * c.K, 2);
  const std::vector<float> want = reference(c, x, w);
  NDArray xv = NDArray::from_vector(x, {1, c.H, c.H, c.C}), wv = NDArray::from_vector(w, {c.R, c.R, c.C, c.K});
  NDArray jit = NDArray::empty({1, c.OH, c.OH, c.K}, Float(32)), ref = NDArray::empty({1, c.OH, c.OH, c.K}, Float(32));
  build(f)(f.name)(xv, wv, jit);
  interpret(f, {xv, wv, ref});
  const std::vector<float> got = jit.to_vector<float>(), interpreted = ref.to_vector<float>();
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-4f * (1 + std::abs(want[i]))) << "JIT, " << what << ", at " << i;
    ASSERT_NEAR(interpreted[i], want[i], 1e-4f * (1 + std::abs(want[i]))) << "interpret, " << what << ", at " << i;
  }
}

}  // namespace

TEST(AutoSchedulePadItems, PaddingComputedPerWorkItemWhenAsked) {
  Conv c = conv(28, 8, 32);
  for (int threads : {1, 2})
    for (int64_t per_item : {0, 1}) {
      AutoScheduleOptions o;
      o.threads = threads;
      bool asked = false;
      for (const AutoScheduleDecision& d : auto_schedule_decisions({c.y}, o))
        if (d.name == "pad.work_items") asked = d.rule_value == 1 && d.options == std::vector<int64_t>{0, 1};
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
      expect_matches(c, f, std::to_string(threads) + " threads, work_items " + std::to_string(per_item));
    }
}

// The rules pad per work item where the convolution reads the padding through short
// windows only (3x3; a grouped convolution's 16 input channels are no window), and in a
// pass of their own where a long window makes the items' rows overlap much (7 taps: C2D's
// and DIL's on more than one thread, C3D's 7 of 22 planes on any) or where the "padding" is a transposed
// convolution's inserted zeros (read at x / 2, its reader visiting the nonzeros only).
TEST(AutoSchedulePadItems, RulesPadPerWorkItemThroughShortWindowsOnly) {
  auto rule = [](const Tensor& y, int threads, const std::string& pad) {
    AutoScheduleOptions o;
    o.threads = threads;
    o.winograd = false;  // the direct sums' paddings (Winograd's transforms read the padding element-wise)
    for (const AutoScheduleDecision& d : auto_schedule_decisions({y}, o))
      if (d.name == pad + ".work_items") return d.rule_value;
    return int64_t{-1};
  };
  for (int threads : {1, 2}) {
    EXPECT_EQ(rule(conv(28, 32, 32).y, threads, "pad"), 1) << threads;
    EXPECT_EQ(rule(te_bench::ansor_grp(false).output, threads, "pad"), 1) << threads;
    // Long windows: per work item on one thread only (4 items, a few rows of overlap
    // each), where a window spans at most 1/16 of the padded extent (230 rows: C2D's 7,
    // DIL's 13), not 7 of 36 rows, nor C3D's 7 of 22 planes.
    EXPECT_EQ(rule(te_bench::ansor_c2d(false).output, threads, "pad"), threads == 1 ? 1 : 0) << threads;
    EXPECT_EQ(rule(te_bench::ansor_c2d(false, 2).output, threads, "pad"), threads == 1 ? 1 : 0) << threads;  // DIL
    EXPECT_EQ(rule(conv(30, 3, 16, 7, 2, 3).y, threads, "pad"), 0) << threads;
    EXPECT_EQ(rule(te_bench::ansor_c3d().output, threads, "pad"), 0) << threads;
    EXPECT_EQ(rule(te_bench::ansor_t2d(false).output, threads, "dilated"), 0) << threads;
  }
}

// A 7x7 window with stride 2 and padding 3 (C2D's), whose window loops the rules also
// narrow to the taps inside the input (skip_padding): per work item, the same values.
TEST(AutoSchedulePadItems, PerWorkItemWithANarrowedWindow) {
  Conv c = conv(30, 3, 16, 7, 2, 3);
  for (int threads : {1, 2}) {
    AutoScheduleOptions o;
    o.threads = threads;
    o.winograd = false;  // the direct sum (winograd_1d would compute this window)
    bool narrowed = false;
    for (const AutoScheduleDecision& d : auto_schedule_decisions({c.y}, o))
      narrowed = narrowed || (d.name == "y.local.skip_padding" && d.rule_value == 1);
    EXPECT_TRUE(narrowed) << threads << " threads";
    // (auto_schedule_with refuses a decision the rules do not ask for in that config.)
    LoweredFunc f = lower(auto_schedule_with({c.y}, o, {{"pad.work_items", 1}, {"y.local.skip_padding", 1}}),
                          {c.x, c.w, c.y}, "conv7");
    expect_matches(c, f, std::to_string(threads) + " threads");
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
  for (const AutoScheduleDecision& d : auto_schedule_decisions({y})) EXPECT_NE(d.name, "pad.work_items");
}

// Narrowed windows make the work items uneven (a 7-tap window with stride 2 over rows
// padded by 3: the edge rows do 4 to 6 of the 7 taps): on more than one thread the
// tiling then makes 8 items per thread rather than 4, so that the idle thread takes over
// part of the busy one's. 3-tap windows (never narrowed) and one thread keep 4.
TEST(AutoSchedulePadItems, MoreItemsPerThreadWhereNarrowedWindowsMakeThemUneven) {
  auto items_rule = [](const Conv& c, int threads) {
    AutoScheduleOptions o;
    o.threads = threads;
    o.winograd = false;  // the direct sum (winograd_1d would compute the 7-tap window)
    for (const AutoScheduleDecision& d : auto_schedule_decisions({c.y}, o))
      if (d.name == "y.items_per_thread") return d.rule_value;
    return int64_t{-1};
  };
  Conv wide = conv(30, 3, 16, 7, 2, 3), narrow = conv(28, 8, 32);
  EXPECT_EQ(items_rule(wide, 2), 8);
  EXPECT_EQ(items_rule(wide, 1), 4);
  EXPECT_EQ(items_rule(narrow, 2), 4);
  AutoScheduleOptions o;
  o.threads = 2;
  o.winograd = false;
  expect_matches(wide, lower(auto_schedule({wide.y}, o), {wide.x, wide.w, wide.y}, "conv7"), "8 items per thread");
}
