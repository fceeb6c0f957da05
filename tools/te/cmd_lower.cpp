// te lower LIB KERNEL: the kernel's loop IR, optionally after one lowering pass.
#include <stdlib.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "commands.h"
#include "te/generator.h"

namespace te::cli {
namespace {

struct LowerArgs {
  std::string library, kernel, target = "llvm", dump_ir, records;
};

void run_lower(const LowerArgs& a) {
  if (!a.dump_ir.empty()) {
    std::vector<std::string> passes = lower_pass_names();
    if (a.dump_ir != "all" && std::find(passes.begin(), passes.end(), a.dump_ir) == passes.end())
      throw Error("--dump-ir: unknown pass '" + a.dump_ir + "'; the passes are: all, " + [&] {
        std::string list;
        for (const std::string& p : passes) list += (list.empty() ? "" : ", ") + p;
        return list;
      }());
    // lower() reads TE_DUMP_IR each time it runs: the generator's lowering prints it.
    setenv("TE_DUMP_IR", a.dump_ir.c_str(), 1);
  }
  load_library(a.library);
  GeneratedKernel k = find_kernel(a.kernel, a.records);
  const bool cuda = Target::parse(a.target).is_cuda();
  const LoweredFunc& f = cuda ? k.cuda : k.cpu;
  if (!f.body.defined()) throw Error("kernel '" + a.kernel + "' has no " + (cuda ? "cuda" : "cpu") + " function");
  std::cout << f;
}

}  // namespace

void add_lower_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("lower", "Print a kernel's loop IR");
  cmd->footer(
      "DESCRIPTION\n"
      "  Runs the kernel's generator and prints the loop IR of its cpu function (or, with\n"
      "  --target cuda, of its cuda function) on stdout. --dump-ir PASS also prints the IR\n"
      "  after that lowering pass on stderr (as TE_DUMP_IR=PASS does).\n"
      "EXAMPLES\n"
      "  te lower libgen.so vadd\n"
      "  te lower libgen.so vadd --target cuda --dump-ir storage_flatten");
  auto a = std::make_shared<LowerArgs>();
  cmd->add_option("library", a->library, "Generator library (.so)")->required();
  cmd->add_option("kernel", a->kernel, "Kernel name (see te list)")->required();
  cmd->add_option("--target", a->target, "Which function: llvm (the cpu one) or cuda")
      ->check(target_name(false))
      ->capture_default_str();
  cmd->add_option("--dump-ir", a->dump_ir, "Also print the IR after this pass (or 'all') on stderr");
  cmd->add_option("--records", a->records, "A tuning task's records: lower its best config (see te tune)");
  cmd->callback([a] { run_lower(*a); });
}

}  // namespace te::cli
