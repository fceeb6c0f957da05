// Stage::skip_padding: a convolution over a zero-padded input (the padding a stage of its
// own, as TVM writes it) narrows its reduction loops to the taps inside the input, the
// bounds computed from the output position. Each kernel's interpret() is compared bit for
// bit with interpret() of te's default schedule (a skipped term is a zero that left the
// partial sum as it was), its JIT build within the fused multiply-adds the JIT contracts,
// and a float64 convolution in plain C++; every refusal names what is missing.
#include <gtest/gtest.h>
#include <te/auto_schedule.h>
#include <te/te.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cuda_emulation/harness.h"
#include "test_util.h"

using namespace te;

namespace {

// out[i] = sum_r pad[S * i + D * r] * w[r] (flipped: pad[S * i + D * (K - 1 - r)]), pad
// being x with P zeros on each side.
struct Conv1d {
  int N, K, S, D, P;
  bool flipped;
  Tensor x, w, pad, out;
  int OW() const { return (N + 2 * P - D * (K - 1) - 1) / S + 1; }
  int tap(int i, int r) const { return S * i + D * (flipped ? K - 1 - r : r); }
};

Conv1d conv1d(int N, int K, int S, int D, int P, bool flipped) {
  Conv1d c{N, K, S, D, P, flipped, {}, {}, {}, {}};
  c.x = placeholder({N}, Float(32), "x");
  c.w = placeholder({K}, Float(32), "w");
  c.pad = compute(
      {N + 2 * P}, [&](Expr y) { return if_then_else(y >= P && y < N + P, c.x(y - P), 0.0f); }, "pad");
  IterVar r = reduce_axis({0, K}, "r");
  c.out = compute(
      {c.OW()},
      [&](Expr i) {
        Expr at = flipped ? S * i + D * (K - 1 - r) : S * i + D * r;
        return sum(c.pad(at) * c.w(r), {r});
      },
      "out");
  return c;
}

std::vector<double> reference(const Conv1d& c, const std::vector<float>& x, const std::vector<float>& w) {
  std::vector<double> out(size_t(c.OW()), 0.0);
  for (int i = 0; i < c.OW(); ++i)
    for (int r = 0; r < c.K; ++r) {
      const int y = c.tap(i, r) - c.P;
      if (y >= 0 && y < c.N) out[size_t(i)] += double(x[size_t(y)]) * double(w[size_t(r)]);
    }
  return out;
}

struct Outputs {
  std::vector<float> jit, interpreted, as_written;
  std::string ir;
};

// The scheduled kernel through interpret() (and the JIT when `jit`), and te's default
// schedule (every product as written) through interpret(), on the same inputs.
Outputs run(const std::vector<Tensor>& args, const Schedule& s, const std::vector<NDArray>& inputs, bool jit = true) {
  Outputs o;
  LoweredFunc f = lower(s, args, "f");
  o.ir = to_string(f.body);
  LoweredFunc ref = lower(create_schedule({args.back()}), args, "as_written");
  auto call = [&](auto&& fn) {
    std::vector<Expr> shape = args.back().shape();
    std::vector<int64_t> dims;
    for (const Expr& e : shape) dims.push_back(*as_const_int(e));
    NDArray out = NDArray::empty(dims, Float(32));
    std::vector<Argument> a(inputs.begin(), inputs.end());
    a.push_back(out);
    fn(a);
    return out.to_vector<float>();
  };
  if (jit) {
    Module m = build(f);
    o.jit = call([&](const std::vector<Argument>& a) { m("f").call(a); });
  }
  o.interpreted = call([&](const std::vector<Argument>& a) { interpret(f, a); });
  o.as_written = call([&](const std::vector<Argument>& a) { interpret(ref, a); });
  return o;
}

}  // namespace

TEST(SkipPadding, StridedConvolutionVisitsOnlyTheTapsInsideItsInput) {
  // C3D's depth: 16 planes, a window of 7, stride 2, padding 3.
  Conv1d c = conv1d(16, 7, 2, 1, 3, false);
  Schedule s = create_schedule({c.out});
  s[c.out].skip_padding(c.pad);
  std::vector<float> x = uniform_floats(16, 1), w = uniform_floats(7, 2);
  Outputs o = run({c.x, c.w, c.out}, s, {NDArray::from_vector(x, {16}), NDArray::from_vector(w, {7})});
  // The window starts where the padding ends and stops where it starts again.
  EXPECT_TRUE(has(o.ir, "for (r, 0, (min((19 - (i_1 * 2)), 7) - max((3 - (i_1 * 2)), 0)))")) << o.ir;
  EXPECT_TRUE(has(o.ir, "let idx = max((3 - (i_1 * 2)), 0);")) << o.ir;
  EXPECT_TRUE(has(o.ir, "w[(idx + r)]")) << o.ir;
  std::vector<double> want = reference(c, x, w);
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(o.interpreted[i], o.as_written[i]) << "element " << i;
    ASSERT_NEAR(o.jit[i], o.interpreted[i], 1e-6) << "element " << i;
    ASSERT_NEAR(o.jit[i], want[i], 1e-5) << "element " << i;
  }
}

// Windows read backwards (k = -1), dilated (k = D), strides, and paddings wider than the
// window (outputs whose whole window is padding: an empty loop, the sum 0); the sum at
// the root, or in a copy per output with its weights copied at the same loop.
TEST(SkipPadding, EveryWindowShapeAgreesWithTheDefinitionBitForBit) {
  std::mt19937 rng(7);
  int jit_runs = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const int N = 1 + int(rng() % 12), K = 1 + int(rng() % 6), S = 1 + int(rng() % 3), D = 1 + int(rng() % 3),
              P = int(rng() % 9);
    const bool flipped = rng() % 2 == 0;
    if (N + 2 * P < D * (K - 1) + 1) continue;
    SCOPED_TRACE(testing::Message() << "N " << N << " K " << K << " S " << S << " D " << D << " P " << P
                                    << (flipped ? " flipped" : ""));
    Conv1d c = conv1d(N, K, S, D, P, flipped);
    Schedule s = create_schedule({c.out});
    if (trial % 2 == 0) {
      s[c.out].skip_padding(c.pad);
    } else {  // the sum in a copy per output, its weights copied at the same loop
      Tensor local = s.cache_write(c.out, "local");
      s[local].compute_at(s[c.out], c.out.axis(0));
      s[local].skip_padding(c.pad);
      s[s.cache_read(c.w, "global", {local})].compute_at(s[c.out], c.out.axis(0));
    }
    std::vector<float> x = uniform_floats(size_t(N), trial), w = uniform_floats(size_t(K), trial + 1000);
    const bool jit = trial % 8 == 0;
    jit_runs += jit;
    Outputs o = run({c.x, c.w, c.out}, s, {NDArray::from_vector(x, {N}), NDArray::from_vector(w, {K})}, jit);
    std::vector<double> want = reference(c, x, w);
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(o.interpreted[i], o.as_written[i]) << "element " << i << "\n" << o.ir;
      ASSERT_NEAR(o.interpreted[i], want[i], 1e-5) << "element " << i;
      if (jit) {
        ASSERT_NEAR(o.jit[i], o.interpreted[i], 1e-6) << "element " << i;
      }
    }
  }
  EXPECT_GT(jit_runs, 5);
}

// The one difference from the definition, as with skip_zeros: 0 * inf is NaN there and
// never computed here. With every weight infinite, exactly the outputs whose window
// reaches the padding differ.
TEST(SkipPadding, InfiniteWeightsAtSkippedTapsAreNotMultipliedByZero) {
  Conv1d c = conv1d(8, 3, 1, 1, 1, false);
  Schedule s = create_schedule({c.out});
  s[c.out].skip_padding(c.pad);
  std::vector<float> x(8, 1.0f), w(3, std::numeric_limits<float>::infinity());
  Outputs o = run({c.x, c.w, c.out}, s, {NDArray::from_vector(x, {8}), NDArray::from_vector(w, {3})});
  for (size_t i = 0; i < o.jit.size(); ++i) {
    const bool edge = i == 0 || i + 1 == o.jit.size();
    EXPECT_EQ(std::isnan(o.as_written[i]), edge) << "element " << i;
    EXPECT_EQ(o.jit[i], std::numeric_limits<float>::infinity()) << "element " << i;
  }
}

// A 3-D convolution scheduled as auto_schedule's rules do (C3D, shrunk): the padding kept
// in memory, a register tile of 4 output columns x the channels, the window's two outer
// axes narrowed (their loops run outside the axes their bounds use: no guard), the
// innermost one unrolled as written.
TEST(SkipPadding, TiledThreeDimensionalConvolution) {
  const int D = 6, H = 9, CI = 2, CO = 16, K = 5, S = 2, P = 2;
  const int OD = (D + 2 * P - K) / S + 1, OH = (H + 2 * P - K) / S + 1;
  Tensor x = placeholder({D, H, H, CI}, Float(32), "x"), w = placeholder({K, K, K, CI, CO}, Float(32), "w");
  Tensor pad = compute(
      {D + 2 * P, H + 2 * P, H + 2 * P, CI},
      [&](Expr d, Expr h, Expr ww, Expr c) {
        Expr inside = d >= P && d < D + P && h >= P && h < H + P && ww >= P && ww < H + P;
        return if_then_else(inside, x(d - P, h - P, ww - P, c), 0.0f);
      },
      "pad");
  IterVar rd = reduce_axis({0, K}, "rd"), rh = reduce_axis({0, K}, "rh"), rw = reduce_axis({0, K}, "rw"),
          rc = reduce_axis({0, CI}, "rc");
  Tensor out = compute(
      {OD, OH, OH, CO},
      [&](Expr d, Expr h, Expr ww, Expr co) {
        return sum(pad(d * S + rd, h * S + rh, ww * S + rw, rc) * w(rd, rh, rw, rc, co), {rd, rh, rw, rc});
      },
      "c3d");
  Schedule s = create_schedule({out});
  Stage st = s[out];
  st.skip_padding(pad, {rd, rh});
  IterVar nrd = st->op->reduce_axis[0], nrh = st->op->reduce_axis[1];
  ASSERT_EQ(nrd.name(), "rd");
  auto [wo, wi] = st.split(out.axis(2), 4);
  st.reorder({out.axis(0), out.axis(1), wo, nrd, nrh, rw, rc, wi, out.axis(3)});
  st.unroll(rc);
  st.unroll(wi);
  st.vectorize(out.axis(3));
  std::vector<float> xv = uniform_floats(size_t(D) * H * H * CI, 5),
                     wv = uniform_floats(size_t(K) * K * K * CI * CO, 6);
  Outputs o =
      run({x, w, out}, s, {NDArray::from_vector(xv, {D, H, H, CI}), NDArray::from_vector(wv, {K, K, K, CI, CO})});
  EXPECT_TRUE(has(o.ir, "for (rd, 0, (min((8 - (i_1 * 2)), 5) - max((2 - (i_1 * 2)), 0)))")) << o.ir;
  EXPECT_TRUE(has(o.ir, "for (rw, 0, 5)")) << o.ir;
  EXPECT_FALSE(has(o.ir, "likely")) << o.ir;  // no guard: the bounds use outer loops only
  for (size_t i = 0; i < o.interpreted.size(); ++i) {
    ASSERT_EQ(o.interpreted[i], o.as_written[i]) << "element " << i;
    ASSERT_NEAR(o.jit[i], o.interpreted[i], 1e-5) << "element " << i;
  }
}

// A narrowed axis whose loop runs inside an axis its bounds use runs to the largest bound,
// each point guarded to its own taps: still exact.
TEST(SkipPadding, NarrowedLoopInsideTheAxisItsBoundsUse) {
  Conv1d c = conv1d(10, 5, 1, 1, 2, false);
  Schedule s = create_schedule({c.out});
  s[c.out].skip_padding(c.pad);
  IterVar r = s[c.out]->op->reduce_axis[0];
  s[c.out].reorder({r, c.out.axis(0)});
  std::vector<float> x = uniform_floats(10, 8), w = uniform_floats(5, 9);
  Outputs o = run({c.x, c.w, c.out}, s, {NDArray::from_vector(x, {10}), NDArray::from_vector(w, {5})});
  EXPECT_TRUE(has(o.ir, "likely")) << o.ir;
  for (size_t i = 0; i < o.interpreted.size(); ++i) {
    ASSERT_EQ(o.interpreted[i], o.as_written[i]) << "element " << i;
    ASSERT_NEAR(o.jit[i], o.interpreted[i], 1e-6) << "element " << i;
  }
}

// A stage computed at an output loop outside a narrowed axis (a copy of the weights per
// output) holds the taps that output's window visits: its region follows the narrowed
// bounds at that output (found by the search on C2D, where such a copy read rows past
// its region before).
TEST(SkipPadding, StagesComputedOutsideTheNarrowedLoopHoldItsTaps) {
  for (bool flipped : {false, true}) {
    Conv1d c = conv1d(12, 7, 2, 1, 3, flipped);
    Schedule s = create_schedule({c.out});
    // As auto_schedule's tiles are made: the sum in a local copy computed per output,
    // its weights copied at the same loop.
    Tensor local = s.cache_write(c.out, "local");
    s[local].compute_at(s[c.out], c.out.axis(0));
    s[local].skip_padding(c.pad);
    Tensor wc = s.cache_read(c.w, "global", {local});
    s[wc].compute_at(s[c.out], c.out.axis(0));
    std::vector<float> x = uniform_floats(12, 31), w = uniform_floats(7, 32);
    Outputs o = run({c.x, c.w, c.out}, s, {NDArray::from_vector(x, {12}), NDArray::from_vector(w, {7})});
    std::vector<double> want = reference(c, x, w);
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(o.interpreted[i], o.as_written[i]) << "element " << i << "\n" << o.ir;
      ASSERT_NEAR(o.jit[i], want[i], 1e-5) << "element " << i;
    }
  }
}

// A copy of the padding (a cache_read, an input read by phase) has its zeros: its
// condition is the padding's at the copy's index. Here the copy reverses the padded row.
TEST(SkipPadding, ACopyOfThePaddingHasItsZeros) {
  Conv1d c = conv1d(11, 5, 2, 1, 2, false);
  const int L = 11 + 2 * 2;
  Tensor reversed = compute(
      {L}, [&](Expr y) { return c.pad(L - 1 - y); }, "reversed");
  IterVar r = reduce_axis({0, 5}, "r");
  Tensor out = compute(
      {c.OW()}, [&](Expr i) { return sum(reversed(L - 1 - (2 * i + r)) * c.w(r), {r}); }, "out");
  Schedule s = create_schedule({out});
  s[out].skip_padding(reversed);
  std::vector<float> x = uniform_floats(11, 41), w = uniform_floats(5, 42);
  Outputs o = run({c.x, c.w, out}, s, {NDArray::from_vector(x, {11}), NDArray::from_vector(w, {5})});
  EXPECT_TRUE(has(o.ir, "for (r, 0, (min(")) << o.ir;
  std::vector<double> want = reference(c, x, w);
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(o.interpreted[i], o.as_written[i]) << "element " << i;
    ASSERT_NEAR(o.jit[i], want[i], 1e-5) << "element " << i;
  }
}

TEST(SkipPadding, Errors) {
  Conv1d c = conv1d(8, 3, 1, 1, 1, false);
  auto fresh = [&] { return create_schedule({c.out}); };
  expect_error([&] { fresh()[c.out].skip_padding(Tensor()); }, {"skip_padding: undefined producer tensor", "'out'"});
  expect_error([&] { fresh()[c.out].skip_padding(c.x); }, {"skip_padding: 'x' is not an element-wise compute"});
  {
    Tensor doubled = compute(
        {8 + 2}, [&](Expr y) { return c.pad(y) * 2.0f; }, "doubled");
    IterVar q = reduce_axis({0, 3}, "q");
    Tensor s2 = compute(
        {8}, [&](Expr i) { return sum(doubled(i + q) * c.w(q), {q}); }, "s2");
    Schedule s = create_schedule({s2});
    expect_error([&] { s[s2].skip_padding(doubled); },
                 {"'doubled' is not of the form if_then_else(cond, value, 0), nor a copy of one"});
  }
  expect_error([&] { fresh()[c.pad].skip_padding(c.x); }, {"stage 'pad' is not a sum"});
  expect_error([&] { fresh()[c.out].skip_padding(c.pad, {c.out.axis(0)}); },
               {"skip_padding: 'i' is not a reduction axis of stage 'out'"});
  {
    Schedule s = fresh();
    s[c.out].split(c.out.reduce_axis(0), 2);
    expect_error([&] { s[c.out].skip_padding(c.pad); },
                 {"reduction axis 'r' of stage 'out' is already split, fused or annotated",
                  "call skip_padding before scheduling it"});
  }
  {
    Schedule s = fresh();
    s[c.pad].compute_at(s[c.out], c.out.reduce_axis(0));
    expect_error([&] { s[c.out].skip_padding(c.pad); },
                 {"stage 'pad' is computed at reduction axis 'r' of stage 'out'", "before compute_at"});
  }
  {
    // A narrowed loop has bounds of the outputs: unrolling it is refused when lowering.
    Schedule s = fresh();
    s[c.out].skip_padding(c.pad);
    s[c.out].unroll(s[c.out]->op->reduce_axis[0]);
    expect_error(
        [&] {
          (void)lower(s, {c.x, c.w, c.out}, "f");
        },
        {"stage 'out' unrolls axis 'r', whose extent", "is not a constant"});
  }
  Tensor a = placeholder({8}, Float(32), "a");
  IterVar r = reduce_axis({0, 4}, "r"), q = reduce_axis({0, 2}, "q");
  Tensor holes = compute(
      {8}, [&](Expr i) { return if_then_else(i % 2 == 0, a(i), 0.0f); }, "holes");
  Tensor edges = compute(
      {8}, [&](Expr i) { return if_then_else(i < 6, a(i), 0.0f); }, "edges");
  auto refuse = [&](Tensor out, Tensor producer, std::vector<IterVar> axes, std::initializer_list<const char*> words) {
    Schedule s = create_schedule({out});
    expect_error([&] { s[out].skip_padding(producer, axes); }, words);
  };
  // Zeros off a lattice, not outside a box: skip_zeros' case.
  refuse(compute(
             {4}, [&](Expr i) { return sum(holes(i + r) * a(i), {r}); }, "s"),
         holes, {}, {"the condition of 'holes' has no test y >= lo or y < hi", "no padding to skip"});
  // Read at r * r: not k * r + e.
  refuse(compute(
             {2}, [&](Expr i) { return sum(edges(r * r) * a(i), {r}); }, "s"),
         edges, {}, {"no padding to skip"});
  // The bound of r uses another reduction axis.
  refuse(compute(
             {2},
             [&](Expr i) {
               return sum(edges(r + q) * a(i), {r, q});
             },
             "s"),
         edges, {r}, {"bounds no index that stage 's' reads at k * r + e for its reduction axis 'r'"});
  refuse(compute(
             {4}, [&](Expr i) { return sum(edges(i + r) + a(i), {r}); }, "s"),
         edges, {}, {"is not a product with 'edges' as a factor"});
}

namespace {

// A 3-D convolution over a zero-padded input, NDHWC, with a window of K taps per axis.
struct Conv3d {
  Tensor x, w, pad, out;
};

Conv3d conv3d(int D, int H, int CI, int CO, int K, int S, int P) {
  Conv3d c;
  const int OD = (D + 2 * P - K) / S + 1, OH = (H + 2 * P - K) / S + 1;
  c.x = placeholder({D, H, H, CI}, Float(32), "x");
  c.w = placeholder({K, K, K, CI, CO}, Float(32), "w");
  c.pad = compute(
      {D + 2 * P, H + 2 * P, H + 2 * P, CI},
      [&](Expr d, Expr h, Expr ww, Expr ch) {
        Expr inside = d >= P && d < D + P && h >= P && h < H + P && ww >= P && ww < H + P;
        return if_then_else(inside, c.x(d - P, h - P, ww - P, ch), 0.0f);
      },
      "pad");
  IterVar rd = reduce_axis({0, K}, "rd"), rh = reduce_axis({0, K}, "rh"), rw = reduce_axis({0, K}, "rw"),
          rc = reduce_axis({0, CI}, "rc");
  c.out = compute(
      {OD, OH, OH, CO},
      [&](Expr d, Expr h, Expr ww, Expr co) {
        return sum(c.pad(d * S + rd, h * S + rh, ww * S + rw, rc) * c.w(rd, rh, rw, rc, co), {rd, rh, rw, rc});
      },
      "c3d");
  return c;
}

std::string auto_scheduled_ir(const Conv3d& c, const std::map<std::string, int64_t>& decisions = {}) {
  AutoScheduleOptions o;
  o.threads = 1;
  o.winograd = false;  // the direct sum, whose windows skip_padding narrows
  return to_string(lower(auto_schedule_with({c.out}, o, decisions), {c.x, c.w, c.out}, "f").body);
}

}  // namespace

// auto_schedule narrows the window loops of more than 4 taps that run outside the output
// loops their bounds use (the depth window, the register tile inside it); the height
// window, whose output rows this small shape's tile holds, and windows of 3 keep their
// constant loops.
TEST(SkipPadding, AutoScheduleNarrowsTheLongWindowsOutsideTheTile) {
  Conv3d c = conv3d(16, 8, 1, 16, 7, 2, 3);
  AutoScheduleOptions o;
  o.threads = 1;
  o.winograd = false;  // the direct sum (winograd_1d would compute its width window)
  // (The padding in a pass of its own: per work item, its last item's rows are guarded.)
  Schedule s = auto_schedule_with({c.out}, o, {{"pad.work_items", 0}});
  std::vector<float> xv = uniform_floats(size_t(16) * 8 * 8, 11), wv = uniform_floats(size_t(343) * 16, 12);
  Outputs got =
      run({c.x, c.w, c.out}, s, {NDArray::from_vector(xv, {16, 8, 8, 1}), NDArray::from_vector(wv, {7, 7, 7, 1, 16})});
  EXPECT_TRUE(has(got.ir, "for (rd, 0, (min(")) << got.ir;
  EXPECT_TRUE(has(got.ir, "for (rh, 0, 7)")) << got.ir;  // its output rows are in the tile
  EXPECT_FALSE(has(got.ir, "likely")) << got.ir;
  for (size_t i = 0; i < got.jit.size(); ++i) {
    ASSERT_EQ(got.interpreted[i], got.as_written[i]) << "element " << i;
    ASSERT_NEAR(got.jit[i], got.interpreted[i], 1e-5) << "element " << i;
  }
  // The decision off (the search may choose it), or skip_zeros off: every tap.
  const std::string off = auto_scheduled_ir(c, {{"c3d.local.skip_padding", 0}});
  EXPECT_FALSE(has(off, "min(")) << off;
  o.skip_zeros = false;
  const std::string none = to_string(lower(auto_schedule({c.out}, o), {c.x, c.w, c.out}, "f").body);
  EXPECT_FALSE(has(none, "min(")) << none;
  // A window of 3 taps stays a constant loop.
  Conv3d small = conv3d(16, 8, 1, 16, 3, 1, 1);
  const std::string three = auto_scheduled_ir(small);
  EXPECT_FALSE(has(three, "max(")) << three;
}

// On the GPU, a thread per output: each thread's loop runs over its own taps. The CUDA
// emulation (the generated .cu on the CPU) equals interpret() bit for bit, and both equal
// the default schedule.
TEST(SkipPadding, CudaThreadsRunTheirOwnTaps) {
  Conv1d c = conv1d(40, 7, 2, 1, 3, false);
  Schedule s = create_schedule({c.out});
  s[c.pad].compute_inline();
  s[c.out].skip_padding(c.pad);
  auto [bx, tx] = s[c.out].split(c.out.axis(0), 8);
  s[c.out].bind(bx, thread_axis("blockIdx.x"));
  s[c.out].bind(tx, thread_axis("threadIdx.x"));
  LoweredFunc f = lower(s, {c.x, c.w, c.out}, "padded_conv");
  cuda_test::EmulatedProgram program;
  CudaModule m = build_cuda(f);
  EXPECT_NE(m.source().find("for (int32_t r = 0; r < te_min_i32("), std::string::npos) << m.source();
  program.add(m);
  std::string log;
  ASSERT_TRUE(program.build(&log)) << log;
  std::vector<float> x = uniform_floats(40, 21), w = uniform_floats(7, 22);
  auto args = [&] {
    return std::vector<Argument>{NDArray::from_vector(x, {40}), NDArray::from_vector(w, {7}),
                                 NDArray::empty({c.OW()}, Float(32))};
  };
  std::vector<Argument> emulated = args(), interpreted = args(), as_written = args();
  cuda_test::EmulatedRun r = program.run("padded_conv", f, emulated);
  ASSERT_EQ(r.error, 0) << r.output;
  interpret(f, interpreted);
  interpret(lower(create_schedule({c.out}), {c.x, c.w, c.out}, "as_written"), as_written);
  auto got = r.arrays[2].to_vector<float>(), want = interpreted[2].array().to_vector<float>(),
       same = as_written[2].array().to_vector<float>();
  std::vector<double> ref = reference(c, x, w);
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i], want[i]) << "element " << i;
    ASSERT_EQ(want[i], same[i]) << "element " << i;
    ASSERT_NEAR(got[i], ref[i], 1e-5) << "element " << i;
  }
}
