// Auto-tuning te's grid_sample CPU schedule: te::ops::schedule_grid_sample_cpu's knobs
// (the vector width in bytes and the channels per work item) for bilinear / zeros on a
// 4x32x64x64 image and a 64x64 random grid, then the default, the hand-written (the
// schedule's own defaults) and the tuned schedule timed side by side.
//
//   tune_grid_sample [--trials 24] [--records tune_grid_sample.jsonl] [--tuner model|random|grid]
//                    [--shape N,C,H,W,Ho,Wo]
#include <te/autotune.h>
#include <te/te.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "tune_tasks.h"

using namespace te;
using namespace te::autotune;

int main(int argc, char** argv) {
  te_examples::GridSampleShape sh;
  size_t trials = 24;
  std::string records = "tune_grid_sample.jsonl", tuner_name = "model";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--trials")
      trials = size_t(std::atoi(v.c_str()));
    else if (a == "--records")
      records = v;
    else if (a == "--tuner")
      tuner_name = v;
    else if (a == "--shape" &&
             std::sscanf(v.c_str(), "%d,%d,%d,%d,%d,%d", &sh.N, &sh.C, &sh.H, &sh.W, &sh.Ho, &sh.Wo) == 6) {
    } else {
      std::fprintf(stderr, "bad option %s %s\n", a.c_str(), v.c_str());
      return 2;
    }
  }
  Task task = te_examples::grid_sample_tuning_task(sh);
  std::unique_ptr<Tuner> tuner;
  if (tuner_name == "grid")
    tuner = std::make_unique<GridTuner>(task.space);
  else if (tuner_name == "random")
    tuner = std::make_unique<RandomTuner>(task.space, 0);
  else
    tuner = std::make_unique<ModelTuner>(task.space);
  // The hand-written schedule's config first: the tuned one can only be as fast or faster.
  if (auto hand = te_examples::grid_sample_hand_config(task, sh)) tuner->measure_first({*hand});
  TuneOptions opt;
  opt.n_trial = trials;
  opt.records_path = records;
  opt.measure.repeat = 5;
  opt.measure.min_repeat_ms = 20;
  opt.measure.timeout_s = 30;
  std::printf("tuning %s: %llu configs, %zu trials, records in %s\n", task.key.c_str(),
              static_cast<unsigned long long>(task.space.size()), trials, records.c_str());
  TuneResult r = tune(task, *tuner, opt);
  std::printf("measured %zu (resumed %zu), %zu failed; best %s\n", r.measured, r.resumed, r.failed,
              r.best ? r.best->to_string().c_str() : "none");

  std::vector<Argument> args = task.make_args();
  struct Row {
    const char* name;
    LoweredFunc f;
    double s = 0;
  } rows[] = {{"default (as written)", task.reference()},
              {"hand-written (defaults)", te_examples::grid_sample_kernel(sh, 64, 0, 0, "grid_sample_hand")},
              {"tuned (apply_best)", apply_best(records, task)}};
  std::vector<float> expected;
  for (Row& row : rows) {
    Function fn = build(row.f)(row.f.name);
    fn.call(args);
    std::vector<float> o = args[2].array().to_vector<float>();
    if (expected.empty()) expected = o;
    for (size_t i = 0; i < o.size(); ++i)
      if (std::abs(o[i] - expected[i]) > 1e-4f * (1 + std::abs(expected[i]))) {
        std::fprintf(stderr, "%s: wrong result at %zu\n", row.name, i);
        return 1;
      }
    row.s = time_evaluator(fn, 1, 20, 10).run(args).median();
  }
  std::printf("\n%-26s %12s %12s %16s\n", "grid_sample schedule", "time", "vs default", "vs hand-written");
  for (const Row& row : rows)
    std::printf("%-26s %9.3f ms %11.2fx %15.2fx\n", row.name, row.s * 1e3, rows[0].s / row.s, rows[1].s / row.s);
  return 0;
}
