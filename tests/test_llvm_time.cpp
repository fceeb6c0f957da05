// time_evaluator: the shape of its results and its argument checks (never timings).
#include <gtest/gtest.h>

#include "te/te.h"
#include "test_llvm_util.h"

using namespace te;
using namespace te::llvm_test;

namespace {

LoweredFunc increment() {
  Var n("n"), i("i");
  Buffer A("A", Int(64), {n});
  return make_func("inc", {buffer_param(A)}, serial(i, 0, n, store(A, load(A, {i}) + int64_t{1}, {i})));
}

TEST(LlvmTime, RunsWarmUpPlusNumberTimesRepeat) {
  Function f = build(increment())("inc");
  NDArray a = NDArray::empty({16}, Int(64));
  TimingResult r = time_evaluator(f, 5, 3)(a);
  ASSERT_EQ(r.results.size(), 3u);
  for (double s : r.results) EXPECT_GT(s, 0.0);
  EXPECT_DOUBLE_EQ(r.mean, (r.results[0] + r.results[1] + r.results[2]) / 3);
  EXPECT_LE(r.min(), r.median());
  EXPECT_LE(r.median(), r.max());
  // One warm-up call and 5 x 3 timed calls, each adding one.
  EXPECT_EQ(a.to_vector<int64_t>()[7], 16);
}

TEST(LlvmTime, MinRepeatMsRaisesTheNumberOfCalls) {
  Function f = build(increment())("inc");
  NDArray a = NDArray::empty({1}, Int(64));
  TimingResult r = time_evaluator(f, 1, 2, 20)(a);
  ASSERT_EQ(r.results.size(), 2u);
  // Each repeat ran until it lasted 20 ms, which a one-element kernel needs many calls for.
  EXPECT_GT(a.to_vector<int64_t>()[0], 100);
}

TEST(LlvmTime, ChecksItsParametersAndTheArguments) {
  Function f = build(increment())("inc");
  expect_error([&] { time_evaluator(f, 0, 1); }, {"time_evaluator", "number (0)"});
  expect_error([&] { time_evaluator(f, 1, 0); }, {"repeat (0)"});
  expect_error([&] { time_evaluator(f, 1, 1, -1); }, {"min_repeat_ms (-1)"});
  expect_error([&] { time_evaluator(Function(), 1, 1); }, {"time_evaluator: the Function is empty"});
  expect_error([&] { time_evaluator(f, 1, 1)(NDArray::empty({3}, Int(32))); }, {"inc: argument 1 ('A')", "int32"});
}

}  // namespace
