// cache_read_phases: a copy of a tensor with one dimension stored by phase (x % stride,
// then x / stride), so that a reader striding along its vector axis (a stride-2
// convolution's padded input along the output row) reads it contiguously. The values
// move, nothing is computed anew: interpret() equals the default schedule's bit for bit
// and plain C++ within rounding, and the JIT agrees; every misuse is a te::Error.
#include <gtest/gtest.h>
#include <te/auto_schedule.h>
#include <te/te.h>

#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

using namespace te;

namespace {

// Whether a line of ir that updates `acc` loads a vector with a stride of 2.
bool strided_update(const std::string& ir, const std::string& acc) {
  std::istringstream lines(ir);
  for (std::string line; std::getline(lines, line);)
    if (has(line, acc + "[") && has(line, ", 2, ")) return true;
  return false;
}

// A KxK convolution with stride S and padding P over an NCHW image: x (1, CI, H, W),
// w (CO, CI, K, K), through a padding stage as TVM's te_workload writes it.
struct StridedConv {
  int CI, CO, H, W, K, S, P, OH, OW;
  Tensor x, w, pad, out;
};

StridedConv strided_conv(int CI, int CO, int H, int W, int K, int S, int P) {
  StridedConv c{CI, CO, H, W, K, S, P, (H + 2 * P - K) / S + 1, (W + 2 * P - K) / S + 1, {}, {}, {}, {}};
  c.x = placeholder({1, CI, H, W}, Float(32), "x");
  c.w = placeholder({CO, CI, K, K}, Float(32), "w");
  c.pad = compute(
      {1, CI, H + 2 * P, W + 2 * P},
      [&](Expr n, Expr ci, Expr h, Expr ww) {
        Expr inside = h >= P && h < H + P && ww >= P && ww < W + P;
        return if_then_else(inside, c.x(n, ci, h - P, ww - P), 0.0f);
      },
      "pad");
  IterVar rc = reduce_axis({0, CI}, "rc"), rh = reduce_axis({0, K}, "rh"), rw = reduce_axis({0, K}, "rw");
  c.out = compute(
      {1, CO, c.OH, c.OW},
      [&](Expr n, Expr co, Expr h, Expr ww) {
        return sum(c.pad(n, rc, h * S + rh, ww * S + rw) * c.w(co, rc, rh, rw), {rc, rh, rw});
      },
      "conv");
  return c;
}

// The same convolution in plain C++, in double.
std::vector<float> conv_reference(const StridedConv& c, const std::vector<float>& x, const std::vector<float>& w) {
  std::vector<float> out(size_t(c.CO) * c.OH * c.OW);
  for (int co = 0; co < c.CO; ++co)
    for (int oh = 0; oh < c.OH; ++oh)
      for (int ow = 0; ow < c.OW; ++ow) {
        double acc = 0;
        for (int ci = 0; ci < c.CI; ++ci)
          for (int kh = 0; kh < c.K; ++kh)
            for (int kw = 0; kw < c.K; ++kw) {
              const int ih = oh * c.S + kh - c.P, iw = ow * c.S + kw - c.P;
              if (ih < 0 || ih >= c.H || iw < 0 || iw >= c.W) continue;
              acc +=
                  double(x[(size_t(ci) * c.H + ih) * c.W + iw]) * w[((size_t(co) * c.CI + ci) * c.K + kh) * c.K + kw];
            }
        out[(size_t(co) * c.OH + oh) * c.OW + ow] = float(acc);
      }
  return out;
}

struct Outputs {
  std::vector<float> jit, interpreted, plain_interpreted, reference;
  std::string ir;
};

Outputs run(const StridedConv& c, const Schedule& s) {
  Outputs r;
  LoweredFunc f = lower(s, {c.x, c.w, c.out}, "conv");
  r.ir = to_string(f.body);
  const std::vector<float> xv = uniform_floats(size_t(c.CI) * c.H * c.W, 1);
  const std::vector<float> wv = uniform_floats(size_t(c.CO) * c.CI * c.K * c.K, 2);
  NDArray x = NDArray::from_vector(xv, {1, c.CI, c.H, c.W});
  NDArray w = NDArray::from_vector(wv, {c.CO, c.CI, c.K, c.K});
  auto call = [&](auto&& fn) {
    NDArray out = NDArray::empty({1, c.CO, c.OH, c.OW}, Float(32));
    fn(std::vector<Argument>{x, w, out});
    return out.to_vector<float>();
  };
  r.jit = call([&](const std::vector<Argument>& a) { build(f)("conv").call(a); });
  r.interpreted = call([&](const std::vector<Argument>& a) { interpret(f, a); });
  LoweredFunc plain = lower(create_schedule({c.out}), {c.x, c.w, c.out}, "plain");
  r.plain_interpreted = call([&](const std::vector<Argument>& a) { interpret(plain, a); });
  r.reference = conv_reference(c, xv, wv);
  return r;
}

// `same_order`: the schedule sums in the definition's order, so that interpret() equals
// the default schedule's bit for bit (auto_schedule reorders the sum).
void expect_same_convolution(const Outputs& r, bool same_order = true) {
  ASSERT_EQ(r.interpreted.size(), r.reference.size());
  for (size_t i = 0; i < r.reference.size(); ++i) {
    if (same_order) {
      ASSERT_EQ(r.interpreted[i], r.plain_interpreted[i]) << "element " << i << "\n" << r.ir;
    }
    ASSERT_NEAR(r.interpreted[i], r.reference[i], 1e-4f) << "element " << i;
    ASSERT_NEAR(r.jit[i], r.reference[i], 1e-4f) << "element " << i << "\n" << r.ir;
  }
}

}  // namespace

TEST(CacheReadPhases, AStrideTwoConvolutionReadsItsPaddedInputContiguouslyAlongTheRow) {
  const StridedConv c = strided_conv(3, 4, 16, 16, 3, 2, 1);
  Schedule s = create_schedule({c.out});
  s[c.pad].compute_inline();
  Tensor phases = s.cache_read_phases(c.pad, "global", {c.out}, 3, 2);
  EXPECT_EQ(phases.name(), "pad.phases");
  ASSERT_EQ(phases.shape().size(), 5u);
  EXPECT_EQ(*as_const_int(phases.shape()[3]), 2);  // the phase
  EXPECT_EQ(*as_const_int(phases.shape()[4]), 9);  // 18 padded columns, 9 per phase
  // The row's 8 outputs vectorized, the kernel's columns unrolled: each tap reads 8
  // neighbours of one phase.
  Stage st = s[c.out];
  const auto& r = c.out.op()->reduce_axis;
  st.reorder({r[0], r[1], r[2], c.out.op()->axis[3]});
  st.unroll(r[2]);
  st.vectorize(c.out.op()->axis[3]);
  const Outputs out = run(c, s);
  expect_same_convolution(out);
  // rw = 0, 1, 2 read phases 0, 1, 0 at columns ow, ow, ow + 1: ramps of stride 1.
  EXPECT_TRUE(has(out.ir, "pad.phases[ramp(")) << out.ir;
  EXPECT_FALSE(has(out.ir, ", 2, 8)")) << "a stride-2 ramp is left:\n" << out.ir;
}

TEST(CacheReadPhases, OddExtentsNegativeOffsetsAndStrideThree) {
  // 17 columns by phase 3: 6 per phase, the last row's two past the end repeat the last
  // column; the readers' index 3 * ow + rw - 1 (a shifted window) splits into
  // phase (rw + 2) % 3 and coarse ow + (rw + 2) / 3 - 1.
  const int W = 17, OW = 6;
  Tensor x = placeholder({2, W}, Float(32), "x");
  IterVar rw = reduce_axis({0, 3}, "rw");
  Tensor out = compute(
      {2, OW},
      [&](Expr n, Expr ow) {
        Expr col = ow * 3 + rw - 1;
        return sum(if_then_else(col >= 0, x(n, col), 0.0f) * cast(Float(32), rw + 1), {rw});
      },
      "window");
  Schedule s = create_schedule({out});
  Tensor phases = s.cache_read_phases(x, "global", {out}, 1, 3);
  EXPECT_EQ(*as_const_int(phases.shape()[2]), 6);
  LoweredFunc f = lower(s, {x, out}, "window");
  LoweredFunc plain = lower(create_schedule({out}), {x, out}, "plain");
  const std::vector<float> xv = uniform_floats(2 * W, 3);
  auto call = [&](auto&& fn) {
    NDArray o = NDArray::empty({2, OW}, Float(32));
    fn(std::vector<Argument>{NDArray::from_vector(xv, {2, W}), o});
    return o.to_vector<float>();
  };
  const std::vector<float> got = call([&](const std::vector<Argument>& a) { interpret(f, a); });
  const std::vector<float> jit = call([&](const std::vector<Argument>& a) { build(f)("window").call(a); });
  const std::vector<float> want = call([&](const std::vector<Argument>& a) { interpret(plain, a); });
  for (int n = 0; n < 2; ++n)
    for (int ow = 0; ow < OW; ++ow) {
      float acc = 0;
      for (int k = 0; k < 3; ++k) {
        const int col = ow * 3 + k - 1;
        acc += (col >= 0 ? xv[size_t(n) * W + size_t(col)] : 0.0f) * float(k + 1);
      }
      const size_t i = size_t(n) * OW + size_t(ow);
      EXPECT_EQ(got[i], want[i]) << i;
      EXPECT_NEAR(got[i], acc, 1e-5f) << i;
      EXPECT_NEAR(jit[i], acc, 1e-5f) << i;
    }
  EXPECT_TRUE(has(to_string(f.body), "min(")) << "the copy's last row is clamped:\n" << to_string(f.body);
}

TEST(CacheReadPhases, MisuseNamesTheTensorAndWhatIsWrong) {
  const StridedConv c = strided_conv(2, 2, 8, 8, 3, 2, 1);
  Tensor other = compute(
      {2}, [&](Expr i) { return c.w(i, 0, 0, 0); }, "other");
  Schedule s = create_schedule({c.out, other});
  expect_error([&] { s.cache_read_phases(c.pad, "global", {c.out}, 4, 2); },
               {"cache_read_phases: dimension 4 is not a dimension of tensor 'pad' (it has 4)"});
  expect_error([&] { s.cache_read_phases(c.pad, "global", {c.out}, -1, 2); }, {"dimension -1", "'pad'"});
  expect_error([&] { s.cache_read_phases(c.pad, "global", {c.out}, 3, 1); },
               {"cache_read_phases", "stride 1", "'pad'", "at least 2"});
  expect_error([&] { s.cache_read_phases(c.pad, "warp", {c.out}, 3, 2); },
               {"cache_read_phases", "'warp'", "tensor-core fragment"});
  expect_error([&] { s.cache_read_phases(c.pad, "texture", {c.out}, 3, 2); },
               {"cache_read_phases", "unknown memory scope", "'texture'"});
  expect_error([&] { s.cache_read_phases(c.pad, "global", {}, 3, 2); }, {"cache_read_phases", "no readers", "'pad'"});
  expect_error([&] { s.cache_read_phases(c.pad, "global", {other}, 3, 2); },
               {"cache_read_phases", "'other' does not read tensor 'pad'"});
  Tensor stranger = placeholder({4}, Float(32), "stranger");
  expect_error([&] { s.cache_read_phases(stranger, "global", {c.out}, 0, 2); },
               {"cache_read_phases", "'stranger' is not part of this schedule"});
}

TEST(AutoSchedule, AStrideTwoNchwConvolutionReadsItsPaddedInputByPhase) {
  // The ResNet stem's shape, smaller: 7x7, stride 2, padding 3, 3 -> 12 channels, rows of
  // 16 outputs (two vectors of 8): the padded input (4332 values) is small next to the
  // 451584 multiply-adds. (12 channels are not a whole number of vectors: the layout rule
  // leaves the rows as the register tile's vectors.)
  const StridedConv c = strided_conv(3, 12, 32, 32, 7, 2, 3);
  AutoScheduleOptions o;
  o.target = Target("llvm -vector-bits=256");
  o.threads = 2;
  const Outputs by_phase = run(c, auto_schedule({c.out}, o));
  EXPECT_TRUE(has(by_phase.ir, "pad.phases[ramp(")) << by_phase.ir;
  EXPECT_FALSE(strided_update(by_phase.ir, "conv.local")) << by_phase.ir;
  expect_same_convolution(by_phase, false);
  // The search may turn it off: the reads are strided again.
  const Outputs as_written = run(c, auto_schedule_with({c.out}, o, {{"conv.read_by_phase", 0}}));
  EXPECT_FALSE(has(as_written.ir, "pad.phases")) << as_written.ir;
  EXPECT_TRUE(strided_update(as_written.ir, "conv.local")) << as_written.ir;
  expect_same_convolution(as_written, false);
  bool listed = false;
  for (const AutoScheduleDecision& d : auto_schedule_decisions({c.out}, o))
    listed = listed || d.name == "conv.read_by_phase";
  EXPECT_TRUE(listed);
}

TEST(AutoSchedule, AStridedInputLargeNextToTheArithmeticIsReadAsItIs) {
  // A 1x1 convolution of stride 2: 8 multiply-adds per input value, too few to pay for
  // a copy of the input on every call.
  const StridedConv c = strided_conv(8, 8, 32, 32, 1, 2, 0);
  AutoScheduleOptions o;
  o.target = Target("llvm -vector-bits=256");
  const Outputs r = run(c, auto_schedule({c.out}, o));
  EXPECT_FALSE(has(r.ir, ".phases")) << r.ir;
  expect_same_convolution(r, false);
}
