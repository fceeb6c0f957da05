// Measurement in worker processes: configs that segfault, hang, throw, fail to schedule,
// build or run, or compute the wrong output are recorded as failed with their reason; the
// run goes on and finds the best valid config; the tuning process never compiles a kernel.
#include <gtest/gtest.h>
#include <signal.h>
#include <te/autotune.h>
#include <te/te.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <map>

#include "test_util.h"

using namespace te;
using namespace te::autotune;

namespace {

constexpr int kN = 256;

// B = A * 2 + 1 over kN floats. "variant" picks a misbehaviour, applied when split == 4.
Task fragile_task() {
  Task task;
  task.key = "fragile/256";
  task.space.define_choice("variant",
                           {"ok", "segfault", "hang", "throw", "bad_schedule", "wrong", "bad_build", "bad_shape"});
  task.space.define_values("split", {1, 4, 16});
  auto kernel = [](int split, const std::string& variant, const std::string& name) {
    const int n = variant == "bad_shape" ? 2 * kN : kN;  // the arguments have kN: the call fails
    Tensor A = placeholder({n}, Float(32), "A");
    Tensor B = compute(
        {n}, [&](Expr i) { return A(i) * 2.0f + (variant == "wrong" ? 2.0f : 1.0f); }, "B");
    Schedule s = create_schedule({B});
    if (split > 1) {
      auto [o, in] = s[B].split(B.axis(0), split);
      (void)o;
      if (variant == "bad_schedule") s[B].vectorize(B.axis(0));  // a root axis that was split: te::Error
      s[B].vectorize(in);
    }
    return lower(s, {A, B}, name);
  };
  task.build = [kernel](const Config& c) {
    std::string v = c.choice("variant");
    int split = static_cast<int>(c["split"]);
    if (split != 4) v = "ok";
    if (v == "segfault") raise(SIGSEGV);
    if (v == "hang") sleep(60);
    if (v == "throw") throw Error("this config has no schedule");
    LoweredFunc f = kernel(split, v, "k");
    if (v == "bad_build") f.body = seq({f.body, barrier()});  // the CPU backend refuses barriers
    return f;
  };
  task.reference = [kernel] { return kernel(1, "ok", "k"); };
  task.make_args = [] {
    std::vector<float> a(kN);
    for (int i = 0; i < kN; ++i) a[i] = float(i) * 0.5f;
    return std::vector<Argument>{NDArray::from_vector(a, {kN}), NDArray::empty({kN}, Float(32))};
  };
  return task;
}

MeasureOptions fast_options() {
  MeasureOptions o;
  o.repeat = 2;
  o.timeout_s = 3;  // the hanging config waits this long; ASan builds compile slower
  return o;
}

}  // namespace

TEST(AutotuneMeasure, FailuresAreRecordedAndTheRunGoesOn) {
  Task task = fragile_task();
  std::string path = ::testing::TempDir() + "te_tune_fragile_" + std::to_string(::getpid()) + ".jsonl";
  std::remove(path.c_str());
  uint64_t compilations_before = jit_stats().compilations;
  LocalMeasurer measurer(task, fast_options());
  GridTuner tuner(task.space);
  TuneOptions o;
  o.n_trial = 100;
  o.records_path = path;
  o.progress = false;
  TuneResult r = tune(task, tuner, measurer, o);
  // The tuning process compiled nothing: the reference and every trial ran in workers.
  EXPECT_EQ(jit_stats().compilations, compilations_before);
  EXPECT_EQ(r.measured, 24u);
  EXPECT_EQ(r.failed, 7u);
  // One worker, and one more after each of the crash and the timeout.
  EXPECT_EQ(measurer.workers_started(), 3);
  std::map<std::string, std::string> errors;
  for (const Record& rec : r.records) {
    std::map<std::string, std::string> cfg(rec.config.begin(), rec.config.end());
    if (cfg["split"] == "4" && cfg["variant"] != "ok") {
      EXPECT_FALSE(rec.ok) << cfg["variant"];
      errors[cfg["variant"]] = rec.error;
    } else {
      EXPECT_TRUE(rec.ok) << cfg["variant"] << " split " << cfg["split"] << ": " << rec.error;
      EXPECT_EQ(rec.times.size(), 2u);
    }
  }
  EXPECT_NE(errors["segfault"].find("worker crashed"), std::string::npos) << errors["segfault"];
  EXPECT_NE(errors["hang"].find("timeout: no result within 3 s"), std::string::npos) << errors["hang"];
  EXPECT_EQ(errors["throw"], "schedule/lower failed: this config has no schedule");
  EXPECT_NE(errors["bad_schedule"].find("schedule/lower failed: "), std::string::npos) << errors["bad_schedule"];
  EXPECT_NE(errors["wrong"].find("wrong output: output 'B' element 0 is 2, expected 1"), std::string::npos)
      << errors["wrong"];
  EXPECT_NE(errors["bad_build"].find("build failed: build: k: "), std::string::npos) << errors["bad_build"];
  EXPECT_NE(errors["bad_shape"].find("run failed: "), std::string::npos) << errors["bad_shape"];
  ASSERT_TRUE(r.best);
  EXPECT_TRUE(std::isfinite(r.best_cost));
  // The records file holds the same, and apply_best gives a valid config's kernel.
  RecordFile f = read_records_file(path);
  EXPECT_TRUE(f.warnings.empty());
  ASSERT_EQ(f.records.size(), 24u);
  std::optional<Config> best = best_config(f.records, task.key, task.space);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->index(), r.best->index());
  EXPECT_TRUE(best->choice("variant") == "ok" || (*best)["split"] != 4);
  std::remove(path.c_str());
}

TEST(AutotuneMeasure, ResumesAndAppliesTheBest) {
  Task task = fragile_task();
  std::string path = ::testing::TempDir() + "te_tune_resume_" + std::to_string(::getpid()) + ".jsonl";
  std::remove(path.c_str());
  TuneOptions o;
  o.records_path = path;
  o.progress = false;
  o.measure = fast_options();
  // Only the configs that behave (variant ok): a small space of 3.
  Task good = task;
  good.space = ConfigSpace();
  good.space.define_choice("variant", {"ok"});
  good.space.define_values("split", {1, 4, 16});
  o.n_trial = 2;
  RandomTuner t1(good.space, 5);
  EXPECT_EQ(tune(good, t1, o).measured, 2u);
  o.n_trial = 3;
  RandomTuner t2(good.space, 6);
  TuneResult r = tune(good, t2, o);
  EXPECT_EQ(r.resumed, 2u);
  EXPECT_EQ(r.measured, 1u);
  // The best kernel, built and run here, computes B = A * 2 + 1.
  LoweredFunc f = apply_best(path, good);
  std::vector<Argument> args = good.make_args();
  build(f)(f.name).call(args);
  std::vector<float> b = args[1].array().to_vector<float>();
  for (int i = 0; i < kN; ++i) ASSERT_EQ(b[i], float(i) + 1.0f);
  std::remove(path.c_str());
}

// A task compiled for another CPU the host runs is measured here and recorded under its
// own target; one the host cannot run is refused before any trial.
TEST(AutotuneMeasure, TunesForTheTasksTarget) {
  Task good = fragile_task();
  good.space = ConfigSpace();
  good.space.define_choice("variant", {"ok"});
  good.space.define_values("split", {1, 4, 16});
  good.target = "llvm -mtriple=aarch64-linux-gnu";
  RandomTuner tuner(good.space, 1);
  TuneOptions o;
  o.progress = false;
  o.measure = fast_options();
  o.n_trial = 3;
  expect_error([&] { tune(good, tuner, o); },
               {"tune 'fragile/256': the JIT runs code on this host (", "), not on aarch64-unknown-linux-gnu"});
  // In process, the trial's build is the target's (and so fails the same way).
  std::vector<Argument> args = good.make_args();
  MeasureResult in_process = run_trial(good, good.space.at(0), args, {}, o.measure);
  EXPECT_FALSE(in_process.ok);
  EXPECT_NE(in_process.error.find("build failed: build: the JIT runs code on this host"), std::string::npos)
      << in_process.error;
#if defined(__x86_64__)
  good.target = "llvm -mcpu=x86-64";  // every x86-64 host runs the baseline
  const std::string path = ::testing::TempDir() + "te_tune_target_" + std::to_string(::getpid()) + ".jsonl";
  std::remove(path.c_str());
  o.records_path = path;
  TuneResult r = tune(good, tuner, o);
  EXPECT_EQ(r.measured, 3u);
  EXPECT_EQ(r.failed, 0u);
  for (const Record& rec : r.records) EXPECT_EQ(rec.target, target_string(good.target));
  // The host's task finds records of another target only.
  Task host = good;
  host.target = Target();
  expect_error([&] { apply_best(path, host); },
               {"holds 3 records of 'fragile/256', measured for another target (x86_64", "-mcpu=x86-64 ",
                "none for this one (", "tune again here"});
  LoweredFunc f = apply_best(path, good);
  args = good.make_args();
  BuildOptions b;
  b.target = good.target;
  build(f, b)(f.name).call(args);
  EXPECT_EQ(args[1].array().to_vector<float>()[7], 8.0f);  // 3.5 * 2 + 1
  std::remove(path.c_str());
#endif
}

TEST(AutotuneMeasure, ReferenceFailureStopsTheRun) {
  Task task = fragile_task();
  task.reference = []() -> LoweredFunc { throw Error("no default schedule"); };
  GridTuner tuner(task.space);
  TuneOptions o;
  o.progress = false;
  o.measure = fast_options();
  expect_error([&] { tune(task, tuner, o); },
               {"tune 'fragile/256'", "reference (default) schedule failed", "no default schedule"});
  task.reference = []() -> LoweredFunc {
    raise(SIGSEGV);
    return {};
  };
  expect_error([&] { tune(task, tuner, o); }, {"reference (default) schedule failed", "its process"});
}

TEST(AutotuneMeasure, RunTrialInProcess) {
  Task task = fragile_task();
  std::vector<Argument> args = task.make_args();
  std::vector<NDArray> ref = {NDArray::empty({kN}, Float(32))};
  std::vector<float> expected(kN);
  for (int i = 0; i < kN; ++i) expected[i] = float(i) + 1.0f;
  ref[0] = NDArray::from_vector(expected, {kN});
  MeasureOptions o = fast_options();
  MeasureResult ok = run_trial(task, task.space.from_indices({0, 2}), args, ref, o);
  EXPECT_TRUE(ok.ok) << ok.error;
  EXPECT_EQ(ok.times.size(), 2u);
  EXPECT_GT(ok.build_s, 0);
  MeasureResult wrong = run_trial(task, task.space.from_indices({5, 1}), args, ref, o);
  MeasureResult bad_shape = run_trial(task, task.space.from_indices({7, 1}), args, ref, o);
  EXPECT_NE(bad_shape.error.find("run failed: "), std::string::npos) << bad_shape.error;
  EXPECT_FALSE(wrong.ok);
  EXPECT_NE(wrong.error.find("wrong output"), std::string::npos);
  task.outputs = {0, 7};
  expect_error([&] { output_positions(task, args); }, {"output position 7"});
}
