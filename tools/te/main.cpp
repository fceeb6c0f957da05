// `te`: drives generator libraries (TE_GENERATOR / TE_TUNING_TASK / TE_COMPUTE) from the
// shell, as tvmc drives TVM: list, lower, build, run, tune, auto-schedule. A thin layer over te's public API.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <string>

#include "commands.h"
#include "te/error.h"
#include "te/generator.h"

namespace te::cli {

void load_library(const std::string& path) { load_generator_library(path); }

Target cli_target(const std::string& target, const std::string& cpu, const std::string& features) {
  Target t = Target::parse(target);
  if (t.is_cuda() && (!cpu.empty() || !features.empty()))
    throw Error("--mcpu and --mattr apply to CPU targets, not to --target cuda");
  if (!cpu.empty()) t.cpu = cpu;
  if (!features.empty()) t.features = features;
  return t;
}

bool runs_on_host(const Target& target) {
  try {
    check_runs_on_host(target, "te");
    return true;
  } catch (const Error&) {
    return false;
  }
}

GenerateOptions output_options(const Target& target, bool no_shared) {
  GenerateOptions options;
  if (!target.is_cuda()) options.target = target;
  options.library = !target.is_cuda() && !no_shared;
  return options;
}

namespace {

// Errors are one line on stderr: a multi-line message (a lowering error quoting IR)
// has its lines joined.
int report(const char* message) {
  std::string text = message;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at)) text.replace(at, 1, " | ");
  std::cerr << "te: " << text << "\n";
  return 1;
}

}  // namespace
}  // namespace te::cli

int main(int argc, char** argv) {
  CLI::App app{"te: list, lower, build, run, tune and auto-schedule the kernels of a te generator library"};
  app.name("te");
  app.require_subcommand(1);
  app.footer(
      "A generator library is a shared library of TE_GENERATOR, TE_TUNING_TASK and\n"
      "TE_COMPUTE definitions (te/generator.h) linked with te::te, e.g. made with CMake's\n"
      "te_add_generator_library(gen gen.cpp). 'te <command> --help' describes a command.\n"
      "Exit status, the same for every command: 0 on success; 2 for a malformed command\n"
      "line (an unknown option, a missing argument, a value out of its option's range, a\n"
      "--target that is not llvm, cuda or a triple); 1 when te reports an error doing the\n"
      "work (a missing file, an unknown kernel, a triple LLVM does not know, bad inputs).");
  te::cli::add_list_command(app);
  te::cli::add_lower_command(app);
  te::cli::add_build_command(app);
  te::cli::add_run_command(app);
  te::cli::add_tune_command(app);
  te::cli::add_auto_schedule_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "te: " << e.what() << " (see te --help)\n";
    return 2;
  } catch (const std::exception& e) {
    return te::cli::report(e.what());
  }
  return 0;
}
