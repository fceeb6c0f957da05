// te run LIB KERNEL --inputs a.npy ...: runs the kernel's cpu function through the JIT on
// .npy files, saves its outputs and times it as tvmc run does.
#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "commands.h"
#include "te/generator.h"

namespace te::cli {
namespace {

struct RunArgs {
  std::string library, kernel, outputs, records;
  std::vector<std::string> inputs, shapes, params;
  bool print_time = false;
  int number = 1, repeat = 1, min_repeat_ms = 0;
};

// "name=value" of --shape (an integer) or --param (an integer or a real number).
std::pair<std::string, Argument> parse_value(const std::string& text, const char* option, bool integer_only) {
  size_t eq = text.find('=');
  std::string name = text.substr(0, eq), value = eq == std::string::npos ? "" : text.substr(eq + 1);
  if (eq == std::string::npos || name.empty() || value.empty())
    throw Error(fmt::format("{} '{}': expected NAME=VALUE", option, text));
  char* end = nullptr;
  errno = 0;
  long long i = std::strtoll(value.c_str(), &end, 10);
  if (*end == '\0' && errno == 0) return {name, Argument(int64_t{i})};
  if (!integer_only) {
    errno = 0;
    double d = std::strtod(value.c_str(), &end);
    if (*end == '\0' && errno == 0) return {name, Argument(d)};
  }
  throw Error(fmt::format("{} '{}': '{}' is not {}", option, text, value, integer_only ? "an integer" : "a number"));
}

void print_time(const TimingResult& t) {
  // tvmc's summary, in milliseconds.
  std::cout << "Execution time summary:\n"
            << fmt::format(" {:>12} {:>12} {:>12} {:>12} {:>12}\n", "mean (ms)", "median (ms)", "max (ms)", "min (ms)",
                           "std (ms)")
            << fmt::format(" {:>12.4f} {:>12.4f} {:>12.4f} {:>12.4f} {:>12.4f}\n", t.mean * 1e3, t.median() * 1e3,
                           t.max() * 1e3, t.min() * 1e3, t.std_dev() * 1e3);
}

void run_run(const RunArgs& a) {
  load_library(a.library);
  GeneratedKernel k = find_kernel(a.kernel, a.records);
  if (!k.cpu.body.defined())
    throw Error("kernel '" + a.kernel + "' has no cpu function (te run runs the cpu function)");
  std::map<std::string, Argument> values;
  for (const std::string& s : a.shapes) values.insert(parse_value(s, "--shape", true));
  for (const std::string& s : a.params) values.insert(parse_value(s, "--param", false));
  Function f = build(k.cpu, k.cpu_options)(k.cpu.name);
  // The inputs are the buffers f only reads, in order; a bfloat16 one comes as uint16 bits
  // (NumPy has no bfloat16: see NDArray::save_npy).
  std::vector<DataType> read_types;
  for (size_t p = 0; p < k.cpu.params.size(); ++p)
    if (k.cpu.params[p].is_buffer() && !f.writes(p)) read_types.push_back(k.cpu.params[p].buffer.dtype());
  std::vector<NDArray> inputs;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    const bool bf16 = i < read_types.size() && read_types[i] == BFloat(16);
    inputs.push_back(bf16 ? NDArray::load_npy(a.inputs[i], BFloat(16)) : NDArray::load_npy(a.inputs[i]));
  }

  std::vector<Argument> args = f.make_arguments(inputs, values);
  f.call(args);
  if (!a.outputs.empty()) {
    std::filesystem::create_directories(a.outputs);
    std::vector<std::string> names = f.param_names();
    for (size_t p = 0; p < args.size(); ++p) {
      if (!f.writes(p)) continue;
      // KERNEL.PARAM.npy: two kernels' runs into one folder keep their outputs apart.
      std::string path = (std::filesystem::path(a.outputs) / (a.kernel + "." + names[p] + ".npy")).string();
      args[p].array().save_npy(path);
      std::cout << path << "\n";
    }
  }
  if (a.print_time) print_time(time_evaluator(f, a.number, a.repeat, a.min_repeat_ms).run(args));
}

}  // namespace

void add_run_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("run", "Run a kernel on .npy files (JIT) and time it");
  cmd->footer(
      "DESCRIPTION\n"
      "  JIT-compiles the kernel's cpu function for this machine and calls it once. The\n"
      "  inputs are the buffers it reads, in parameter order; each buffer it writes is a new\n"
      "  array shaped from the shape variables the inputs bind and --shape gives. Each\n"
      "  scalar parameter needs --param. Dtypes and shapes are checked at the call.\n"
      "  --outputs DIR saves each output as DIR/KERNEL.NAME.npy (NAME: the parameter's name).\n"
      "  bfloat16 arrays are .npy files of uint16, the bits (NumPy has no bfloat16).\n"
      "  --print-time then times it: --repeat measurements, each the mean of --number calls,\n"
      "  summarised as mean, median, max, min and standard deviation in milliseconds.\n"
      "EXAMPLES\n"
      "  te run libgen.so vadd --inputs a.npy b.npy --outputs out/\n"
      "  te run libgen.so vadd --inputs a.npy b.npy --print-time --repeat 100");
  auto a = std::make_shared<RunArgs>();
  cmd->add_option("library", a->library, "Generator library (.so)")->required();
  cmd->add_option("kernel", a->kernel, "Kernel name (see te list)")->required();
  cmd->add_option("--inputs", a->inputs, "The input arrays (.npy), in parameter order");
  cmd->add_option("--shape", a->shapes, "NAME=VALUE: a shape variable no input binds");
  cmd->add_option("--param", a->params, "NAME=VALUE: a scalar parameter");
  cmd->add_option("--outputs", a->outputs, "Folder for the outputs (KERNEL.NAME.npy)");
  cmd->add_flag("--print-time", a->print_time, "Time the kernel");
  cmd->add_option("--repeat", a->repeat, "Measurements with --print-time")
      ->check(whole_number(1))
      ->capture_default_str();
  cmd->add_option("--number", a->number, "Calls averaged per measurement")
      ->check(whole_number(1))
      ->capture_default_str();
  cmd->add_option("--min-repeat-ms", a->min_repeat_ms, "Grow --number until one measurement takes this long")
      ->check(whole_number(0))
      ->capture_default_str();
  cmd->add_option("--records", a->records, "A tuning task's records: run its best config (see te tune)");
  cmd->callback([a] { run_run(*a); });
}

}  // namespace te::cli
