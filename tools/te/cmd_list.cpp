// te list LIB: the kernels of a generator library and what each has.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "commands.h"
#include "te/generator.h"

namespace te::cli {

void add_list_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("list", "List the kernels of a generator library");
  cmd->footer(
      "OUTPUT\n"
      "  One line per kernel: its name, then 'cpu' and/or 'cuda' for a TE_GENERATOR (the\n"
      "  parts it defines), 'tuning task <key>' for a TE_TUNING_TASK, or 'compute' for a\n"
      "  TE_COMPUTE (a computation that te auto-schedule schedules).\n"
      "EXAMPLE\n"
      "  te list libgen.so");
  auto library = std::make_shared<std::string>();
  cmd->add_option("library", *library, "Generator library (.so)")->required();
  cmd->callback([library] {
    load_library(*library);
    for (const std::string& name : registered_generators()) {
      GeneratedKernel k = run_generator(name);
      std::string parts = k.cpu.body.defined() ? "cpu" : "";
      if (k.cuda.body.defined()) parts += parts.empty() ? "cuda" : " cuda";
      std::cout << fmt::format("{} {}\n", name, parts);
    }
    for (const std::string& name : registered_tuning_tasks())
      std::cout << fmt::format("{} tuning task {}\n", name, tuning_task(name).key);
    for (const std::string& name : registered_computes()) {
      ComputeDefinition d = compute_definition(name);
      std::string args;
      for (const Tensor& t : d.args) args += (args.empty() ? "" : ", ") + t.name();
      std::cout << fmt::format("{} compute ({})\n", name, args);
    }
  });
}

}  // namespace te::cli
