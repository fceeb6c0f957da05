// Schedule::winograd: a 3x3 stride-1 convolution rewritten as Winograd's F(2x2, 3x3), and
// Schedule::precompute: the function takes a stage of one input (the transformed
// weights) computed once by the caller. The rewritten convolution equals the direct one
// up to rounding (the transforms add, subtract and halve): checked in interpret() and the
// JIT against interpret() of the direct definition and a plain C++ convolution, in NHWC
// and NCHW, padded or not, odd output sizes (a last tile half outside), batches; the
// transformed weights against G g Gᵀ in plain C++; every misuse is a te::Error.
#include <gtest/gtest.h>
#include <te/auto_schedule.h>
#include <te/te.h>

#include <fmt/format.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "conv3x3_cases.h"
#include "test_util.h"

using namespace te;

namespace {

int64_t size_of(const Tensor& t) {
  int64_t n = 1;
  for (int64_t d : shape_of(t)) n *= d;
  return n;
}

// A 3x3 convolution and the layout facts the plain C++ reference needs.
struct Conv {
  Tensor x, w, out;
  bool nchw = true;
  int N = 1, CI = 1, CO = 1, H = 1, W = 1, pad = 0;
};

Conv conv_nchw(int N, int CI, int CO, int H, int W, bool weights_first = false) {
  Conv c;
  c.N = N, c.CI = CI, c.CO = CO, c.H = H, c.W = W;
  const Conv3x3 t = conv3x3_nchw(N, CI, CO, H, W, weights_first);
  c.x = t.x, c.w = t.w, c.out = t.out;
  return c;
}

Conv conv_nhwc(int CI, int CO, int H, int W) {
  Conv c;
  c.nchw = false, c.CI = CI, c.CO = CO, c.H = H, c.W = W, c.pad = 1;
  const Conv3x3 t = conv3x3_nhwc_padded(CI, CO, H, W);
  c.x = t.x, c.w = t.w, c.out = t.out;
  return c;
}

// The convolution in plain C++, in double.
std::vector<float> reference(const Conv& c, const std::vector<float>& x, const std::vector<float>& w) {
  const int OH = c.H + 2 * c.pad - 2, OW = c.W + 2 * c.pad - 2;
  auto xi = [&](int n, int ci, int y, int xx) {
    return c.nchw ? ((size_t(n) * c.CI + ci) * c.H + y) * c.W + xx : ((size_t(n) * c.H + y) * c.W + xx) * c.CI + ci;
  };
  auto wi = [&](int co, int ci, int a, int b) {
    return c.nchw ? ((size_t(co) * c.CI + ci) * 3 + a) * 3 + b : ((size_t(a) * 3 + b) * c.CI + ci) * c.CO + co;
  };
  auto oi = [&](int n, int co, int h, int ww) {
    return c.nchw ? ((size_t(n) * c.CO + co) * OH + h) * OW + ww : ((size_t(n) * OH + h) * OW + ww) * c.CO + co;
  };
  std::vector<float> out(size_t(c.N) * c.CO * OH * OW);
  for (int n = 0; n < c.N; ++n)
    for (int co = 0; co < c.CO; ++co)
      for (int h = 0; h < OH; ++h)
        for (int ww = 0; ww < OW; ++ww) {
          double acc = 0;
          for (int ci = 0; ci < c.CI; ++ci)
            for (int a = 0; a < 3; ++a)
              for (int b = 0; b < 3; ++b) {
                const int y = h + a - c.pad, xx = ww + b - c.pad;
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

// s's function (the weights transformed first by lower_pretransform when s takes them
// precomputed), the direct definition interpreted, and the plain C++ convolution.
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

// Within a few rounding errors of a sum of CI * 9 products of magnitude ≤ 1.
void expect_close(const std::vector<float>& got, const std::vector<float>& want, int CI, const std::string& ir) {
  ASSERT_EQ(got.size(), want.size());
  const float tol = 4e-6f * float(CI * 9);
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], tol) << "element " << i << "\n" << ir;
}

void expect_all_close(const Conv& c, const Outputs& r) {
  expect_close(r.direct, r.reference, c.CI, "direct");
  expect_close(r.interpreted, r.reference, c.CI, r.ir);
  expect_close(r.jit, r.reference, c.CI, r.ir);
}

TEST(Winograd, PaddedNhwcWithOddOutputs) {
  // 7x5 outputs: the last tile row and column are half outside, and read one row and
  // column past the padded input: zero there.
  Conv c = conv_nhwc(8, 16, 7, 5);
  Schedule s = create_schedule({c.out});
  WinogradStages wg = s.winograd(c.out);
  EXPECT_EQ(wg.weights.name(), "conv.wino_weights");
  EXPECT_EQ(shape_of(wg.weights), (std::vector<int64_t>{4, 4, 8, 16}));
  EXPECT_EQ(shape_of(wg.input_rows), (std::vector<int64_t>{4, 1, 4, 7, 8}));
  EXPECT_EQ(shape_of(wg.input), (std::vector<int64_t>{4, 4, 1, 4, 3, 8}));
  EXPECT_EQ(shape_of(wg.product), (std::vector<int64_t>{4, 4, 1, 4, 3, 16}));
  EXPECT_FALSE(wg.output.defined());  // the output channels innermost already
  Outputs r = run(c, s);
  EXPECT_TRUE(has(r.ir, "conv.wino_product[")) << r.ir;
  expect_all_close(c, r);
}

TEST(Winograd, NchwBatchesUnpadded) {
  // 7x6 outputs from 9x8 inputs, two images, channels first.
  Conv c = conv_nchw(2, 6, 5, 9, 8);
  Schedule s = create_schedule({c.out});
  WinogradStages wg = s.winograd(c.out);
  EXPECT_EQ(shape_of(wg.weights), (std::vector<int64_t>{4, 4, 6, 5}));
  EXPECT_EQ(shape_of(wg.input), (std::vector<int64_t>{4, 4, 2, 4, 3, 6}));
  EXPECT_EQ(shape_of(wg.input_rows), (std::vector<int64_t>{4, 2, 4, 8, 6}));
  EXPECT_EQ(shape_of(wg.product), (std::vector<int64_t>{4, 4, 2, 4, 3, 5}));
  // The output channels innermost first, then copied to NCHW.
  ASSERT_TRUE(wg.output.defined());
  EXPECT_EQ(wg.output.name(), "conv.wino_output");
  EXPECT_EQ(shape_of(wg.output), (std::vector<int64_t>{2, 7, 6, 5}));
  expect_all_close(c, run(c, s));
}

TEST(Winograd, WeightsFirstAndEvenOutputs) {
  Conv c = conv_nchw(1, 4, 3, 10, 6, /*weights_first=*/true);
  Schedule s = create_schedule({c.out});
  s.winograd(c.out);
  expect_all_close(c, run(c, s));
}

TEST(Winograd, ScheduledLikeAnyStages) {
  // The new stages are ordinary: the product's output channels vectorized, the
  // convolution parallel over its rows.
  Conv c = conv_nhwc(8, 16, 6, 6);
  Schedule s = create_schedule({c.out});
  WinogradStages wg = s.winograd(c.out);
  Stage m = s[wg.product];
  auto [outer, inner] = m.split(m->op->axis.back(), 8);
  m.vectorize(inner);
  s[c.out].parallel(s[c.out]->op->axis[1]);
  s[wg.input_rows].compute_inline();
  Outputs r = run(c, s);
  EXPECT_TRUE(has(r.ir, "parallel")) << r.ir;
  expect_all_close(c, r);
}

TEST(Winograd, RandomShapesMatchTheConvolution) {
  // Layouts, batches, channel counts from 1, odd and even output sizes down to one tile.
  std::mt19937 rng(50);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int k = 0; k < 16; ++k) {
    const bool nchw = pick(0, 1) == 1;
    const int CI = pick(1, 9), CO = pick(1, 9), H = pick(3, 10), W = pick(3, 10);
    Conv c = nchw ? conv_nchw(pick(1, 2), CI, CO, H, W, pick(0, 1) == 1) : conv_nhwc(CI, CO, H, W);
    Schedule s = create_schedule({c.out});
    WinogradStages wg = s.winograd(c.out);
    const bool precomputed = pick(0, 1) == 1;
    if (precomputed) s.precompute(wg.weights);
    const std::string what = fmt::format("case {}: {} N={} CI={} CO={} H={} W={}{}", k, nchw ? "NCHW" : "NHWC", c.N, CI,
                                         CO, H, W, precomputed ? ", weights precomputed" : "");
    LoweredFunc f = lower(s, {c.x, c.w, c.out}, "kernel");
    std::vector<float> xv = uniform_floats(size_t(size_of(c.x)), uint32_t(k)),
                       wv = uniform_floats(size_t(size_of(c.w)), uint32_t(k + 100));
    NDArray weights = NDArray::from_vector(wv, shape_of(c.w)), out = NDArray::empty(shape_of(c.out), Float(32));
    if (precomputed) {
      NDArray u = NDArray::empty(shape_of(s.pretransforms()[0].taken), Float(32));
      interpret(lower_pretransform(s, c.w, "transform"), {weights, u});
      weights = u;
    }
    interpret(f, {NDArray::from_vector(xv, shape_of(c.x)), weights, out});
    SCOPED_TRACE(what);
    expect_close(out.to_vector<float>(), reference(c, xv, wv), CI, what);
  }
}

TEST(Winograd, PrecomputeAReduction) {
  // A stage that sums its input: the function computing it keeps it a stage of its own.
  Tensor w = placeholder({6, 5}, Float(32), "w");
  Tensor x = placeholder({6}, Float(32), "x");
  IterVar r = reduce_axis({0, 5}, "r");
  Tensor rows = compute(
      {6}, [&](Expr i) { return sum(w(i, r), {r}); }, "rows");
  Tensor y = compute(
      {6}, [&](Expr i) { return x(i) * rows(i); }, "y");
  Schedule s = create_schedule({y});
  Tensor taken = s.precompute(rows);
  EXPECT_EQ(taken.name(), "rows");
  LoweredFunc sums = lower_pretransform(s, w, "sums");
  std::vector<float> wv = uniform_floats(30, 3), xv = uniform_floats(6, 4);
  NDArray t = NDArray::empty({6}, Float(32)), out = NDArray::empty({6}, Float(32));
  build(sums)("sums").call({NDArray::from_vector(wv, {6, 5}), t});
  build(lower(s, {x, w, y}, "f"))("f").call({NDArray::from_vector(xv, {6}), t, out});
  for (int i = 0; i < 6; ++i) {
    double row = 0;
    for (int j = 0; j < 5; ++j) row += wv[size_t(i * 5 + j)];
    EXPECT_NEAR(out.to_vector<float>()[size_t(i)], xv[size_t(i)] * row, 1e-5) << i;
  }
}

// G g Gᵀ of one 3x3 filter in plain C++.
std::vector<float> transformed(const float g[3][3]) {
  const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  std::vector<float> u(16);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      double acc = 0;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) acc += G[a][i] * g[i][j] * G[b][j];
      u[size_t(a * 4 + b)] = float(acc);
    }
  return u;
}

TEST(Winograd, PrecomputedWeights) {
  Conv c = conv_nchw(1, 3, 2, 6, 6);
  Schedule s = create_schedule({c.out});
  WinogradStages wg = s.winograd(c.out);
  Tensor taken = s.precompute(wg.weights);
  EXPECT_EQ(taken.name(), "conv_wino_weights");
  EXPECT_EQ(shape_of(taken), (std::vector<int64_t>{4, 4, 3, 2}));
  ASSERT_EQ(s.pretransforms().size(), 1u);
  EXPECT_EQ(s.pretransforms()[0].input.op(), c.w.op());
  EXPECT_EQ(s.pretransforms()[0].computed.op(), wg.weights.op());
  LoweredFunc f = lower(s, {c.x, c.w, c.out}, "kernel");
  ASSERT_EQ(f.params.size(), 3u);
  EXPECT_EQ(f.params[1].name(), "conv_wino_weights");
  EXPECT_FALSE(has(to_string(f.body), " w[")) << f.body;
  // The transform function against G g Gᵀ: U[a][b][ci][co].
  std::vector<float> wv = uniform_floats(size_t(size_of(c.w)), 2);
  NDArray u = NDArray::empty(shape_of(taken), Float(32));
  build(lower_pretransform(s, c.w, "transform"))("transform").call({NDArray::from_vector(wv, shape_of(c.w)), u});
  const std::vector<float> got = u.to_vector<float>();
  for (int co = 0; co < 2; ++co)
    for (int ci = 0; ci < 3; ++ci) {
      float g[3][3];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) g[i][j] = wv[size_t(((co * 3 + ci) * 3 + i) * 3 + j)];
      const std::vector<float> want = transformed(g);
      for (int ab = 0; ab < 16; ++ab)
        EXPECT_NEAR(got[size_t((ab * 3 + ci) * 2 + co)], want[size_t(ab)], 1e-6f) << co << " " << ci << " " << ab;
    }
  expect_all_close(c, run(c, s));
}

TEST(Winograd, PrecomputedAndLaidOutByOneFunction) {
  // The precomputed weights then blocked by 8 output channels: one entry, one function.
  Conv c = conv_nhwc(4, 12, 5, 5);
  Schedule s = create_schedule({c.out});
  WinogradStages wg = s.winograd(c.out);
  Tensor taken = s.pretransform(s.precompute(wg.weights), {0, 1, 2, 3}, 8);
  EXPECT_EQ(taken.name(), "conv_wino_weights_0123_b8");
  EXPECT_EQ(shape_of(taken), (std::vector<int64_t>{2, 4, 4, 4, 8}));
  ASSERT_EQ(s.pretransforms().size(), 1u);
  EXPECT_EQ(s.pretransforms()[0].taken.op(), taken.op());
  EXPECT_EQ(s.pretransforms()[0].inner_block, 8);
  Outputs r = run(c, s);
  EXPECT_TRUE(has(r.ir, "conv_wino_weights_0123_b8[")) << r.ir;
  expect_all_close(c, r);
}

TEST(Winograd, AutoScheduleTakesConstantWeightsTransformed) {
  Conv c = conv_nhwc(32, 48, 9, 9);
  AutoScheduleOptions o;
  o.threads = 2;
  o.constant_inputs = {c.w};
  Schedule s = auto_schedule({c.out}, o);
  ASSERT_EQ(s.pretransforms().size(), 1u);
  const Pretransform& p = s.pretransforms()[0];
  EXPECT_EQ(p.input.op(), c.w.op());
  ASSERT_TRUE(p.computed.defined());
  EXPECT_EQ(p.computed.name(), "conv.wino_weights");
  Outputs r = run(c, s);
  EXPECT_TRUE(has(r.ir, "conv.wino_product")) << r.ir;
  EXPECT_TRUE(has(r.ir, p.taken.name() + "[")) << r.ir;
  expect_all_close(c, r);
}

TEST(Winograd, AutoScheduleTransformsWeightsThatVary) {
  // Weights set on every call are transformed in the function. NCHW, two images: the
  // input copied channels last, the outputs computed channels innermost, then copied.
  Conv c = conv_nchw(2, 16, 16, 8, 11);
  AutoScheduleOptions o;
  o.threads = 2;
  Schedule s = auto_schedule({c.out}, o);
  EXPECT_TRUE(s.pretransforms().empty());
  Outputs r = run(c, s);
  EXPECT_TRUE(has(r.ir, "conv.wino_weights")) << r.ir;
  EXPECT_TRUE(has(r.ir, "x.global[")) << r.ir;
  EXPECT_TRUE(has(r.ir, "conv.wino_output[")) << r.ir;
  expect_all_close(c, r);
}

TEST(Winograd, AutoScheduleKeepsFewChannelsAndWhenAskedDirect) {
  Conv few = conv_nhwc(8, 48, 8, 8);
  EXPECT_FALSE(has(to_string(lower(auto_schedule({few.out}), {few.x, few.w, few.out}, "f").body), "wino")) << "8 in";
  Conv c = conv_nhwc(32, 32, 8, 8);
  AutoScheduleOptions o;
  o.winograd = false;
  o.constant_inputs = {c.w};
  Schedule s = auto_schedule({c.out}, o);
  for (const Pretransform& p : s.pretransforms()) EXPECT_FALSE(p.computed.defined());
  EXPECT_FALSE(has(to_string(lower(s, {c.x, c.w, c.out}, "f").body), "wino"));
}

TEST(Winograd, SearchWithConstantWeights) {
  // The search's configs and its float64 reference take the transformed weights (NCHW:
  // the reference makes the same copies).
  Conv c = conv_nchw(1, 16, 32, 8, 8);
  AutoScheduleOptions o;
  o.threads = 1;
  o.trials = 3;
  o.constant_inputs = {c.w};
  Schedule s = auto_schedule({c.out}, o);
  ASSERT_EQ(s.pretransforms().size(), 1u);
  EXPECT_TRUE(s.pretransforms()[0].computed.defined());
  expect_all_close(c, run(c, s));
}

TEST(Winograd, Errors) {
  Conv c = conv_nchw(1, 4, 4, 6, 6);
  Schedule s = create_schedule({c.out});
  expect_error([&] { s.winograd(Tensor()); }, {"winograd", "undefined"});
  expect_error([&] { s.winograd(c.x); }, {"winograd", "'x'", "placeholder"});
  Tensor elsewhere = placeholder({4}, Float(32), "elsewhere");
  expect_error([&] { s.winograd(elsewhere); }, {"winograd", "'elsewhere'", "not part of this schedule"});

  auto not_conv = [](const Tensor& t, std::initializer_list<const char*> why) {
    Schedule t_s = create_schedule({t});
    expect_error([&] { t_s.winograd(t); }, why);
  };
  Tensor a = placeholder({8, 8}, Float(32), "a"), b = placeholder({8, 8}, Float(32), "b");
  IterVar k = reduce_axis({0, 8}, "k");
  not_conv(compute(
               {8, 8}, [&](Expr i, Expr j) { return sum(a(i, k) * b(k, j), {k}); }, "mm"),
           {"winograd: stage 'mm' is not a 3x3 stride-1 convolution", "1 reduction axes"});
  not_conv(compute(
               {8, 8}, [&](Expr i, Expr j) { return a(i, j) + 1.0f; }, "plain"),
           {"'plain'", "not a sum of one value"});
  Tensor x = c.x, w = c.w;
  auto conv_with = [&](int taps, int stride, int dilation, const std::string& name) {
    IterVar rc = reduce_axis({0, 4}, "rc"), rh = reduce_axis({0, taps}, "rh"), rw = reduce_axis({0, taps}, "rw");
    Tensor wt = placeholder({4, 4, taps, taps}, Float(32), "wt");
    return compute(
        {1, 4, 2, 2},
        [&](Expr n, Expr co, Expr h, Expr ww) {
          return sum(x(n, rc, h * stride + rh * dilation, ww * stride + rw) * wt(co, rc, rh, rw), {rc, rh, rw});
        },
        name);
  };
  not_conv(conv_with(3, 2, 1, "strided"), {"'strided'", "its input 'x' is read at", "not at an axis plus a tap"});
  not_conv(conv_with(3, 1, 2, "dilated"), {"'dilated'", "not at an axis plus a tap"});
  not_conv(conv_with(5, 1, 1, "five"), {"'five'", "window 'rh' has 5 taps", "takes 3"});
  IterVar rc = reduce_axis({0, 4}, "rc"), rh = reduce_axis({0, 3}, "rh"), rw = reduce_axis({0, 3}, "rw");
  not_conv(
      compute(
          {1, 4, 4, 4},
          [&](Expr n, Expr co, Expr h, Expr ww) {
            return sum(x(n, rc, h + rh, ww + rw) * w(co, rc, rh, rh), {rc, rh, rw});
          },
          "same_tap"),
      {"'same_tap'", "weights 'w' are read at rh in dimension 3", "a tap, the input channel or an output channel"});
  not_conv(compute(
               {1, 4, 4, 4},
               [&](Expr n, Expr, Expr h, Expr ww) {
                 return sum(x(n, rc, h + rh, ww + rw) * w(h, rc, rh, rw), {rc, rh, rw});
               },
               "weights_at_h"),
           {"'weights_at_h'", "weights 'w' are read at k in dimension 0", "output channel"});
  not_conv(compute(
               {1, 4, 4, 4},
               [&](Expr n, Expr co, Expr h, Expr ww) {
                 return sum(x(n, rc, h + rh - 1, ww + rw) * w(co, rc, rh, rw), {rc, rh, rw});
               },
               "shifted"),
           {"'shifted'", "its input 'x' is read at", "before its start"});
  Tensor xi = placeholder({1, 4, 6, 6}, Int(32), "xi"), wi = placeholder({4, 4, 3, 3}, Int(32), "wi");
  not_conv(compute(
               {1, 4, 4, 4},
               [&](Expr n, Expr co, Expr h, Expr ww) {
                 return sum(xi(n, rc, h + rh, ww + rw) * wi(co, rc, rh, rw), {rc, rh, rw});
               },
               "ints"),
           {"'ints'", "of type int32", "float type"});

  Schedule scheduled = create_schedule({c.out});
  scheduled[c.out].split(c.out.op()->axis[2], 2);
  expect_error([&] { scheduled.winograd(c.out); }, {"winograd", "'conv'", "already has a loop schedule"});
}

TEST(Winograd, PrecomputeErrors) {
  Conv c = conv_nchw(1, 4, 4, 6, 6);
  Schedule s = create_schedule({c.out});
  WinogradStages wg = s.winograd(c.out);
  expect_error([&] { s.precompute(Tensor()); }, {"precompute", "undefined"});
  expect_error([&] { s.precompute(c.w); }, {"precompute", "'w' is an input"});
  expect_error([&] { s.precompute(c.out); }, {"precompute", "'conv'", "an output"});
  expect_error([&] { s.precompute(wg.product); }, {"precompute", "'conv.wino_product' reads", "'conv.wino_input'"});
  Tensor doubled = compute(
      {4}, [&](Expr i) { return c.w(i, 0, 0, 0) * 2.0f; }, "doubled");
  Tensor both = compute(
      {4}, [&](Expr i) { return doubled(i) + c.w(0, i, 0, 0); }, "both");
  Schedule shared = create_schedule({both});
  expect_error([&] { shared.precompute(doubled); },
               {"precompute", "input 'w' is read by stage 'both' as well as by 'doubled'"});
  Tensor elsewhere = placeholder({4}, Float(32), "elsewhere");
  expect_error([&] { s.precompute(elsewhere); }, {"precompute", "'elsewhere'", "not part of this schedule"});
  Schedule scheduled = create_schedule({c.out});
  WinogradStages wg2 = scheduled.winograd(c.out);
  scheduled[wg2.weights].parallel(wg2.weights.op()->axis[0]);
  expect_error([&] { scheduled.precompute(wg2.weights); }, {"precompute", "already has a schedule"});
  Schedule packed = create_schedule({c.out});
  WinogradStages wg3 = packed.winograd(c.out);
  packed.pretransform(c.w, {1, 0, 2, 3});
  expect_error([&] { packed.precompute(wg3.weights); },
               {"precompute", "input 'w' is already taken pretransformed", "'w_1023'"});
}

}  // namespace
