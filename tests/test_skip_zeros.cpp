// Stage::skip_zeros and Schedule::split_phases: a transposed convolution written as TVM
// writes it (the input with zeros inserted between its pixels, then an ordinary
// convolution with the flipped kernel) visits only the nonzero taps, and computed by
// phases its points of one phase share their weights. Each kernel's interpret() is
// compared bit for bit with interpret() of te's default schedule (skipping a zero term
// leaves every partial sum as it was), its JIT build with both (within the fused
// multiply-adds the JIT contracts) and with a float64 transposed convolution; auto_schedule applies
// both; every refusal names what is missing.
#include <gtest/gtest.h>
#include <te/auto_schedule.h>
#include <te/te.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "test_util.h"

using namespace te;

namespace {

// out[n, h, w, co] (NHWC) = the transposed convolution of x (n, H, H, CI) with
// w (K, K, CI, CO), stride S, padding P, as TVM's te_workload writes it.
struct TransposedConv {
  int H, CI, CO, K, S, P;
  Tensor x, w, dilated, out;
  int B() const { return K - 1 - P; }
  int DH() const { return (H - 1) * S + 1 + 2 * B(); }
  int OH() const { return DH() - K + 1; }
};

TransposedConv transposed_conv(int H, int CI, int CO, int K, int S, int P) {
  TransposedConv c{H, CI, CO, K, S, P, {}, {}, {}, {}};
  const int B = c.B(), DH = c.DH(), OH = c.OH();
  c.x = placeholder({1, H, H, CI}, Float(32), "x");
  c.w = placeholder({K, K, CI, CO}, Float(32), "w");
  auto on_grid = [&](Expr y) { return y >= B && y < B + (H - 1) * S + 1 && truncmod(y - B, S) == 0; };
  c.dilated = compute(
      {1, DH, DH, CI},
      [&](Expr n, Expr y, Expr xx, Expr ch) {
        return if_then_else(on_grid(y) && on_grid(xx), c.x(n, truncdiv(y - B, S), truncdiv(xx - B, S), ch), 0.0f);
      },
      "dilated");
  IterVar rh = reduce_axis({0, K}, "rh"), rw = reduce_axis({0, K}, "rw"), rc = reduce_axis({0, CI}, "rc");
  c.out = compute(
      {1, OH, OH, CO},
      [&](Expr n, Expr h, Expr ww, Expr co) {
        return sum(c.dilated(n, h + rh, ww + rw, rc) * c.w(K - 1 - rh, K - 1 - rw, rc, co), {rh, rw, rc});
      },
      "t2d");
  return c;
}

// The transposed convolution in float64, scattered as its definition says:
// out[S * ih + kh - P] += x[ih] * w[kh].
std::vector<double> reference(const TransposedConv& c, const std::vector<float>& x, const std::vector<float>& w) {
  const int OH = c.OH();
  std::vector<double> out(size_t(OH) * OH * c.CO, 0.0);
  for (int ih = 0; ih < c.H; ++ih)
    for (int iw = 0; iw < c.H; ++iw)
      for (int kh = 0; kh < c.K; ++kh)
        for (int kw = 0; kw < c.K; ++kw) {
          const int oh = c.S * ih + kh - c.P, ow = c.S * iw + kw - c.P;
          if (oh < 0 || oh >= OH || ow < 0 || ow >= OH) continue;
          for (int ci = 0; ci < c.CI; ++ci)
            for (int co = 0; co < c.CO; ++co)
              out[(size_t(oh) * OH + ow) * c.CO + co] += double(x[(size_t(ih) * c.H + iw) * c.CI + ci]) *
                                                         double(w[((size_t(kh) * c.K + kw) * c.CI + ci) * c.CO + co]);
        }
  return out;
}

struct Outputs {
  std::vector<float> jit, interpreted, as_written;
  std::string ir;
};

// The scheduled kernel through the JIT and through interpret(), and te's default
// schedule (every product as written) through interpret(), on the same inputs.
Outputs run(const TransposedConv& c, const Schedule& s, const std::vector<float>& x, const std::vector<float>& w) {
  Outputs o;
  LoweredFunc f = lower(s, {c.x, c.w, c.out}, "t2d");
  o.ir = to_string(f.body);
  LoweredFunc ref = lower(create_schedule({c.out}), {c.x, c.w, c.out}, "t2d_default");
  NDArray xa = NDArray::from_vector(x, {1, c.H, c.H, c.CI}), wa = NDArray::from_vector(w, {c.K, c.K, c.CI, c.CO});
  auto call = [&](auto&& fn) {
    NDArray out = NDArray::empty({1, c.OH(), c.OH(), c.CO}, Float(32));
    fn(std::vector<Argument>{xa, wa, out});
    return out.to_vector<float>();
  };
  Module m = build(f);
  o.jit = call([&](const std::vector<Argument>& a) { m("t2d").call(a); });
  o.interpreted = call([&](const std::vector<Argument>& a) { interpret(f, a); });
  o.as_written = call([&](const std::vector<Argument>& a) { interpret(ref, a); });
  return o;
}

}  // namespace

TEST(SkipZeros, TransposedConvolutionVisitsOnlyItsNonzeroTaps) {
  // K divisible by S or not (then a `where` keeps the taps in range), strides 2 and 3.
  for (auto [K, S, P] : {std::tuple{4, 2, 1}, std::tuple{3, 2, 1}, std::tuple{5, 3, 2}, std::tuple{3, 3, 0}}) {
    SCOPED_TRACE(testing::Message() << "K " << K << " S " << S << " P " << P);
    TransposedConv c = transposed_conv(3, 4, 5, K, S, P);
    Schedule s = create_schedule({c.out});
    s[c.dilated].compute_inline();
    s[c.out].skip_zeros(c.dilated);
    const int steps = (K + S - 1) / S;
    std::vector<float> x = uniform_floats(size_t(c.H) * c.H * c.CI, 1),
                       w = uniform_floats(size_t(K) * K * c.CI * c.CO, 2);
    Outputs o = run(c, s, x, w);
    // (One step: the loop of extent 1 is gone.)
    EXPECT_EQ(has(o.ir, "for (rh.nz, 0, " + std::to_string(steps) + ")"), steps > 1) << o.ir;
    EXPECT_EQ(has(o.ir, "for (rw.nz, 0, " + std::to_string(steps) + ")"), steps > 1) << o.ir;
    EXPECT_FALSE(has(o.ir, "for (rh, ")) << o.ir;
    // The residue test of the inlined producer is gone: it holds at every tap visited.
    EXPECT_FALSE(has(o.ir, "% " + std::to_string(S) + ") == 0")) << o.ir;
    EXPECT_EQ(has(o.ir, "if ("), K % S != 0) << o.ir;  // the `where` of a partial last step
    std::vector<double> want = reference(c, x, w);
    for (size_t i = 0; i < want.size(); ++i) {
      // The zero terms skipped left every partial sum as it was: bit for bit.
      ASSERT_EQ(o.interpreted[i], o.as_written[i]) << "element " << i;
      // (The JIT contracts a * b + c into one fused multiply-add: not bit for bit.)
      ASSERT_NEAR(o.jit[i], o.interpreted[i], 1e-6) << "element " << i;
      ASSERT_NEAR(o.jit[i], want[i], 1e-5) << "element " << i;
    }
  }
}

TEST(SkipZeros, ProducerKeptInMemoryIsReadOnlyAtItsNonzeros) {
  TransposedConv c = transposed_conv(4, 3, 2, 4, 2, 1);
  Schedule s = create_schedule({c.out});
  s[c.out].skip_zeros(c.dilated);  // dilated stays a stage of its own
  std::vector<float> x = uniform_floats(size_t(c.H) * c.H * c.CI, 3), w = uniform_floats(size_t(16) * c.CI * c.CO, 4);
  Outputs o = run(c, s, x, w);
  EXPECT_TRUE(has(o.ir, "allocate dilated")) << o.ir;
  for (size_t i = 0; i < o.jit.size(); ++i) {
    ASSERT_EQ(o.interpreted[i], o.as_written[i]) << "element " << i;
    ASSERT_NEAR(o.jit[i], o.interpreted[i], 1e-6) << "element " << i;
  }
}

// The one difference from the definition as written, documented: 0 * inf is NaN there,
// and skipped here (as in PyTorch's conv_transpose2d, which never multiplies the zeros).
TEST(SkipZeros, InfiniteWeightsAtSkippedTapsAreNotMultipliedByZero) {
  TransposedConv c = transposed_conv(2, 1, 1, 2, 2, 0);
  Schedule s = create_schedule({c.out});
  s[c.dilated].compute_inline();
  s[c.out].skip_zeros(c.dilated);
  std::vector<float> x(4, 1.0f), w(4, std::numeric_limits<float>::infinity());
  Outputs o = run(c, s, x, w);
  for (size_t i = 0; i < o.jit.size(); ++i) {
    EXPECT_TRUE(std::isnan(o.as_written[i])) << "element " << i;
    EXPECT_EQ(o.jit[i], std::numeric_limits<float>::infinity()) << "element " << i;
  }
}

TEST(SkipZeros, Errors) {
  TransposedConv c = transposed_conv(3, 2, 2, 3, 2, 1);
  auto fresh = [&] { return create_schedule({c.out}); };
  expect_error([&] { fresh()[c.out].skip_zeros(Tensor()); }, {"skip_zeros: undefined producer tensor", "'t2d'"});
  expect_error([&] { fresh()[c.out].skip_zeros(c.x); }, {"'x' is not an element-wise compute"});
  expect_error([&] { fresh()[c.dilated].skip_zeros(c.x); }, {"stage 'dilated' is not a sum"});
  {
    Schedule s = fresh();
    s[c.out].split(c.out.reduce_axis(0), 2);
    expect_error([&] { s[c.out].skip_zeros(c.dilated); },
                 {"reduction axis 'rh' of stage 't2d' is already split, fused or annotated", "call skip_zeros first"});
  }
  Tensor a = placeholder({8}, Float(32), "a");
  IterVar r = reduce_axis({0, 4}, "r");
  Tensor holes = compute(
      {8}, [&](Expr i) { return if_then_else(i % 2 == 0, a(i), 0.0f); }, "holes");
  Tensor edges = compute(
      {8}, [&](Expr i) { return if_then_else(i < 6, a(i), 0.0f); }, "edges");
  Tensor doubled = compute(
      {8}, [&](Expr i) { return a(i) * 2.0f; }, "doubled");
  auto refuse = [&](Tensor out, Tensor producer, std::initializer_list<const char*> words) {
    Schedule s = create_schedule({out});
    expect_error([&] { s[out].skip_zeros(producer); }, words);
  };
  refuse(compute(
             {4}, [&](Expr i) { return max(holes(i + r) * a(i), {r}); }, "m"),
         holes, {"stage 'm' is not a sum"});
  refuse(compute(
             {4}, [&](Expr i) { return sum(holes(i + r) + a(i), {r}); }, "s"),
         holes, {"the value stage 's' sums is not a product with 'holes' as a factor"});
  refuse(compute(
             {4}, [&](Expr i) { return sum(holes(i + r) * holes(r), {r}); }, "s"),
         holes, {"stage 's' reads 'holes' more than once"});
  {
    Tensor plain = compute(
        {4}, [&](Expr i) { return sum(a(i + r), {r}); }, "s");
    Schedule s = create_schedule({plain, holes});
    expect_error([&] { s[plain].skip_zeros(holes); }, {"stage 's' does not read 'holes'"});
    expect_error([&] { s[plain].skip_zeros(edges); }, {"tensor 'edges' is not part of this schedule"});
  }
  refuse(compute(
             {4}, [&](Expr i) { return sum(doubled(i + r), {r}); }, "s"),
         doubled, {"'doubled' is not of the form if_then_else(cond, value, 0)"});
  refuse(compute(
             {4}, [&](Expr i) { return sum(edges(i + r) * a(r), {r}); }, "s"),
         edges, {"the condition of 'edges' has no test `y % S == 0`", "stage 's'"});
  refuse(compute(
             {4}, [&](Expr i) { return sum(holes(i * 2 + r * 2) * a(r), {r}); }, "s"),
         holes, {"the condition of 'holes' has no test"});
}

TEST(SplitPhases, SameValuesComputedPhaseByPhase) {
  // A 7 x 6 stencil sum split by phases of rows (7: a partial last phase) and of both axes.
  Tensor a = placeholder({9, 6}, Float(32), "a");
  IterVar r = reduce_axis({0, 3}, "r");
  Tensor out = compute(
      {7, 6}, [&](Expr i, Expr j) { return sum(a(i + r, j) * a(r, j), {r}); }, "out");
  Tensor plus = compute(
      {7, 6}, [&](Expr i, Expr j) { return a(i, j) + 1.0f; }, "plus");
  NDArray aa = NDArray::from_vector(uniform_floats(54, 5), {9, 6});
  for (bool both : {false, true})
    for (Tensor t : {out, plus}) {
      SCOPED_TRACE(testing::Message() << t.name() << (both ? " by rows and columns" : " by rows"));
      Schedule s = create_schedule({t});
      std::vector<IterVar> axes{t.axis(0)};
      if (both) axes.push_back(t.axis(1));
      Tensor phases = s.split_phases(t, axes, 2);
      EXPECT_EQ(phases.name(), t.name() + ".phases");
      LoweredFunc f = lower(s, {a, t}, "phased");
      const std::string ir = to_string(f.body);
      EXPECT_TRUE(has(ir, "for (i.phase, 0, 2)")) << ir;
      EXPECT_TRUE(has(ir, "for (i.coarse, 0, 4)")) << ir;
      EXPECT_EQ(has(ir, "for (j.coarse, 0, 3)"), both) << ir;
      NDArray got = NDArray::empty({7, 6}, Float(32)), interpreted = NDArray::empty({7, 6}, Float(32)),
              want = NDArray::empty({7, 6}, Float(32));
      build(f)("phased").call({aa, got});
      interpret(f, {aa, interpreted});
      interpret(lower(create_schedule({t}), {a, t}, "plain"), {aa, want});
      EXPECT_EQ(interpreted.to_vector<float>(), want.to_vector<float>());
      std::vector<float> g = got.to_vector<float>(), w = want.to_vector<float>();
      for (size_t i = 0; i < w.size(); ++i) ASSERT_NEAR(g[i], w[i], 1e-6) << "element " << i;
    }
}

TEST(SplitPhases, InnermostAxisGoesLast) {
  Tensor a = placeholder({4, 8}, Float(32), "a");
  Tensor t = compute(
      {4, 8}, [&](Expr c, Expr i) { return a(c, i) * 3.0f; }, "t");
  Schedule s = create_schedule({t});
  Tensor phases = s.split_phases(t, {t.axis(1)}, 2, t.axis(0));
  ASSERT_EQ(phases.op()->shape.size(), 3u);
  EXPECT_EQ(to_string(phases.op()->shape[0]), "2");  // i.phase, i.coarse, c
  EXPECT_EQ(to_string(phases.op()->shape[1]), "4");
  EXPECT_EQ(to_string(phases.op()->shape[2]), "4");
  LoweredFunc f = lower(s, {a, t}, "phased");
  NDArray aa = NDArray::from_vector(uniform_floats(32, 6), {4, 8}), got = NDArray::empty({4, 8}, Float(32));
  build(f)("phased").call({aa, got});
  std::vector<float> av = aa.to_vector<float>(), gv = got.to_vector<float>();
  for (size_t i = 0; i < av.size(); ++i) ASSERT_EQ(gv[i], av[i] * 3.0f) << "element " << i;
}

TEST(SplitPhases, Errors) {
  Tensor a = placeholder({8, 8}, Float(32), "a");
  Tensor t = compute(
      {8, 8}, [&](Expr i, Expr j) { return a(i, j) + 1.0f; }, "t");
  Tensor u = compute(
      {8, 8}, [&](Expr i, Expr j) { return t(i, j) * 2.0f; }, "u");
  auto fresh = [&] { return create_schedule({u}); };
  expect_error([&] { fresh().split_phases(Tensor(), {t.axis(0)}, 2); }, {"split_phases: undefined tensor"});
  expect_error([&] { fresh().split_phases(a, {t.axis(0)}, 2); }, {"stage 'a' is a placeholder"});
  expect_error([&] { fresh().split_phases(t, {t.axis(0)}, 1); }, {"stride 1 for stage 't' must be at least 2"});
  expect_error([&] { fresh().split_phases(t, {}, 2); }, {"no axes given for stage 't'"});
  expect_error([&] { fresh().split_phases(t, {u.axis(0)}, 2); }, {"'i' is not an axis of stage 't'"});
  expect_error([&] { fresh().split_phases(t, {t.axis(0), t.axis(0)}, 2); }, {"axis 'i' given twice"});
  expect_error([&] { fresh().split_phases(t, {t.axis(0)}, 2, t.axis(0)); },
               {"innermost axis 'i' is not an axis of stage 't' that is not split"});
  {
    Schedule s = fresh();
    s[t].split(t.axis(1), 4);
    expect_error([&] { s.split_phases(t, {t.axis(0)}, 2); },
                 {"stage 't' already has a loop schedule", "split it by phases first"});
  }
  {
    Schedule s = fresh();
    s[t].compute_at(s[u], u.axis(0));
    expect_error([&] { s.split_phases(u, {u.axis(0)}, 2); },
                 {"stage 't' is computed at a loop of stage 'u', which split_phases removes"});
  }
}

TEST(AutoSchedule, TransposedConvolutionSkipsZerosByPhase) {
  TransposedConv c = transposed_conv(4, 8, 32, 4, 2, 1);
  std::vector<float> x = uniform_floats(size_t(c.H) * c.H * c.CI, 7), w = uniform_floats(size_t(16) * c.CI * c.CO, 8);
  for (bool skip : {true, false}) {
    SCOPED_TRACE(skip ? "skip_zeros" : "as written");
    AutoScheduleOptions o;
    o.threads = 2;
    o.skip_zeros = skip;
    Outputs got = run(c, auto_schedule({c.out}, o), x, w);
    EXPECT_EQ(has(got.ir, "rh.nz"), skip) << got.ir;
    EXPECT_EQ(has(got.ir, "t2d.phases"), skip) << got.ir;
    std::vector<double> want = reference(c, x, w);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got.jit[i], want[i], 1e-4) << "element " << i;
  }
}
