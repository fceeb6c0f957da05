// te auto-schedule LIB KERNEL: a TE_COMPUTE scheduled by te::auto_schedule (the rules, or a
// measured search with --trials), written as te build writes a kernel's files.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "commands.h"
#include "te/generator.h"

namespace te::cli {
namespace {

struct AutoScheduleArgs {
  std::string library, kernel, target = "llvm", cpu, features, out = ".", records;
  std::vector<std::string> constant_inputs;
  int trials = 0, threads = 0, vector_bits = 0, cuda_threads = 256;
  double time_budget_s = 0;
  uint64_t seed = 0;
  bool no_shared = false, quiet = false;
};

void run_auto_schedule(const AutoScheduleArgs& a) {
  Target target = cli_target(a.target, a.cpu, a.features);
  if (a.vector_bits > 0) {
    if (target.is_cuda()) throw Error("--vector-bits applies to CPU targets, not to --target cuda");
    target.vector_bits = a.vector_bits;
  }
  const bool cuda = target.is_cuda();
  const GenerateOptions options = output_options(target, a.no_shared);
  // A search runs its candidates here: on this CPU, or one whose every feature it has.
  if (!cuda && !target.is_host() && a.trials > 0 && !runs_on_host(target))
    throw Error(
        fmt::format("--trials {} measures kernels on this machine's CPU, so it cannot search for "
                    "--target {}{}; search with --target llvm, or give --trials 0 (the rules)",
                    a.trials, a.target, a.cpu.empty() ? "" : " --mcpu " + a.cpu));
  load_library(a.library);
  AutoScheduleOptions o;
  o.target = target;
  o.trials = a.trials;
  o.records = a.records;
  o.time_budget_s = a.time_budget_s;
  o.threads = a.threads;
  o.seed = a.seed;
  o.progress = !a.quiet;
  o.cuda_threads_per_block = a.cuda_threads;
  GeneratedKernel k = auto_schedule_kernel(a.kernel, o, a.constant_inputs);
  for (const std::string& path : write_kernel(a.kernel, k, a.out, !cuda, cuda, options)) std::cout << path << "\n";
}

}  // namespace

void add_auto_schedule_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("auto-schedule", "Schedule a computation automatically and build it");
  cmd->footer(
      "DESCRIPTION\n"
      "  For a TE_COMPUTE (a computation without a schedule), makes the schedule with\n"
      "  te::auto_schedule and writes the kernel's files as 'te build' does (KERNEL.o,\n"
      "  KERNEL.so, KERNEL.h; KERNEL.cu and KERNEL_cuda.h with --target cuda).\n"
      "    --trials 0 (default)  te's rules alone, nothing measured (well under a second);\n"
      "                          with --records, the best config the file holds instead\n"
      "    --trials N            a search: N configs measured on this CPU in forked\n"
      "                          workers, ranked by a learned cost model; with --records\n"
      "                          it appends to and resumes from that file\n"
      "  What the rules decided and the search's best-so-far go to stderr (--quiet: not).\n"
      "  --constant-inputs W,...  inputs set once and reused (a model's weights): the rules\n"
      "                          may take one in a faster layout, and then also write\n"
      "                          KERNEL_pretransform_W (.o/.h, or .cu), the function that\n"
      "                          lays W out; call it once and pass its output for W.\n"
      "  te lower/build/run KERNEL --records FILE later use the file's best config.\n"
      "EXAMPLES\n"
      "  te auto-schedule libgen.so matmul -o out/\n"
      "  te auto-schedule libgen.so matmul --trials 200 --records matmul.jsonl -o out/\n"
      "  te auto-schedule libgen.so matmul --target cuda -o out/\n"
      "  te auto-schedule libgen.so conv --constant-inputs W -o out/\n"
      "  te auto-schedule libgen.so matmul --target aarch64-linux-gnu --mcpu neoverse-n1 -o out/");
  auto a = std::make_shared<AutoScheduleArgs>();
  cmd->add_option("library", a->library, "Generator library (.so)")->required();
  cmd->add_option("kernel", a->kernel, "Computation name (a TE_COMPUTE, see te list)")->required();
  cmd->add_option("--target", a->target, "llvm, cuda, or a target triple")
      ->check(target_name(true))
      ->capture_default_str();
  cmd->add_option("--mcpu", a->cpu, "CPU to compile for (LLVM's name)");
  cmd->add_option("--mattr", a->features, "CPU features to add or remove, e.g. +sve,-avx512f");
  cmd->add_option("--trials", a->trials, "Configs measured by the search (0: the rules alone)")
      ->check(whole_number(0))
      ->capture_default_str();
  cmd->add_option("--records", a->records, "JSON-lines records: written by a search, read with --trials 0");
  cmd->add_option("--constant-inputs", a->constant_inputs, "Inputs set once (weights), comma-separated")
      ->delimiter(',');
  cmd->add_option("--time-budget", a->time_budget_s, "Seconds the search may take (0: no limit)")
      ->check(real_number(0, true, "seconds"))
      ->capture_default_str();
  cmd->add_option("--threads", a->threads, "CPU threads the kernel is made for (0: te's pool, TE_NUM_THREADS)")
      ->check(whole_number(0))
      ->capture_default_str();
  cmd->add_option("--vector-bits", a->vector_bits,
                  "Vector width the rules make (128, 256, 512; 0: this CPU's, or 128 for another target)")
      ->check(whole_number(0))
      ->capture_default_str();
  cmd->add_option("--cuda-threads", a->cuda_threads, "CUDA threads per block (a multiple of 32)")
      ->check(whole_number(1))
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "The search's random seed")->capture_default_str();
  cmd->add_option("-o,--output", a->out, "Output folder (created when missing)")->capture_default_str();
  cmd->add_flag("--no-shared", a->no_shared, "Skip the shared library (KERNEL.so)");
  cmd->add_flag("-q,--quiet", a->quiet, "Print neither the rules' decisions nor the search's progress");
  cmd->callback([a] { run_auto_schedule(*a); });
}

}  // namespace te::cli
