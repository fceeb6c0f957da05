// The subcommands of the `te` command line; each adds itself to the app and runs when
// chosen. Errors are thrown (te::Error) and reported by main() as one line.
#pragma once
#include <CLI/CLI.hpp>

#include <string>

#include "te/generator.h"

namespace te::cli {

void add_list_command(CLI::App& app);
void add_lower_command(CLI::App& app);
void add_build_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_tune_command(CLI::App& app);
void add_auto_schedule_command(CLI::App& app);

// Loads the generator library every subcommand's first argument names.
void load_library(const std::string& path);

// The target of `te build` and `te auto-schedule`: --target (te::Target's text: llvm, this
// machine; cuda; a triple or "llvm -mtriple=... -mcpu=..." for another) with --mcpu /
// --mattr replacing its CPU and features. te::Error when --mcpu or --mattr come with cuda.
Target cli_target(const std::string& target, const std::string& cpu, const std::string& features);
// Whether code for target runs on this machine (te::check_runs_on_host): a search or a
// tuning run measures it here.
bool runs_on_host(const Target& target);
// Where they write a CPU kernel: for target, with the .so unless --no-shared.
GenerateOptions output_options(const Target& target, bool no_shared);

// Option checks in te's words (checks.cpp); a failed one exits with status 2.
// A whole number from min to max ("--trials: expects a whole number of at least 1, not '-3'").
CLI::Validator whole_number(long long min, long long max = 2147483647);
// A finite real number above min, or from min when inclusive, of unit ("seconds").
CLI::Validator real_number(double min, bool inclusive, const char* unit);
// --target: llvm or cuda; with any_target, any te::Target text (a triple, "llvm -mcpu=...").
CLI::Validator target_name(bool any_target);

}  // namespace te::cli
