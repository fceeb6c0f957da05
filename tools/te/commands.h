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

// Where `te build` and `te auto-schedule` compile a CPU kernel: --target (llvm: this
// machine; a triple: another) with --mcpu / --mattr, the .so unless --no-shared. te::Error
// when --mcpu or --mattr come with --target cuda.
GenerateOptions output_options(const std::string& target, const std::string& cpu, const std::string& features,
                               bool no_shared);

// Option checks in te's words (checks.cpp); a failed one exits with status 2.
// A whole number from min to max ("--trials: expects a whole number of at least 1, not '-3'").
CLI::Validator whole_number(long long min, long long max = 2147483647);
// A finite real number above min, or from min when inclusive, of unit ("seconds").
CLI::Validator real_number(double min, bool inclusive, const char* unit);
// --target: llvm or cuda, and with triples also a target triple (anything with a '-').
CLI::Validator target_name(bool triples);

}  // namespace te::cli
