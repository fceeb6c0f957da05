// Function::make_arguments, param_names and writes (what `te run` builds a call from), and
// TimingResult::std_dev.
#include <gtest/gtest.h>

#include <cmath>

#include "te/te.h"
#include "test_util.h"

using namespace te;

namespace {

// Out[i] = A[i % n] * alpha for i < m; m is bound by no input.
Function tile_scale() {
  Var n("n"), m("m");
  Var alpha("alpha", Float(32));
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor Out = compute(
      {m}, [&](Expr i) { return A(i % n) * alpha; }, "Out");
  return build(lower(create_schedule({Out}), {A, Out}, "tile_scale"))("tile_scale");
}

TEST(CallArguments, InputsValuesAndNewOutputs) {
  Function f = tile_scale();
  EXPECT_EQ(f.param_names(), (std::vector<std::string>{"A", "Out", "alpha"}));
  EXPECT_FALSE(f.writes(0));
  EXPECT_TRUE(f.writes(1));
  EXPECT_FALSE(f.writes(2));
  NDArray a = NDArray::from_vector(std::vector<float>{1, 2, 3}, {3});
  std::vector<Argument> args = f.make_arguments({a}, {{"m", int64_t{7}}, {"alpha", 2.0}});
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[1].array().shape(), (std::vector<int64_t>{7}));
  f.call(args);
  EXPECT_EQ(args[1].array().to_vector<float>(), (std::vector<float>{2, 4, 6, 2, 4, 6, 2}));
}

TEST(CallArguments, Errors) {
  Function f = tile_scale();
  NDArray a = NDArray::from_vector(std::vector<float>{1, 2, 3}, {3});
  expect_error([&] { f.make_arguments({}); }, {"tile_scale: takes 1 input (A), got 0"});
  expect_error(
      [&] {
        f.make_arguments({a}, {{"alpha", 1.0}});
      },
      {"tile_scale: the shape of output 'Out' needs m, which no input binds; give its value"});
  expect_error([&] { f.make_arguments({a}, {{"m", 2}}); }, {"tile_scale: the scalar parameter 'alpha' needs a value"});
  expect_error(
      [&] {
        f.make_arguments({a}, {{"q", 2}});
      },
      {"tile_scale: no shape variable or scalar parameter 'q' (it has: n, m, alpha)"});
  expect_error(
      [&] {
        f.make_arguments({a}, {{"n", 2}, {"m", 2}, {"alpha", 1.0}});
      },
      {"tile_scale: n is 2 (given or bound earlier) but input 'A' has 3 in dimension 0"});
  expect_error(
      [&] {
        f.make_arguments({a}, {{"m", -4}, {"alpha", 1.0}});
      },
      {"tile_scale: output 'Out' would have extent -4 in dimension 0"});
  expect_error([&] { f.writes(3); }, {"tile_scale: no parameter 3 (3 parameters)"});
}

TEST(TimingResult, StandardDeviation) {
  TimingResult t;
  t.results = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(t.std_dev(), std::sqrt(1.25));
  EXPECT_EQ(TimingResult().std_dev(), 0);
}

}  // namespace
