// Auto-tuning te's sgemm schedule (examples/matmul_schedule.h's sgemm_best) for
// M = N = K = 1024: the register tile mr x nr and the column block nc are knobs, the model-
// guided tuner picks configs, forked workers measure them (checked against the default
// schedule's output), the records go to a JSON-lines file a later run resumes from. Then,
// in this process, the default, the hand-written and the tuned schedule are timed side
// by side.
//
//   tune_sgemm [--size 1024] [--trials 32] [--records tune_sgemm_1024.jsonl]
//              [--tuner model|random|grid] [--seed 0]
#include <te/autotune.h>
#include <te/te.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "tune_tasks.h"

using namespace te;
using namespace te::autotune;

namespace {

// Median of `repeat` calls, in seconds (checked against the reference output first).
double time_kernel(const LoweredFunc& f, std::vector<Argument>& args, const std::vector<float>& expected, int repeat) {
  Function fn = build(f)(f.name);
  fn.call(args);
  std::vector<float> c = args[2].array().to_vector<float>();
  for (size_t i = 0; i < c.size(); ++i)
    if (std::abs(c[i] - expected[i]) > 1e-3f * (1 + std::abs(expected[i]))) {
      std::fprintf(stderr, "%s: wrong result at %zu\n", f.name.c_str(), i);
      std::exit(1);
    }
  return time_evaluator(fn, 1, repeat).run(args).median();
}

}  // namespace

int main(int argc, char** argv) {
  int n = 1024, seed = 0;
  size_t trials = 32;
  std::string records, tuner_name = "model";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--size")
      n = std::atoi(v.c_str());
    else if (a == "--trials")
      trials = size_t(std::atoi(v.c_str()));
    else if (a == "--records")
      records = v;
    else if (a == "--tuner")
      tuner_name = v;
    else if (a == "--seed")
      seed = std::atoi(v.c_str());
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (records.empty()) records = "tune_sgemm_" + std::to_string(n) + ".jsonl";
  Task task = te_examples::sgemm_tuning_task(n);

  std::unique_ptr<Tuner> tuner;
  if (tuner_name == "grid")
    tuner = std::make_unique<GridTuner>(task.space);
  else if (tuner_name == "random")
    tuner = std::make_unique<RandomTuner>(task.space, uint64_t(seed));
  else
    tuner = std::make_unique<ModelTuner>(task.space, ModelTunerOptions{uint64_t(seed)});
  // The hand-written schedule's config first: the tuned one can only be as fast or faster.
  if (auto hand = te_examples::sgemm_hand_config(task, n)) tuner->measure_first({*hand});
  TuneOptions opt;
  opt.n_trial = trials;
  opt.records_path = records;
  opt.measure.repeat = 10;  // a config's cost is the median of 10 calls
  opt.measure.timeout_s = 30;
  opt.measure.rtol = 1e-3;
  opt.measure.atol = 1e-3;
  std::printf("tuning %s: %llu configs, %zu trials, records in %s\n", task.key.c_str(),
              static_cast<unsigned long long>(task.space.size()), trials, records.c_str());
  TuneResult r = tune(task, *tuner, opt);
  std::printf("measured %zu (resumed %zu), %zu failed; best %s\n", r.measured, r.resumed, r.failed,
              r.best ? r.best->to_string().c_str() : "none");

  // Side by side, in this process (tuning is over: it may run kernels now).
  std::vector<Argument> args = task.make_args();
  LoweredFunc def = task.reference();
  Function ref = build(def)(def.name);
  ref.call(args);
  std::vector<float> expected = args[2].array().to_vector<float>();
  double flop = 2.0 * n * n * double(n);
  struct Row {
    const char* name;
    double s;
  } rows[] = {
      {"default (as written)", time_evaluator(ref, 1, 1).run(args).min()},
      {"hand-written (sgemm_best)",
       time_kernel(te_examples::lower_sgemm(te_examples::sgemm_best(n, n, n), "sgemm_hand"), args, expected, 10)},
      {"tuned (apply_best)", time_kernel(apply_best(records, task), args, expected, 10)},
  };
  std::printf("\n%-28s %12s %10s %12s %14s\n", "sgemm schedule", "time", "GFLOP/s", "vs default", "vs hand-written");
  for (const Row& row : rows)
    std::printf("%-28s %9.3f ms %10.1f %11.1fx %13.2fx\n", row.name, row.s * 1e3, flop / row.s * 1e-9,
                rows[0].s / row.s, rows[1].s / row.s);
  return 0;
}
