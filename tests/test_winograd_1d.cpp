// Schedule::winograd_1d: one window of a convolution computed by Winograd's F(m, r) in one
// dimension, strided windows by phases. The matrices (sched::minimal_filter) against the
// correlation they replace; the rewritten convolution against interpret() of the direct
// definition and a plain C++ convolution, in NHWC and NCHW, strides 1 to 3, dilations 1
// and 2, padded, with last tiles past the output; the auto-scheduler's rule (C2D-like
// windows over few channels) and its search; every refusal is a te::Error.
#include <gtest/gtest.h>
#include <te/auto_schedule.h>
#include <te/te.h>

#include <fmt/format.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ansor_suite.h"
#include "conv3x3_cases.h"  // shape_of
#include "schedule/minimal_filter.h"
#include "test_util.h"

using namespace te;

namespace {

TEST(MinimalFilter, EqualsTheCorrelation) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int m = 1; m <= 6; ++m)
    for (int r = 1; r <= 7 && m + r - 1 <= sched::kMaxFilterPoints; ++r) {
      const sched::MinimalFilter f = sched::minimal_filter(m, r);
      ASSERT_EQ(f.points, m + r - 1);
      std::vector<double> g(static_cast<size_t>(r)), x(static_cast<size_t>(f.points));
      for (double& v : g) v = u(rng);
      for (double& v : x) v = u(rng);
      std::vector<double> product(size_t(f.points));
      for (int n = 0; n < f.points; ++n) {
        double gn = 0, xn = 0;
        for (int k = 0; k < r; ++k) gn += f.filter[n][k] * g[k];
        for (int e = 0; e < f.points; ++e) xn += f.input[n][e] * x[e];
        product[n] = gn * xn;
      }
      for (int i = 0; i < m; ++i) {
        double y = 0, want = 0;
        for (int n = 0; n < f.points; ++n) y += f.output[i][n] * product[n];
        for (int k = 0; k < r; ++k) want += g[k] * x[i + k];
        EXPECT_NEAR(y, want, 1e-9) << "F(" << m << ", " << r << ") output " << i;
      }
    }
}

// A 2-D convolution with a padding stage: window K, stride S, dilation D, padding P.
struct Conv {
  Tensor x, w, pad, out;
  bool nchw = false;
  int N = 1, CI = 1, CO = 1, H = 1, W = 1, K = 1, S = 1, D = 1, P = 0, OH = 1, OW = 1;
};

Conv make_conv(bool nchw, int N, int CI, int CO, int H, int W, int K, int S, int D, int P) {
  Conv c;
  c.nchw = nchw, c.N = N, c.CI = CI, c.CO = CO, c.H = H, c.W = W, c.K = K, c.S = S, c.D = D, c.P = P;
  c.OH = (H + 2 * P - D * (K - 1) - 1) / S + 1;
  c.OW = (W + 2 * P - D * (K - 1) - 1) / S + 1;
  IterVar rh = reduce_axis({0, K}, "rh"), rw = reduce_axis({0, K}, "rw"), rc = reduce_axis({0, CI}, "rc");
  if (nchw) {
    c.x = placeholder({N, CI, H, W}, Float(32), "x");
    c.w = placeholder({CO, CI, K, K}, Float(32), "w");
    c.pad = compute(
        {N, CI, H + 2 * P, W + 2 * P},
        [&](Expr n, Expr ci, Expr y, Expr xx) {
          return if_then_else(y >= P && y < H + P && xx >= P && xx < W + P, c.x(n, ci, y - P, xx - P), 0.0f);
        },
        "pad");
    c.out = compute(
        {N, CO, c.OH, c.OW},
        [&](Expr n, Expr co, Expr h, Expr ww) {
          return sum(c.pad(n, rc, h * S + rh * D, ww * S + rw * D) * c.w(co, rc, rh, rw), {rc, rh, rw});
        },
        "conv");
  } else {
    c.x = placeholder({N, H, W, CI}, Float(32), "x");
    c.w = placeholder({K, K, CI, CO}, Float(32), "w");
    c.pad = compute(
        {N, H + 2 * P, W + 2 * P, CI},
        [&](Expr n, Expr y, Expr xx, Expr ci) {
          return if_then_else(y >= P && y < H + P && xx >= P && xx < W + P, c.x(n, y - P, xx - P, ci), 0.0f);
        },
        "pad");
    c.out = compute(
        {N, c.OH, c.OW, CO},
        [&](Expr n, Expr h, Expr ww, Expr co) {
          return sum(c.pad(n, h * S + rh * D, ww * S + rw * D, rc) * c.w(rh, rw, rc, co), {rh, rw, rc});
        },
        "conv");
  }
  return c;
}

IterVar window(const Conv& c, const char* name) {
  for (const IterVar& r : c.out.op()->reduce_axis)
    if (r.name() == name) return r;
  return IterVar();
}

int64_t size_of(const Tensor& t) {
  int64_t n = 1;
  for (int64_t d : shape_of(t)) n *= d;
  return n;
}

// The convolution in plain C++, in double.
std::vector<float> reference(const Conv& c, const std::vector<float>& x, const std::vector<float>& w) {
  auto xi = [&](int n, int ci, int y, int xx) {
    return c.nchw ? ((size_t(n) * c.CI + ci) * c.H + y) * c.W + xx : ((size_t(n) * c.H + y) * c.W + xx) * c.CI + ci;
  };
  auto wi = [&](int co, int ci, int a, int b) {
    return c.nchw ? ((size_t(co) * c.CI + ci) * c.K + a) * c.K + b : ((size_t(a) * c.K + b) * c.CI + ci) * c.CO + co;
  };
  auto oi = [&](int n, int co, int h, int ww) {
    return c.nchw ? ((size_t(n) * c.CO + co) * c.OH + h) * c.OW + ww : ((size_t(n) * c.OH + h) * c.OW + ww) * c.CO + co;
  };
  std::vector<float> out(size_t(c.N) * c.CO * c.OH * c.OW);
  for (int n = 0; n < c.N; ++n)
    for (int co = 0; co < c.CO; ++co)
      for (int h = 0; h < c.OH; ++h)
        for (int ww = 0; ww < c.OW; ++ww) {
          double acc = 0;
          for (int ci = 0; ci < c.CI; ++ci)
            for (int a = 0; a < c.K; ++a)
              for (int b = 0; b < c.K; ++b) {
                const int y = h * c.S + a * c.D - c.P, xx = ww * c.S + b * c.D - c.P;
                if (y < 0 || y >= c.H || xx < 0 || xx >= c.W) continue;
                acc += double(x[xi(n, ci, y, xx)]) * w[wi(co, ci, a, b)];
              }
          out[oi(n, co, h, ww)] = float(acc);
        }
  return out;
}

struct Outputs {
  std::vector<float> jit, interpreted, direct, reference;
  std::string ir;
};

// s's function (its pretransformed weights made by lower_pretransform), the direct
// definition interpreted, and the plain C++ convolution.
Outputs run(const Conv& c, const Schedule& s) {
  Outputs r;
  LoweredFunc f = lower(s, {c.x, c.w, c.out}, "kernel");
  r.ir = to_string(f.body);
  std::vector<float> xv = uniform_floats(size_t(size_of(c.x)), 1), wv = uniform_floats(size_t(size_of(c.w)), 2);
  NDArray x = NDArray::from_vector(xv, shape_of(c.x)), w = NDArray::from_vector(wv, shape_of(c.w));
  NDArray taken = w;
  if (!s.pretransforms().empty()) {
    const Pretransform& p = s.pretransforms()[0];
    taken = NDArray::empty(shape_of(p.taken), Float(32));
    build(lower_pretransform(s, c.w, "transform"))("transform").call({w, taken});
  }
  auto call = [&](const NDArray& weights, auto&& fn) {
    NDArray out = NDArray::empty(shape_of(c.out), Float(32));
    fn(std::vector<Argument>{x, weights, out});
    return out.to_vector<float>();
  };
  r.jit = call(taken, [&](const std::vector<Argument>& a) { build(f)("kernel").call(a); });
  r.interpreted = call(taken, [&](const std::vector<Argument>& a) { interpret(f, a); });
  LoweredFunc plain = lower(create_schedule({c.out}), {c.x, c.w, c.out}, "direct");
  r.direct = call(w, [&](const std::vector<Argument>& a) { interpret(plain, a); });
  r.reference = reference(c, xv, wv);
  return r;
}

// Within a few rounding errors (of the transforms' constants up to 16 or so) of a sum of
// CI * K * K products of magnitude <= 1.
void expect_close(const std::vector<float>& got, const std::vector<float>& want, const Conv& c,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  const float tol = 2e-5f * float(c.CI * c.K * c.K);
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], tol) << what << ", element " << i;
}

void expect_all_close(const Conv& c, const Outputs& r, const std::string& what = "") {
  expect_close(r.direct, r.reference, c, what + " direct");
  expect_close(r.interpreted, r.reference, c, what + " interpreted\n" + r.ir);
  expect_close(r.jit, r.reference, c, what + " jit\n" + r.ir);
}

TEST(Winograd1d, StridedWindowByPhases) {
  // C2D's window: 7 taps, stride 2, padding 3; 4 taps on the even columns and 3 on the
  // odd: F(4, 4) + F(4, 3), 13 points. 11 outputs: the last tile is 3 past the end.
  Conv c = make_conv(false, 1, 3, 8, 21, 22, 7, 2, 1, 3);
  ASSERT_EQ(c.OW, 11);
  Schedule s = create_schedule({c.out});
  WinogradStages wg = s.winograd_1d(c.out, window(c, "rw"), 4);
  EXPECT_EQ(wg.weights.name(), "conv.wino_weights");
  EXPECT_EQ(shape_of(wg.weights), (std::vector<int64_t>{13, 7, 3, 8}));  // ν, rh, rc, co
  EXPECT_FALSE(wg.input_rows.defined());
  EXPECT_EQ(shape_of(wg.input), (std::vector<int64_t>{1, 27, 3, 3, 13}));  // the padding's dims, tiles, ν
  EXPECT_EQ(shape_of(wg.product), (std::vector<int64_t>{13, 1, 11, 3, 8}));
  EXPECT_FALSE(wg.output.defined());  // the output channels innermost already
  Outputs r = run(c, s);
  EXPECT_TRUE(has(r.ir, "conv.wino_product[")) << r.ir;
  expect_all_close(c, r);
}

TEST(Winograd1d, DilatedWindowOnePhaseNchw) {
  // DIL's window: dilation 2 with stride 2 reads every other column, one phase of 7
  // taps, F(3, 7); NCHW: the output channels innermost first, then copied back.
  Conv c = make_conv(true, 2, 3, 5, 20, 19, 7, 2, 2, 3);
  Schedule s = create_schedule({c.out});
  WinogradStages wg = s.winograd_1d(c.out, window(c, "rw"), 3);
  EXPECT_EQ(shape_of(wg.weights), (std::vector<int64_t>{9, 3, 7, 5}));  // ν, rc, rh, co last
  ASSERT_TRUE(wg.output.defined());
  EXPECT_EQ(wg.output.name(), "conv.wino_output");
  EXPECT_EQ(shape_of(wg.output), (std::vector<int64_t>{2, c.OH, c.OW, 5}));
  expect_all_close(c, run(c, s));
}

TEST(Winograd1d, TheRowsWindowAndPrecomputedWeights) {
  // Along the rows instead (stride 1, 3 taps: F(4, 3)), weights transformed by the caller.
  Conv c = make_conv(false, 1, 4, 6, 9, 7, 3, 1, 1, 1);
  Schedule s = create_schedule({c.out});
  WinogradStages wg = s.winograd_1d(c.out, window(c, "rh"), 4);
  Tensor taken = s.precompute(wg.weights);
  EXPECT_EQ(taken.name(), "conv_wino_weights");
  ASSERT_EQ(s.pretransforms().size(), 1u);
  expect_all_close(c, run(c, s));
}

TEST(Winograd1d, RandomConvolutionsMatch) {
  // Layouts, strides 1-3, dilation 1 or the stride, windows 2-7, tile sizes 2-6 (where the
  // phases fit in 12 points), padding, batches, odd sizes down to one output.
  std::mt19937 rng(51);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int tested = 0;
  for (int k = 0; tested < 16 && k < 200; ++k) {
    const bool nchw = pick(0, 1) == 1;
    const int K = pick(2, 7), S = pick(1, 3), D = pick(0, 1) == 1 ? S : 1, P = pick(0, K / 2), m = pick(2, 6);
    const int H = pick(D * (K - 1) + 1, D * (K - 1) + 9), W = pick(D * (K - 1) + 1, D * (K - 1) + 9);
    Conv c = make_conv(nchw, pick(1, 2), pick(1, 4), pick(1, 5), H, W, K, S, D, P);
    if (c.OH < 1 || c.OW < 1) continue;
    const char* along = pick(0, 1) == 1 ? "rw" : "rh";
    Schedule s = create_schedule({c.out});
    const int phase_taps = (K + (S / D) - 1) / (S / D);  // the longest phase
    if (m + phase_taps - 1 > sched::kMaxFilterPoints) continue;
    WinogradStages wg = s.winograd_1d(c.out, window(c, along), m);
    if (pick(0, 1) == 1) s.precompute(wg.weights);
    ++tested;
    expect_all_close(c, run(c, s),
                     fmt::format("case {}: {} N={} CI={} CO={} H={} W={} K={} S={} D={} P={} along {} m={}", k,
                                 nchw ? "NCHW" : "NHWC", c.N, c.CI, c.CO, H, W, K, S, D, P, along, m));
  }
  EXPECT_EQ(tested, 16);
}

TEST(Winograd1d, ErrorsNameWhatDiffers) {
  Conv c = make_conv(false, 1, 3, 8, 12, 12, 7, 2, 1, 3);
  Schedule s = create_schedule({c.out});
  expect_error([&] { s.winograd_1d(Tensor(), window(c, "rw")); }, {"winograd_1d: undefined tensor"});
  Tensor other = placeholder({4}, Float(32), "other");
  expect_error([&] { s.winograd_1d(other, window(c, "rw")); },
               {"winograd_1d: tensor 'other' is not part of this schedule"});
  expect_error([&] { s.winograd_1d(c.out, c.out.op()->axis[1]); },
               {"winograd_1d: 'j' is not a reduction axis of stage 'conv'"});
  expect_error([&] { s.winograd_1d(c.out, window(c, "rw"), 1); },
               {"outputs_per_tile is 1; a tile has 2 or more outputs"});
  expect_error([&] { s.winograd_1d(c.out, window(c, "rc")); },
               {"stage 'conv' does not read a window 'rc'",
                "its input 'pad' is read at rc in dimension 3, not at stride * axis + dilation * rc + constant"});
  expect_error([&] { s.winograd_1d(c.pad, window(c, "rw")); },
               {"stage 'pad' is not a convolution: its body is not a sum"});
  expect_error([&] { s.winograd_1d(c.x, window(c, "rw")); }, {"stage 'x' is a placeholder"});
  // F(8, 4): 11 points, fine; F(10, 4): 13, too many.
  expect_error([&] { s.winograd_1d(c.out, window(c, "rw"), 10); },
               {"F(10, 4) needs 13 points, more than the 12 whose float rounding stays small"});
  // Dilation 2 with stride 3: taps 2 apart in steps of 3 land in three phases with holes.
  Conv holes = make_conv(false, 1, 2, 2, 16, 16, 3, 3, 2, 0);
  Schedule sh = create_schedule({holes.out});
  expect_error([&] { sh.winograd_1d(holes.out, window(holes, "rw")); },
               {"the window 'rw' (dilation 2, stride 3) leaves holes between the taps of a phase"});
  // A window starting before the input (padding by index) and a scheduled stage.
  Tensor x = placeholder({10, 3}, Float(32), "x"), w = placeholder({3, 3, 4}, Float(32), "w");
  IterVar r = reduce_axis({0, 3}, "r"), ci = reduce_axis({0, 3}, "ci");
  Tensor y = compute(
      {8, 4},
      [&](Expr i, Expr co) {
        return sum(x(i + r - 1, ci) * w(r, ci, co), {r, ci});
      },
      "y");
  Schedule sy = create_schedule({y});
  expect_error([&] { sy.winograd_1d(y, r); }, {"is read at", "before its start; pad it with a stage"});
  Schedule ss = create_schedule({c.out});
  ss[c.out].split(c.out.op()->axis[1], 2);
  expect_error([&] { ss.winograd_1d(c.out, window(c, "rw")); },
               {"stage 'conv' already has a loop schedule, which winograd would drop"});
}

// The auto-scheduler's rule: C2D's and DIL's windows over 3 channels (7 taps x 3 = 21
// steps left to sum) become winograd_1d where the output channels are 16 or more.
TEST(Winograd1d, AutoScheduleTakesStridedSevenTapWindows) {
  for (const auto& [nchw, dilation] : std::vector<std::pair<bool, int>>{{false, 1}, {false, 2}, {true, 1}}) {
    Conv c = make_conv(nchw, 1, 3, 16, 30, 34, 7, 2, dilation, 3);
    AutoScheduleOptions o;
    o.threads = 2;
    o.constant_inputs = {c.w};
    Schedule s = auto_schedule({c.out}, o);
    bool rewritten = false;
    for (const Stage& st : s.stages()) rewritten = rewritten || st->op->name == "conv.wino_product";
    EXPECT_TRUE(rewritten) << (nchw ? "NCHW" : "NHWC") << " dilation " << dilation;
    ASSERT_EQ(s.pretransforms().size(), 1u);
    EXPECT_TRUE(s.pretransforms()[0].computed.defined());
    Outputs r = run(c, s);
    EXPECT_TRUE(has(r.ir, "parallel")) << r.ir;
    expect_all_close(c, r, fmt::format("{} dilation {}", nchw ? "NCHW" : "NHWC", dilation));
  }
}

TEST(Winograd1d, AutoScheduleTakesAThreeDimensionalWindow) {
  // C3D's 7x7x7 stride-2 window over 3 channels (NDHWC; the Ansor suite's at a quarter
  // of its size): the width window by phases, the depth and height windows and the
  // channels (147 steps) left a sum per point.
  const te_bench::SuiteKernel k = te_bench::ansor_c3d(4);
  const Tensor &x = k.args[0], &w = k.args[1], &out = k.output;
  const int D = 4, H = 56, CI = 3, CO = 16, K = 7, S = 2, P = 3, OD = 2, OH = 28;
  ASSERT_EQ(shape_of(out), (std::vector<int64_t>{1, OD, OH, OH, CO}));
  AutoScheduleOptions o;
  o.threads = 2;
  o.constant_inputs = {w};
  Schedule s = auto_schedule({out}, o);
  ASSERT_EQ(s.pretransforms().size(), 1u);
  // ν (F(6, 4) + F(6, 3): 17 points), the weights' other dimensions (rd, rh, rc), the
  // output channels.
  EXPECT_EQ(shape_of(s.pretransforms()[0].taken), (std::vector<int64_t>{17, 7, 7, 3, CO}));
  LoweredFunc f = lower(s, {x, w, out}, "conv3");
  const std::string ir = to_string(f.body);
  EXPECT_TRUE(has(ir, "ansor_c3d.wino_product[")) << ir;
  std::vector<float> xv = uniform_floats(size_t(D * H * H * CI), 3),
                     wv = uniform_floats(size_t(K * K * K * CI * CO), 4);
  NDArray xa = NDArray::from_vector(xv, shape_of(x)), wa = NDArray::from_vector(wv, shape_of(w));
  NDArray taken = NDArray::empty(shape_of(s.pretransforms()[0].taken), Float(32));
  build(lower_pretransform(s, w, "transform"))("transform").call({wa, taken});
  NDArray jit = NDArray::empty(shape_of(out), Float(32)), interpreted = NDArray::empty(shape_of(out), Float(32));
  build(f)("conv3").call({xa, taken, jit});
  interpret(f, {xa, taken, interpreted});
  const std::vector<float> got = jit.to_vector<float>(), again = interpreted.to_vector<float>();
  size_t i = 0;
  for (int d = 0; d < OD; ++d)
    for (int y = 0; y < OH; ++y)
      for (int xo = 0; xo < OH; ++xo)
        for (int co = 0; co < CO; ++co, ++i) {
          double want = 0;
          for (int kd = 0; kd < K; ++kd)
            for (int kh = 0; kh < K; ++kh)
              for (int kw = 0; kw < K; ++kw)
                for (int ci = 0; ci < CI; ++ci) {
                  const int id = d * S + kd - P, iy = y * S + kh - P, ix = xo * S + kw - P;
                  if (id < 0 || id >= D || iy < 0 || iy >= H || ix < 0 || ix >= H) continue;
                  want += double(xv[size_t(((id * H + iy) * H + ix) * CI + ci)]) *
                          wv[size_t((((kd * K + kh) * K + kw) * CI + ci) * CO + co)];
                }
          // Rounding of the transforms' constants (up to 16 or so) over 1029 products.
          ASSERT_NEAR(got[i], want, 2e-5 * K * K * K * CI) << "jit, element " << i << "\n" << ir;
          ASSERT_NEAR(again[i], want, 2e-5 * K * K * K * CI) << "interpreted, element " << i;
        }
}

TEST(Winograd1d, ManyStepsPutTheTilesOutsideThePoints) {
  // 7 taps x 12 channels left to sum (more than 64): a row's tiles go outside its points
  // (C3D's order); 7 x 3 keep the points outside.
  for (int CI : {3, 12}) {
    Conv c = make_conv(false, 1, CI, 16, 26, 26, 7, 2, 1, 3);
    AutoScheduleOptions o;
    o.threads = 1;
    int64_t outside = -1;
    for (const AutoScheduleDecision& d : auto_schedule_decisions({c.out}, o))
      if (d.name == "conv.wino_product.tiles_outside") outside = d.rule_value;
    EXPECT_EQ(outside, CI == 12 ? 1 : 0) << CI;
    for (int64_t choice : {0, 1})
      expect_all_close(c, run(c, auto_schedule_with({c.out}, o, {{"conv.wino_product.tiles_outside", choice}})),
                       fmt::format("{} channels, tiles outside {}", CI, choice));
  }
}

TEST(Winograd1d, AutoScheduleLeavesOthersDirect) {
  // Winograd off; too few output channels; a 3x3 stride-2 window (saves 1.38x at most).
  struct Case {
    int CO, K, S;
    bool winograd;
  };
  for (const Case& k : {Case{16, 7, 2, false}, Case{8, 7, 2, true}, Case{16, 3, 2, true}}) {
    Conv c = make_conv(false, 1, 3, k.CO, 20, 20, k.K, k.S, 1, k.K / 2);
    AutoScheduleOptions o;
    o.winograd = k.winograd;
    Schedule s = auto_schedule({c.out}, o);
    for (const Stage& st : s.stages()) EXPECT_NE(st->op->name, "conv.wino_product") << k.CO << " " << k.K;
    expect_all_close(c, run(c, s));
  }
}

TEST(Winograd1d, SearchTakesTheRewrite) {
  // Three trials: each config is checked against the float64 reference of the same
  // Winograd graph, and the best one computes the convolution.
  Conv c = make_conv(false, 1, 3, 16, 24, 24, 7, 2, 1, 3);
  AutoScheduleOptions o;
  o.trials = 3;
  o.threads = 1;
  o.constant_inputs = {c.w};
  Schedule s = auto_schedule({c.out}, o);
  bool rewritten = false;
  for (const Stage& st : s.stages()) rewritten = rewritten || st->op->name == "conv.wino_product";
  EXPECT_TRUE(rewritten);
  expect_all_close(c, run(c, s));
}

}  // namespace
