// The accurate reference of a search (MeasureOptions::reference_float64): widen_floats
// turns a lowered function's float arithmetic into float64, so configs are checked
// against the true result rather than the default schedule's float32 rounding; a search
// of a long reduction accepts its configs, and configs off the reference are reported.
#include <gtest/gtest.h>
#include <te/auto_schedule.h>
#include <te/autotune.h>
#include <te/te.h>

#include <cmath>
#include <string>
#include <vector>

#include "autotune/float64_reference.h"
#include "test_util.h"

using namespace te;

namespace {

// sum(x) over n float32 values, in order: the default schedule.
struct Sum {
  Tensor x, s;
  LoweredFunc func;
};

Sum sum_of(int n) {
  Sum r;
  r.x = placeholder({n}, Float(32), "x");
  IterVar k = reduce_axis({0, n}, "k");
  r.s = compute(
      {1}, [&](Expr) { return sum(exp(cast(Float(32), r.x(k)) * 0.0f) * r.x(k), {k}); }, "s");
  r.func = lower(create_schedule({r.s}), {r.x, r.s}, "sum");
  return r;
}

TEST(Float64Reference, WidenedSumIsTheExactOneWhereFloat32Drifts) {
  const int n = 1 << 22;
  Sum f = sum_of(n);
  std::optional<LoweredFunc> wide = autotune::widen_floats(f.func);
  ASSERT_TRUE(wide);
  // Every float buffer and constant is float64 now; int ones are untouched.
  EXPECT_EQ(wide->params[0].buffer.dtype(), Float(64));
  EXPECT_EQ(to_string(*wide).find("float32"), std::string::npos) << to_string(*wide);
  NDArray x = NDArray::empty({n}, Float(32));
  for (int i = 0; i < n; ++i) static_cast<float*>(x.data())[i] = 0.1f;
  NDArray s32 = NDArray::empty({1}, Float(32));
  build(f.func)("sum")(x, s32);
  std::vector<Argument> args = autotune::widened_arguments({x, NDArray::empty({1}, Float(32))});
  ASSERT_EQ(args[0].array().dtype(), Float(64));
  build (*wide)("sum").call(args);
  const double exact = double(n) * double(0.1f);
  const double got = autotune::element_value(args[1].array(), 0);
  EXPECT_NEAR(got, exact, 1e-9 * exact);
  // The in-order float32 sum stagnates far from it: what the old reference was.
  EXPECT_GT(std::abs(double(static_cast<float*>(s32.data())[0]) - exact), 1e-3 * exact);
}

TEST(Float64Reference, ScalarsLetsAndMathAreWidened) {
  Var alpha("alpha", Float(32));
  Tensor x = placeholder({8}, Float(16), "x");
  Tensor y = compute(
      {8}, [&](Expr i) { return cast(Float(16), sqrt(cast(Float(32), x(i)) * alpha + 1.0f)); }, "y");
  LoweredFunc f = lower(create_schedule({y}), {x, y}, "f");  // alpha: the third parameter
  std::optional<LoweredFunc> wide = autotune::widen_floats(f);
  ASSERT_TRUE(wide);
  EXPECT_EQ(wide->params[2].var.dtype(), Float(64));
  NDArray xs = NDArray::empty({8}, Float(16));
  for (int i = 0; i < 8; ++i) static_cast<half*>(xs.data())[i] = half(float(i));
  std::vector<Argument> args = autotune::widened_arguments({xs, NDArray::empty({8}, Float(16)), 0.5});
  interpret(*wide, args);
  for (int i = 0; i < 8; ++i) EXPECT_DOUBLE_EQ(autotune::element_value(args[1].array(), i), std::sqrt(i * 0.5 + 1));
}

TEST(Float64Reference, ExternCallsCannotBeWidened) {
  Tensor x = placeholder({4}, Float(32), "x");
  Tensor y = compute(
      {4}, [&](Expr i) { return call_extern(Float(32), "my_fn", {x(i)}); }, "y");
  EXPECT_FALSE(autotune::widen_floats(lower(create_schedule({y}), {x, y}, "f")));
}

// auto_schedule with a search: no warning (no config was rejected as wrong), every
// config measured accepted, and at least 2 of them (a search ends early when its tuner
// finds no loop nest it has not measured); the schedule.
Schedule expect_a_search_that_accepts_its_configs(const std::vector<Tensor>& outputs, const AutoScheduleOptions& o) {
  std::vector<std::string> warnings;
  set_log_sink([&](LogLevel level, const std::string& text) {
    if (level == LogLevel::Warn) warnings.push_back(text);
  });
  Schedule s = auto_schedule(outputs, o);
  set_log_sink(nullptr);
  for (const std::string& w : warnings) EXPECT_EQ(w.find("auto_schedule"), std::string::npos) << w;
  size_t ok = 0;
  const std::vector<autotune::Record> records = autotune::load_records(o.records).records;
  for (const autotune::Record& r : records) ok += r.ok;
  EXPECT_EQ(ok, records.size());
  EXPECT_GE(ok, 2u);
  return s;
}

// A squared norm per row of 4M elements (Ansor's NRM): the default schedule's float32 sum
// is 1e-3 off, so against it every reordered config was "wrong" and the search silently
// kept the rules; against the float64 reference they are right, and the search has
// configs to choose from. Nothing is reported.
TEST(Float64Reference, ASearchOfALongReductionAcceptsItsConfigs) {
  const int rows = 2, m = 2048, n = 2048;
  Tensor x = placeholder({rows, m, n}, Float(32), "x");
  IterVar i = reduce_axis({0, m}, "i"), j = reduce_axis({0, n}, "j");
  Tensor s = compute(
      {rows},
      [&](Expr b) {
        return sum(x(b, i, j) * x(b, i, j), {i, j});
      },
      "norm2");
  AutoScheduleOptions o;
  o.threads = 1;
  o.trials = 3;
  o.records = temp_path("float64_reference.jsonl");
  Schedule sch = expect_a_search_that_accepts_its_configs({s}, o);
  NDArray xs = NDArray::empty({rows, m, n}, Float(32));
  std::vector<double> exact(rows, 0.0);
  for (int64_t e = 0; e < xs.size(); ++e) {
    const float v = float(e % 7) * 0.25f - 0.75f;
    static_cast<float*>(xs.data())[e] = v;
    exact[e / (int64_t(m) * n)] += double(v) * v;
  }
  NDArray out = NDArray::empty({rows}, Float(32));
  build(lower(sch, {x, s}, "norm"))("norm")(xs, out);
  for (int b = 0; b < rows; ++b) EXPECT_NEAR(static_cast<float*>(out.data())[b], exact[b], 5e-4 * exact[b]);
}

// A long dot product of terms of both signs (Ansor's C3D: 1029 per output): some outputs
// cancel to near 0, where float32's rounding of the terms is larger than any tolerance
// relative to the result. The absolute tolerance scales with the outputs' magnitude, so
// the search's configs are accepted rather than all rejected.
TEST(Float64Reference, CancellingSumsAreCheckedAgainstTheOutputsMagnitude) {
  const int m = 16, n = 32, k = 8192;
  Tensor a = placeholder({m, k}, Float(32), "a"), b = placeholder({k, n}, Float(32), "b");
  IterVar r = reduce_axis({0, k}, "r");
  Tensor c = compute(
      {m, n}, [&](Expr i, Expr j) { return sum(a(i, r) * b(r, j), {r}); }, "dot");
  AutoScheduleOptions o;
  o.threads = 1;
  o.trials = 3;
  o.records = temp_path("float64_cancelling.jsonl");
  expect_a_search_that_accepts_its_configs({c}, o);
}

// An element-wise sin(3000 x): float32's rounding of the argument (3000 x is 2e-4 off)
// moves each output by up to 2e-4, the definition's own rounding, which every config
// shares; against the float64 reference alone all of them were "wrong" (grid_sample's
// coordinates, 200 pixels across, did the same). A config that matches the default
// schedule's output is right too.
TEST(Float64Reference, TheDefinitionsOwnRoundingIsNoConfigsFault) {
  const int rows = 64, cols = 4096;
  Tensor x = placeholder({rows, cols}, Float(32), "x");
  Tensor y = compute(
      {rows, cols}, [&](Expr i, Expr j) { return sin(x(i, j) * 3000.0f); }, "wave");
  AutoScheduleOptions o;
  o.threads = 2;
  o.trials = 3;
  o.records = temp_path("float64_own_rounding.jsonl");
  expect_a_search_that_accepts_its_configs({y}, o);
}

}  // namespace
