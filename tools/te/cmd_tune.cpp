// te tune LIB TASK --trials N --records FILE: tunes a TE_TUNING_TASK with te::autotune.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "commands.h"
#include "te/autotune.h"
#include "te/generator.h"

namespace te::cli {
namespace {

struct TuneArgs {
  std::string library, task, records, tuner = "model", target = "llvm", cpu, features;
  size_t trials = 64, early_stopping = 0;
  uint64_t seed = 0;
  int repeat = 3;
  double timeout_s = 10;
};

void run_tune(const TuneArgs& a) {
  const Target target = cli_target(a.target, a.cpu, a.features);
  if (target.is_cuda())
    throw Error("--target cuda: te tune measures kernels on this machine's CPU; name an LLVM target it runs");
  load_library(a.library);
  autotune::Task task = tuning_task(a.task);
  task.target = target;
  std::unique_ptr<autotune::Tuner> tuner;
  if (a.tuner == "grid")
    tuner = std::make_unique<autotune::GridTuner>(task.space);
  else if (a.tuner == "random")
    tuner = std::make_unique<autotune::RandomTuner>(task.space, a.seed);
  else
    tuner = std::make_unique<autotune::ModelTuner>(task.space, autotune::ModelTunerOptions{a.seed});
  autotune::TuneOptions options;
  options.n_trial = a.trials;
  options.records_path = a.records;
  options.early_stopping = a.early_stopping;
  options.measure.repeat = a.repeat;
  options.measure.timeout_s = a.timeout_s;
  autotune::TuneResult r = autotune::tune(task, *tuner, options);
  std::cout << fmt::format("{}: measured {} (resumed {}), {} failed\n", task.key, r.measured, r.resumed, r.failed);
  if (r.best)
    std::cout << fmt::format("best: {} ({:.4f} ms)\n", r.best->to_string(), r.best_cost * 1e3);
  else
    std::cout << "best: none (every config failed)\n";
}

}  // namespace

void add_tune_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("tune", "Auto-tune a tuning task's schedule knobs");
  cmd->footer(
      "DESCRIPTION\n"
      "  Measures --trials configs of the TE_TUNING_TASK's space in forked workers (a config\n"
      "  that crashes, hangs or computes a wrong result is recorded as failed) and appends\n"
      "  a JSON line per config to the records file; a run with the same file resumes.\n"
      "  te build/run/lower --records FILE then use the best config.\n"
      "  --target/--mcpu/--mattr compile the configs for another CPU this machine can run\n"
      "  (e.g. --mcpu x86-64-v3 on an AVX-512 machine); records are kept per target.\n"
      "EXAMPLES\n"
      "  te tune libgen.so sgemm --trials 200 --records sgemm.jsonl\n"
      "  te tune libgen.so sgemm --mcpu x86-64-v3 --records sgemm.jsonl\n"
      "  te build libgen.so sgemm --records sgemm.jsonl -o out/");
  auto a = std::make_shared<TuneArgs>();
  cmd->add_option("library", a->library, "Generator library (.so)")->required();
  cmd->add_option("task", a->task, "Tuning task name (see te list)")->required();
  cmd->add_option("--trials", a->trials, "Configs measured in all (resumed records count)")
      ->check(whole_number(1))
      ->capture_default_str();
  cmd->add_option("--records", a->records, "JSON-lines records file (appended, resumed)")->required();
  cmd->add_option("--target", a->target, "llvm, or \"llvm -mcpu=C -mattr=F\" (a CPU this machine runs)")
      ->check(target_name(true))
      ->capture_default_str();
  cmd->add_option("--mcpu", a->cpu, "CPU to compile for (LLVM's name)");
  cmd->add_option("--mattr", a->features, "CPU features to add or remove, e.g. -avx512f");
  cmd->add_option("--tuner", a->tuner, "model, random or grid")
      ->check(CLI::IsMember({"model", "random", "grid"}))
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "Random seed of the model and random tuners")->capture_default_str();
  cmd->add_option("--early-stopping", a->early_stopping, "Stop after this many configs without a better one (0: never)")
      ->check(whole_number(0))
      ->capture_default_str();
  cmd->add_option("--repeat", a->repeat, "Timed calls per config (its cost is the median)")
      ->check(whole_number(1))
      ->capture_default_str();
  cmd->add_option("--timeout", a->timeout_s, "Seconds per config before it counts as failed")
      ->check(real_number(0, false, "seconds"))
      ->capture_default_str();
  cmd->callback([a] { run_tune(*a); });
}

}  // namespace te::cli
