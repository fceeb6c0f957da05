// Auto-tuning: for sgemm 1024 and grid_sample 4x32x64x64, te's default schedule (as
// written), the hand-written one and the tuned one (apply_best of the tuning records) in
// one run. Groups "tune/sgemm/1024" and "tune/grid_sample/<shape>": the default and the
// hand-written schedules are the baselines, so the tuned row's vs_ ratios are tuned vs
// default and tuned vs hand-written.
//
// The records live in $TE_BENCH_TUNE_DIR (default: the working directory), one file per
// kernel and thread count. Before any kernel of this run executes (registration time:
// the tuner forks its workers, see te/autotune/measure.h), each kernel whose group the
// --benchmark_filter selects is tuned, resuming from its records, up to
// $TE_BENCH_TUNE_TRIALS configs (default 24; 0: use the records as they are).
#include <te/autotune.h>
#include <te/te.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench_util.h"
#include "cases.h"
#include "tune_tasks.h"

namespace te_bench {

namespace {

struct TuneCase {
  te::autotune::Task task;
  std::string group, records;
  std::function<te::LoweredFunc()> hand;            // the hand-written schedule
  double tolerance;                                 // relative, against the default's output
  std::optional<te::autotune::Config> hand_config;  // measured first
};

void tune_if_selected(TuneCase& c) {
  const char* env = std::getenv("TE_BENCH_TUNE_TRIALS");
  size_t trials = env ? size_t(std::atoi(env)) : 24;
  if (trials == 0 || !selected_by_filter(c.group)) return;
  te::autotune::ModelTuner tuner(c.task.space);
  if (c.hand_config) tuner.measure_first({*c.hand_config});
  te::autotune::TuneOptions opt;
  opt.n_trial = trials;
  opt.records_path = c.records;
  // A config's cost is the median of its calls: 15 of them.
  opt.measure.repeat = 15;
  opt.measure.min_repeat_ms = 10;
  opt.measure.timeout_s = 30;
  opt.measure.rtol = opt.measure.atol = c.tolerance;
  te::autotune::tune(c.task, tuner, opt);
}

// Registers default, hand-written and tuned; the default's output is the reference.
void register_case(const std::shared_ptr<TuneCase>& c, double work, const std::string& unit, int default_iterations) {
  results().define_group(c->group, {work, unit, 0});
  auto args = std::make_shared<std::vector<te::Argument>>();
  auto expected = std::make_shared<std::vector<float>>();
  auto prepare = [c, args, expected](const std::string& impl) -> std::function<void()> {
    if (args->empty()) *args = c->task.make_args();
    te::LoweredFunc f;
    if (impl == "te_default")
      f = c->task.reference();
    else if (impl == "te_hand")
      f = c->hand();
    else
      f = te::autotune::apply_best(c->records, c->task);
    te::Function fn = te::build(f)(f.name);
    fn.call(*args);
    std::vector<float> out = args->back().array().to_vector<float>();
    if (expected->empty()) *expected = out;
    for (size_t i = 0; i < out.size(); ++i)
      if (!(std::abs(out[i] - (*expected)[i]) <= c->tolerance * (1 + std::abs((*expected)[i])))) return nullptr;
    return [fn, args] { fn.call(*args); };
  };
  for (const char* impl : {"te_default", "te_hand", "te_tuned"}) {
    const bool baseline = std::string(impl) != "te_tuned";
    auto call = std::make_shared<std::function<void()>>();
    add(
        c->group, impl,
        [=](benchmark::State& st) {
          if (!*call) {
            if (std::string(impl) == "te_tuned" &&
                !te::autotune::best_config(te::autotune::read_records_file(c->records).records, c->task.key,
                                           c->task.space))
              return st.SkipWithError(("no tuning record of " + c->task.key + " in " + c->records).c_str());
            *call = prepare(impl);
            if (!*call) return st.SkipWithError((std::string(impl) + ": wrong result").c_str());
          }
          run_case(st, c->group, impl, baseline, *call);
        },
        std::string(impl) == "te_default" ? default_iterations : 0);
  }
}

}  // namespace

void register_tune() {
  const char* dir_env = std::getenv("TE_BENCH_TUNE_DIR");
  const std::string dir = dir_env ? dir_env : ".";
  const std::string suffix = "threads" + std::to_string(threads());

  auto sgemm = std::make_shared<TuneCase>();
  constexpr int n = 1024;
  sgemm->task = te_examples::sgemm_tuning_task(n);
  sgemm->task.key += "/" + suffix;
  sgemm->group = "tune/sgemm/" + std::to_string(n);
  sgemm->records = dir + "/tune_sgemm_" + std::to_string(n) + "_" + suffix + ".jsonl";
  sgemm->hand = [] { return te_examples::lower_sgemm(te_examples::sgemm_best(n, n, n), "sgemm_hand"); };
  sgemm->tolerance = 1e-3;
  sgemm->hand_config = te_examples::sgemm_hand_config(sgemm->task, n);

  auto gs = std::make_shared<TuneCase>();
  te_examples::GridSampleShape shape;
  gs->task = te_examples::grid_sample_tuning_task(shape);
  gs->task.key += "/" + suffix;
  gs->group = "tune/grid_sample/" + shape.name();
  gs->records = dir + "/tune_grid_sample_" + shape.name() + "_" + suffix + ".jsonl";
  gs->hand = [shape] { return te_examples::grid_sample_kernel(shape, 64, 0, 0, "grid_sample_hand"); };
  gs->tolerance = 1e-4;
  gs->hand_config = te_examples::grid_sample_hand_config(gs->task, shape);

  // Tuning first: no kernel has run in this process yet.
  tune_if_selected(*sgemm);
  tune_if_selected(*gs);
  // The default sgemm takes seconds at 1024: one timed call ranks it.
  register_case(sgemm, 2.0 * n * n * double(n) * 1e-9, "GFLOP/s", 1);
  register_case(gs, double(shape.N) * shape.C * shape.Ho * shape.Wo * 1e-9, "Goutputs/s", 0);
}

}  // namespace te_bench
