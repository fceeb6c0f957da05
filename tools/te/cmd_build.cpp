// te build LIB KERNEL --target llvm|cuda|TRIPLE -o DIR: the kernel's files ahead of time.
#include <iostream>
#include <memory>

#include "commands.h"
#include "te/generator.h"

namespace te::cli {
namespace {

struct BuildArgs {
  std::string library, kernel, target = "llvm", cpu, features, out = ".", records;
  bool no_shared = false;
};

void run_build(const BuildArgs& a) {
  load_library(a.library);
  const Target target = cli_target(a.target, a.cpu, a.features);
  const bool cuda = target.is_cuda();
  // The CPU part is made (and its records chosen) for the CPU it is compiled for.
  GeneratedKernel k = find_kernel(a.kernel, a.records, cuda ? Target() : target);
  if (cuda && !target.arch.empty()) k.cuda_options.arch = target.arch;
  GenerateOptions options = output_options(target, a.no_shared);
  for (const std::string& path : write_kernel(a.kernel, k, a.out, !cuda, cuda, options)) std::cout << path << "\n";
}

}  // namespace

void add_build_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("build", "Compile a kernel ahead of time");
  cmd->footer(
      "DESCRIPTION\n"
      "  Writes the kernel's files into the output folder and prints their paths:\n"
      "    --target llvm      KERNEL.o, KERNEL.so and KERNEL.h for this machine\n"
      "    --target TRIPLE    the same for another target, e.g. aarch64-linux-gnu (the .so\n"
      "                       is linked by TRIPLE-gcc, or $CC); TVM's spelling works too:\n"
      "                       --target \"llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a78\"\n"
      "    --target cuda      KERNEL.cu and KERNEL_cuda.h (the cuda function, for nvcc;\n"
      "                       its launcher is KERNEL_cuda(), so it links beside KERNEL.o);\n"
      "                       \"cuda -arch=sm_90a\" checks it is for that GPU\n"
      "  --mcpu picks the CPU (LLVM's names: cortex-a78, neoverse-n1, x86-64-v3, ...): the\n"
      "  host's own by default on this machine's triple, the generic one on another triple.\n"
      "  The C function is int32_t KERNEL(buffers..., shape variables...) (see KERNEL.h);\n"
      "  objects link with libte_runtime only.\n"
      "EXAMPLES\n"
      "  te build libgen.so vadd -o out/\n"
      "  te build libgen.so vadd --target aarch64-linux-gnu --mcpu cortex-a78 -o out/\n"
      "  te build libgen.so vadd --mcpu x86-64-v3 -o out/\n"
      "  te build libgen.so sgemm --records sgemm.jsonl -o out/");
  auto a = std::make_shared<BuildArgs>();
  cmd->add_option("library", a->library, "Generator library (.so)")->required();
  cmd->add_option("kernel", a->kernel, "Kernel name (see te list)")->required();
  cmd->add_option("--target", a->target, "llvm, cuda, a target triple, or \"llvm -mtriple=T -mcpu=C -mattr=F\"")
      ->check(target_name(true))
      ->capture_default_str();
  cmd->add_option("--mcpu", a->cpu, "CPU to compile for (LLVM's name)");
  cmd->add_option("--mattr", a->features, "CPU features to add or remove, e.g. +sve,-avx512f");
  cmd->add_option("-o,--output", a->out, "Output folder (created when missing)")->capture_default_str();
  cmd->add_flag("--no-shared", a->no_shared, "Skip the shared library (KERNEL.so)");
  cmd->add_option("--records", a->records, "A tuning task's records: build its best config (see te tune)");
  cmd->callback([a] { run_build(*a); });
}

}  // namespace te::cli
