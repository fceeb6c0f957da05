// One fuzz case: a program lowered from a random tensor graph and schedule, the inputs to
// run it on, and the other programs that must compute the same outputs. check_case runs
// them through interpret(), the LLVM JIT and (for GPU-bound programs, see cuda_batch.h)
// the CUDA emulation, and compares every array afterwards.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_values.h"
#include "te/te.h"

namespace te::fuzz {

// A lowered function with the arguments to call it with (in its parameter order).
struct Variant {
  std::string label;  // "scheduled", "unscheduled", "constants read from memory", ...
  LoweredFunc func;
  std::vector<Argument> args;
};

struct FuzzCase {
  uint64_t seed = 0;
  std::string kind;     // "expr", "expr --bfloat16" or "graph"
  std::string program;  // the tensors and the schedule steps, as text
  // Non-empty when te refused the generated schedule with a te::Error (not an internal
  // error): the message. Such a case checks nothing; the generators aim never to do it.
  std::string rejected;
  // Non-empty when generating or lowering failed in a way that is a bug (an internal
  // error, a crash-like exception): the failure.
  std::string failure;

  Variant main;                     // the scheduled program: interpret, JIT, CUDA
  std::vector<Variant> references;  // interpreted; arrays of the same name must match main's
  Compare compare = Compare::Bits;
  double rel_tol = 0;
  double abs_tol = 0;  // Compare::Relative: outputs near zero after cancellation
  BuildOptions build_options;
  bool run_jit = true;     // false when the function has a barrier (GPU only)
  bool gpu = false;        // the function binds GPU threads: the CUDA emulation applies
  int schedule_steps = 0;  // graph cases on the CPU: the primitives the schedule tried
};

struct CaseResult {
  enum class Status { Pass, Rejected, Fail };
  Status status = Status::Pass;
  std::string report;  // for Rejected and Fail: the seed, the program and what differed
};

// Runs main through interpret() and the JIT and every reference through interpret();
// compares all arrays. The report of a failure holds everything needed to reproduce it.
CaseResult check_case(const FuzzCase& c);

// The outputs of main as interpret() computes them (for the CUDA batch); throws what
// interpret() throws.
std::vector<Argument> interpret_copy(const Variant& v);

// Deep copies of the arrays among args.
std::vector<Argument> copy_arguments(const std::vector<Argument>& args);

// The header of a failure report: seed, kind, program text and lowered IR.
std::string describe(const FuzzCase& c);

}  // namespace te::fuzz
