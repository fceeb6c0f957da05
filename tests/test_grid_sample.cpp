// te's grid_sample compute: every golden case through lower() + interpret() (and the JIT),
// the scalar reference on random inputs, and the error messages.
#include <gtest/gtest.h>

#include <te/te.h>
#include <te/ops/grid_sample.h>
#include <te/ops/grid_sample_cpu.h>
#include <te/ops/grid_sample_cuda.h>

#include <cmath>
#include <limits>
#include <random>

#include "gridsample_cases.h"
#include "gridsample_reference.h"
#include "test_util.h"

using namespace te;

namespace {

const std::string kDir = std::string(TE_TEST_DATA_DIR) + "/gridsample";

DataType dtype_named(const std::string& s) { return s == "float64" ? Float(64) : Float(32); }

std::vector<Expr> const_shape(const std::vector<int64_t>& s) {
  std::vector<Expr> out;
  for (int64_t v : s) out.push_back(Expr(static_cast<int>(v)));
  return out;
}

int64_t count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

enum class Sched { Default, Cpu, Cuda };
const Sched kAllSchedules[] = {Sched::Default, Sched::Cpu, Sched::Cuda};
const char* sched_name(Sched k) { return k == Sched::Default ? "default" : k == Sched::Cpu ? "cpu" : "cuda"; }

LoweredFunc lower_grid_sample(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& grid_shape, DataType t,
                              const ops::GridSampleOptions& o, Sched k = Sched::Default) {
  Tensor data = placeholder(const_shape(in_shape), t, "data");
  Tensor grid = placeholder(const_shape(grid_shape), t, "grid");
  Tensor out = ops::grid_sample(data, grid, o);
  Schedule s = create_schedule({out});
  if (k == Sched::Cpu) ops::schedule_grid_sample_cpu(s, out);
  if (k == Sched::Cuda) ops::schedule_grid_sample_cuda(s, out);
  return lower(s, {data, grid, out}, "grid_sample");
}

template <typename T>
void run_case(const GridSampleCase& c, bool nhwc, Sched k) {
  std::string dir = kDir + "/" + c.name;
  NDArray in = NDArray::load_npy(dir + (nhwc ? "/input_nhwc.npy" : "/input.npy"));
  NDArray grid = NDArray::load_npy(dir + "/grid.npy");
  NDArray expected = NDArray::load_npy(dir + (nhwc ? "/output_nhwc.npy" : "/output.npy"));
  ops::GridSampleOptions o;
  o.mode = c.mode;
  o.padding_mode = c.padding;
  o.align_corners = c.align_corners;
  o.layout = nhwc ? "NHWC" : "NCHW";
  LoweredFunc f = lower_grid_sample(in.shape(), grid.shape(), dtype_named(c.dtype), o, k);
  NDArray out = NDArray::empty(expected.shape(), in.dtype());
  interpret(f, {in, grid, out});
  expect_allclose(out.to_vector<T>(), expected.to_vector<T>(), c.atol, c.rtol,
                  c.name + " (interpret, " + sched_name(k) + " schedule)");
  NDArray jit_out = NDArray::empty(expected.shape(), in.dtype());
  build(f)("grid_sample")(in, grid, jit_out);
  expect_allclose(jit_out.to_vector<T>(), expected.to_vector<T>(), c.atol, c.rtol,
                  c.name + " (LLVM JIT, " + sched_name(k) + " schedule)");
}

}  // namespace

TEST(GridSample, EveryGoldenCaseThroughInterpretAndJit) {
  int ran = 0;
  for (const auto& c : load_gridsample_cases(kDir)) {
    if (c.informational) continue;
    SCOPED_TRACE(c.name);
    for (Sched k : kAllSchedules) {
      if (c.dtype == "float64")
        run_case<double>(c, false, k);
      else
        run_case<float>(c, false, k);
    }
    ++ran;
  }
  EXPECT_GT(ran, 100);
}

TEST(GridSample, ChannelsLastCases) {
  int ran = 0;
  for (const auto& c : load_gridsample_cases(kDir)) {
    if (c.informational) continue;
    std::ifstream probe(kDir + "/" + c.name + "/input_nhwc.npy");
    if (!probe) continue;
    SCOPED_TRACE(c.name);
    for (Sched k : kAllSchedules) {
      if (c.dtype == "float64")
        run_case<double>(c, true, k);
      else
        run_case<float>(c, true, k);
    }
    ++ran;
  }
  EXPECT_GT(ran, 0);
}

TEST(GridSample, RandomInputsMatchTheReference) {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<double> val(-2, 2), coord(-1.3, 1.3);
  std::uniform_int_distribution<int> size(1, 5);
  for (int trial = 0; trial < 24; ++trial) {
    bool vol = trial % 4 == 3;
    ops::GridSampleOptions o;
    const char* modes[] = {"bilinear", "nearest", "bicubic"};
    const char* pads[] = {"zeros", "border", "reflection"};
    o.mode = modes[vol ? trial % 2 : trial % 3];
    o.padding_mode = pads[(trial / 3) % 3];
    o.align_corners = trial % 2 == 0;
    std::vector<int64_t> in_shape{size(rng), size(rng)}, grid_shape{in_shape[0]};
    for (int d = 0; d < (vol ? 3 : 2); ++d) {
      in_shape.push_back(size(rng));
      grid_shape.push_back(size(rng));
    }
    grid_shape.push_back(vol ? 3 : 2);
    std::vector<double> data, grid;
    int64_t n_in = 1, n_grid = 1;
    for (int64_t s : in_shape) n_in *= s;
    for (int64_t s : grid_shape) n_grid *= s;
    for (int64_t i = 0; i < n_in; ++i) data.push_back(val(rng));
    for (int64_t i = 0; i < n_grid; ++i) grid.push_back(coord(rng));
    auto want = gsref::grid_sample<double>(data, in_shape, grid, grid_shape, {o.mode, o.padding_mode, o.align_corners});
    std::vector<int64_t> out_shape{in_shape[0], in_shape[1]};
    out_shape.insert(out_shape.end(), grid_shape.begin() + 1, grid_shape.end() - 1);
    for (Sched k : kAllSchedules) {
      LoweredFunc f = lower_grid_sample(in_shape, grid_shape, Float(64), o, k);
      NDArray out = NDArray::empty(out_shape, Float(64));
      NDArray in_a = NDArray::from_vector(data, in_shape), grid_a = NDArray::from_vector(grid, grid_shape);
      interpret(f, {in_a, grid_a, out});
      NDArray jit_out = NDArray::empty(out_shape, Float(64));
      build(f)("grid_sample")(in_a, grid_a, jit_out);
      expect_allclose(jit_out.to_vector<double>(), want, 1e-12, 1e-12, "JIT");
      expect_allclose(
          out.to_vector<double>(), want, 1e-12, 1e-12,
          std::string(o.mode) + "/" + o.padding_mode + (o.align_corners ? "/ac" : "") + " " + sched_name(k));
    }
  }
}

TEST(GridSample, EmptyOutputsWork) {
  for (auto [n, c, ho] : {std::tuple{0, 2, 3}, std::tuple{2, 0, 3}, std::tuple{2, 2, 0}}) {
    LoweredFunc f = lower_grid_sample({n, c, 4, 4}, {n, ho, 3, 2}, Float(32), {});
    NDArray out = NDArray::empty({n, c, ho, 3}, Float(32));
    interpret(f, {NDArray::empty({n, c, 4, 4}, Float(32)), NDArray::empty({n, ho, 3, 2}, Float(32)), out});
    EXPECT_EQ(out.size(), 0);
  }
}

TEST(GridSample, SymbolicShapes) {
  Var n("n"), c("c"), h("h"), w("w"), ho("ho"), wo("wo");
  Tensor data = placeholder({n, c, h, w}, Float(32), "data");
  Tensor grid = placeholder({n, ho, wo, 2}, Float(32), "grid");
  Tensor out = ops::grid_sample(data, grid, {"bilinear", "reflection", false});
  LoweredFunc f = lower(create_schedule({out}), {data, grid, out}, "gs");
  std::vector<float> d(2 * 3 * 4 * 5), g(2 * 3 * 2 * 2);
  for (size_t i = 0; i < d.size(); ++i) d[i] = float(i % 7) - 3;
  for (size_t i = 0; i < g.size(); ++i) g[i] = float(int(i % 9) - 4) * 0.4f;
  NDArray out_a = NDArray::empty({2, 3, 3, 2}, Float(32));
  interpret(f, {NDArray::from_vector(d, {2, 3, 4, 5}), NDArray::from_vector(g, {2, 3, 2, 2}), out_a});
  auto want = gsref::grid_sample<float>(d, {2, 3, 4, 5}, g, {2, 3, 2, 2}, {"bilinear", "reflection", false});
  expect_allclose(out_a.to_vector<float>(), want, 1e-5, 1e-5, "symbolic");
}

// Images up to 512 KB take the CPU schedule's row-block path: blocks of 16 output rows
// (37 leaves a partial one), blocks of 4 channels (7: the last block shifted inwards) and
// vectors of 16 pixels (21: the last vector shifted inwards), in every mode; and 5-D.
TEST(GridSample, SmallImagesThroughTheRowBlockSchedule) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> val(-2, 2), coord(-1.2f, 1.2f);
  auto random = [&](size_t n, auto& dist) {
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
  };
  struct Shape {
    std::vector<int64_t> in, grid, out;
    std::vector<const char*> modes;
  };
  const std::vector<Shape> shapes{
      {{2, 7, 11, 13}, {2, 37, 21, 2}, {2, 7, 37, 21}, {"bilinear", "nearest", "bicubic"}},
      {{1, 5, 4, 6, 7}, {1, 3, 19, 21, 3}, {1, 5, 3, 19, 21}, {"bilinear", "nearest"}},
  };
  for (const Shape& sh : shapes) {
    std::vector<float> data = random(size_t(count(sh.in)), val);
    std::vector<float> grid = random(size_t(count(sh.grid)), coord);
    for (const char* mode : sh.modes) {
      ops::GridSampleOptions o{mode, "border", false};
      auto want = gsref::grid_sample<float>(data, sh.in, grid, sh.grid, {o.mode, o.padding_mode, false});
      LoweredFunc f = lower_grid_sample(sh.in, sh.grid, Float(32), o, Sched::Cpu);
      NDArray d = NDArray::from_vector(data, sh.in), g = NDArray::from_vector(grid, sh.grid);
      NDArray out = NDArray::empty(sh.out, Float(32)), jit = NDArray::empty(sh.out, Float(32));
      interpret(f, {d, g, out});
      build(f)("grid_sample")(d, g, jit);
      std::string what = std::string("row blocks, ") + mode + ", " + std::to_string(sh.in.size()) + "-D";
      expect_allclose(out.to_vector<float>(), want, 1e-5, 1e-5, what + " (interpret)");
      expect_allclose(jit.to_vector<float>(), want, 1e-5, 1e-5, what + " (JIT)");
    }
  }
}

// Images over 512 KB take the CPU schedule's channel-block path (blocks of 64 channels
// outside the rows); 67 channels leave a partial block.
TEST(GridSample, LargeImagesThroughTheChannelBlockSchedule) {
  const std::vector<int64_t> in_shape{2, 67, 40, 53}, grid_shape{2, 9, 21, 2}, out_shape{2, 67, 9, 21};
  std::mt19937 rng(77);
  std::uniform_real_distribution<float> val(-2, 2), coord(-1.2f, 1.2f);
  std::vector<float> data(2 * 67 * 40 * 53), grid(2 * 9 * 21 * 2);
  for (float& v : data) v = val(rng);
  for (float& v : grid) v = coord(rng);
  for (const char* pad : {"zeros", "border", "reflection"}) {
    ops::GridSampleOptions o{"bilinear", pad, false};
    auto want = gsref::grid_sample<float>(data, in_shape, grid, grid_shape, {o.mode, o.padding_mode, false});
    LoweredFunc f = lower_grid_sample(in_shape, grid_shape, Float(32), o, Sched::Cpu);
    NDArray out = NDArray::empty(out_shape, Float(32));
    build(f)("grid_sample")(NDArray::from_vector(data, in_shape), NDArray::from_vector(grid, grid_shape), out);
    expect_allclose(out.to_vector<float>(), want, 1e-5, 1e-5, std::string("channel blocks, ") + pad);
  }
}

TEST(GridSample, SymbolicShapesWithTheCpuSchedule) {
  Var n("n"), c("c"), h("h"), w("w"), ho("ho"), wo("wo");
  Tensor data = placeholder({n, c, h, w}, Float(32), "data");
  Tensor grid = placeholder({n, ho, wo, 2}, Float(32), "grid");
  Tensor out = ops::grid_sample(data, grid, {"bilinear", "zeros", false});
  Schedule s = create_schedule({out});
  ops::schedule_grid_sample_cpu(s, out);
  LoweredFunc f = lower(s, {data, grid, out}, "gs");
  std::vector<float> d(2 * 70 * 4 * 5), g(2 * 3 * 19 * 2);
  for (size_t i = 0; i < d.size(); ++i) d[i] = float(i % 7) - 3;
  for (size_t i = 0; i < g.size(); ++i) g[i] = float(int(i % 9) - 4) * 0.3f;
  NDArray d_a = NDArray::from_vector(d, {2, 70, 4, 5}), g_a = NDArray::from_vector(g, {2, 3, 19, 2});
  auto want = gsref::grid_sample<float>(d, {2, 70, 4, 5}, g, {2, 3, 19, 2}, {"bilinear", "zeros", false});
  NDArray out_a = NDArray::empty({2, 70, 3, 19}, Float(32));
  interpret(f, {d_a, g_a, out_a});
  expect_allclose(out_a.to_vector<float>(), want, 1e-5, 1e-5, "symbolic, interpret");
  NDArray jit_a = NDArray::empty({2, 70, 3, 19}, Float(32));
  build(f)("gs")(d_a, g_a, jit_a);
  expect_allclose(jit_a.to_vector<float>(), want, 1e-5, 1e-5, "symbolic, JIT");
}

// The schedules take the stages as handles (grid_sample_stages) or find them through the
// graph (grid_sample_stages_of), never by name: an output named by the user with inputs
// whose names start like its stages' ("warped.src": matching names by prefix or suffix
// took them for stages), and two chained grid_samples with the same (default) name.
TEST(GridSample, SchedulesFindStagesWhateverTheNames) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> val(-2, 2), coord(-1.1f, 1.1f);
  auto random = [&](int64_t n, auto& dist) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = dist(rng);
    return v;
  };
  const std::vector<int64_t> in{1, 3, 6, 7}, gs{1, 5, 4, 2}, out_shape{1, 3, 5, 4};
  const std::vector<float> data = random(count(in), val), grid = random(count(gs), coord);
  for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
    ops::GridSampleOptions o{mode, "border", false};
    o.name = "warped";
    Tensor d = placeholder(const_shape(in), Float(32), "warped.src");
    Tensor g = placeholder(const_shape(gs), Float(32), "warped.grid");
    ops::GridSampleStages st = ops::grid_sample_stages(d, g, o);
    EXPECT_EQ(st.out.name(), "warped");
    EXPECT_EQ(st.coords.name(), "warped.coords");
    ops::GridSampleStages found = ops::grid_sample_stages_of(st.out);
    EXPECT_TRUE(found.out.same_as(st.out) && found.coords.same_as(st.coords) && found.data.same_as(d) &&
                found.grid.same_as(g) && !found.channels_last)
        << mode;
    EXPECT_EQ(found.taps.defined(), std::string(mode) == "bilinear") << mode;
    if (found.taps.defined()) {
      EXPECT_TRUE(found.taps.same_as(st.taps) && found.weights.same_as(st.weights));
    }
    auto want = gsref::grid_sample<float>(data, in, grid, gs, {o.mode, o.padding_mode, false});
    for (int k = 0; k < 4; ++k) {  // CPU, CUDA; from the output, from the handles
      Schedule s = create_schedule({st.out});
      if (k == 0) ops::schedule_grid_sample_cpu(s, st.out);
      if (k == 1) ops::schedule_grid_sample_cpu(s, st);
      if (k == 2) ops::schedule_grid_sample_cuda(s, st.out);
      if (k == 3) ops::schedule_grid_sample_cuda(s, st);
      LoweredFunc f = lower(s, {d, g, st.out}, "gs");
      NDArray da = NDArray::from_vector(data, in), ga = NDArray::from_vector(grid, gs);
      NDArray oa = NDArray::empty(out_shape, Float(32));
      interpret(f, {da, ga, oa});
      expect_allclose(oa.to_vector<float>(), want, 1e-5, 1e-5, std::string(mode) + ", schedule " + std::to_string(k));
    }
  }
  // Chained, both named "grid_sample": the outer schedule picks the outer stages.
  const std::vector<int64_t> gs2{1, 4, 3, 2}, out2_shape{1, 3, 4, 3};
  const std::vector<float> grid2 = random(count(gs2), coord);
  Tensor d = placeholder(const_shape(in), Float(32), "data");
  Tensor g1 = placeholder(const_shape(gs), Float(32), "grid1"), g2 = placeholder(const_shape(gs2), Float(32), "grid2");
  ops::GridSampleStages inner = ops::grid_sample_stages(d, g1);
  ops::GridSampleStages outer = ops::grid_sample_stages(inner.out, g2);
  ASSERT_EQ(inner.coords.name(), outer.coords.name());
  ops::GridSampleStages found = ops::grid_sample_stages_of(outer.out);
  EXPECT_TRUE(found.coords.same_as(outer.coords) && found.taps.same_as(outer.taps) &&
              found.weights.same_as(outer.weights) && found.data.same_as(inner.out) && found.grid.same_as(g2));
  Schedule s = create_schedule({outer.out});
  ops::schedule_grid_sample_cpu(s, inner.out);
  ops::schedule_grid_sample_cpu(s, outer.out);
  LoweredFunc f = lower(s, {d, g1, g2, outer.out}, "chained");
  auto mid = gsref::grid_sample<float>(data, in, grid, gs, {"bilinear", "zeros", false});
  auto want = gsref::grid_sample<float>(mid, out_shape, grid2, gs2, {"bilinear", "zeros", false});
  NDArray da = NDArray::from_vector(data, in), g1a = NDArray::from_vector(grid, gs),
          g2a = NDArray::from_vector(grid2, gs2);
  NDArray oa = NDArray::empty(out2_shape, Float(32)), ja = NDArray::empty(out2_shape, Float(32));
  interpret(f, {da, g1a, g2a, oa});
  expect_allclose(oa.to_vector<float>(), want, 1e-5, 1e-5, "chained (interpret)");
  build(f)("chained")(da, g1a, g2a, ja);
  expect_allclose(ja.to_vector<float>(), want, 1e-5, 1e-5, "chained (JIT)");
}

// The rules of the header comment for non-finite values, on every schedule and backend.
TEST(GridSample, NonFiniteValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // One 1x1x3x3 image whose last pixel is infinite; align_corners = true, so grid -1, 0, 1
  // are columns (rows) 0, 1, 2: every weight below is exact.
  std::vector<float> data{1, 2, 3, 4, 5, 6, 7, 8, inf};
  std::vector<float> grid{
      nan,   -1,     // NaN x
      inf,   -1,     // infinite x
      -1,    -inf,   // infinite y
      -2.5f, -1,     // x = -1.5: both taps left of the image
      -1.5f, -1,     // x = -0.5: taps -1 (outside) and 0, half each
      -1,    -0.5f,  // y = 0.5 in column 0: column 1's taps are inside with weight 0
      1.5f,  1,      // x = 2.5 on row 2: tap 2 (the infinite pixel, half) and 3 (outside)
  };
  const int64_t n_pts = int64_t(grid.size() / 2);
  struct Want {
    const char* pad;
    std::vector<float> v;
  };
  const std::vector<Want> wants{
      // zeros: a non-finite coordinate reads no tap; an outside tap adds nothing, even
      // where its clamped neighbour is infinite; an inside tap of weight 0 adds 0 * value.
      {"zeros", {0, 0, 0, 0, 0.5f, 2.5f, inf}},
      // border: NaN -> coordinate 0, +inf -> the last column, -inf -> the first row.
      {"border", {1, 3, 1, 1, 1, 2.5f, inf}},
  };
  for (const Want& w : wants) {
    for (Sched k : kAllSchedules) {
      ops::GridSampleOptions o{"bilinear", w.pad, true};
      LoweredFunc f = lower_grid_sample({1, 1, 3, 3}, {1, 1, n_pts, 2}, Float(32), o, k);
      NDArray d_a = NDArray::from_vector(data, {1, 1, 3, 3}), g_a = NDArray::from_vector(grid, {1, 1, n_pts, 2});
      NDArray out = NDArray::empty({1, 1, 1, n_pts}, Float(32)), jit = NDArray::empty({1, 1, 1, n_pts}, Float(32));
      interpret(f, {d_a, g_a, out});
      build(f)("grid_sample")(d_a, g_a, jit);
      for (const NDArray* a : {&out, &jit}) {
        std::vector<float> got = a->to_vector<float>();
        for (int64_t i = 0; i < n_pts; ++i)
          EXPECT_EQ(got[size_t(i)], w.v[size_t(i)])
              << w.pad << " point " << i << " (" << sched_name(k) << ", " << (a == &out ? "interpret" : "JIT") << ")";
      }
    }
  }
}

TEST(GridSample, Errors) {
  Tensor d4 = placeholder({2, 3, 4, 5}, Float(32), "data");
  Tensor g4 = placeholder({2, 6, 7, 2}, Float(32), "grid");
  Tensor d5 = placeholder({2, 3, 4, 5, 6}, Float(32), "data5");
  Tensor g5 = placeholder({2, 6, 7, 8, 3}, Float(32), "grid5");
  expect_error(
      [&] {
        ops::grid_sample(placeholder({3, 4, 5}, Float(32), "d"), g4);
      },
      {"grid_sample", "4-D", "5-D", "got 3-D (3, 4, 5)"});
  expect_error([&] { ops::grid_sample(d4, g5); }, {"grid_sample", "same rank", "got 5-D"});
  expect_error(
      [&] {
        ops::grid_sample(d4, placeholder({2, 6, 7, 3}, Float(32), "g"));
      },
      {"grid's last dimension must be 2", "(2, 6, 7, 3)"});
  expect_error(
      [&] {
        ops::grid_sample(d4, placeholder({3, 6, 7, 2}, Float(32), "g"));
      },
      {"same batch size N", "(2, 3, 4, 5)", "(3, 6, 7, 2)"});
  expect_error([&] { ops::grid_sample(d5, g5, {"bicubic"}); }, {"bicubic interpolation only supports 4-D input"});
  expect_error([&] { ops::grid_sample(d4, g4, {"linear"}); }, {"unknown mode 'linear'"});
  expect_error([&] { ops::grid_sample(d4, g4, {"bilinear", "wrap"}); }, {"unknown padding_mode 'wrap'"});
  ops::GridSampleOptions bad_layout;
  bad_layout.layout = "CHWN";
  expect_error([&] { ops::grid_sample(d4, g4, bad_layout); }, {"unknown layout 'CHWN'"});
  expect_error(
      [&] {
        ops::grid_sample(placeholder({2, 3, 4, 5}, Int(32), "d"), g4);
      },
      {"data must be float16, bfloat16, float32 or float64, got int32"});
  expect_error(
      [&] {
        ops::grid_sample(d4, placeholder({2, 6, 7, 2}, Float(64), "g"));
      },
      {"grid dtype float64 must match data dtype float32"});
  expect_error(
      [&] {
        ops::grid_sample(placeholder({2, 3, 0, 5}, Float(32), "d"), g4);
      },
      {"every spatial dimension of data must be > 0"});
  Tensor other = compute(
      {2}, [&](Expr i) { return d4(i, 0, 0, 0); }, "other");
  Schedule s = create_schedule({other});
  expect_error([&] { ops::schedule_grid_sample_cpu(s, other); },
               {"'other' is not a tensor made by te::ops::grid_sample"});
  expect_error([&] { ops::schedule_grid_sample_cuda(s, other); }, {"not a tensor made by te::ops::grid_sample"});
}
