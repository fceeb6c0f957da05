// The subcommands of the `te` command line; each adds itself to the app and runs when
// chosen. Errors are thrown (te::Error) and reported by main() as one line.
#pragma once
#include <CLI/CLI.hpp>

#include <string>

namespace te::cli {

void add_list_command(CLI::App& app);
void add_lower_command(CLI::App& app);
void add_build_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_tune_command(CLI::App& app);
void add_auto_schedule_command(CLI::App& app);

// Loads the generator library every subcommand's first argument names.
void load_library(const std::string& path);

}  // namespace te::cli
