/// \file
/// Generators: kernels compiled ahead of time during a build, as with Halide's generators.
///
/// A generator is a small program: each TE_GENERATOR defines one kernel by returning its
/// lowered schedules (or each TE_COMPUTE its computation alone, scheduled by
/// te::auto_schedule's rules), and te::generator_main (the program's main) writes the files:
///
///     // gen.cpp
///     #include <te/generator.h>
///     using namespace te;
///
///     TE_GENERATOR(vadd) {
///       Var n("n");
///       Tensor A = placeholder({n}, Float(32), "A");
///       Tensor B = placeholder({n}, Float(32), "B");
///       Tensor C = compute({n}, [&](Expr i) { return A(i) + B(i); }, "C");
///       Schedule cpu = create_schedule({C});
///       auto [xo, xi] = cpu[C].split(C.axis(0), 8);
///       cpu[C].vectorize(xi);
///       Schedule gpu = create_schedule({C});
///       auto [bx, tx] = gpu[C].split(C.axis(0), 64);
///       gpu[C].bind(bx, thread_axis("blockIdx.x"));
///       gpu[C].bind(tx, thread_axis("threadIdx.x"));
///       GeneratedKernel k;
///       k.cpu = lower(cpu, {A, B, C}, "vadd");
///       k.cuda = lower(gpu, {A, B, C}, "vadd");   // optional
///       return k;
///     }
///
/// CMake builds and runs it with te_add_kernels (cmake/teKernels.cmake):
///
///     te_add_kernels(mykernels GENERATOR gen.cpp KERNELS vadd CUDA_KERNELS vadd)
///     target_link_libraries(app PRIVATE mykernels)     # te::runtime only, no JIT
///
/// and the program calls `vadd(a, b, c, n)` from "vadd.h". Per kernel `<name>`:
///  - `<name>.o` and `<name>.h`: the CPU function `int32_t <name>(buffers..., vars...)` (see
///    te::export_object and te::export_header), compiled for the building machine's CPU
///    unless the kernel's cpu_options or the command line name another target;
///  - `<name>.cu` and `<name>_cuda.h`: the CUDA source of the `cuda` function (te::build_cuda)
///    with the host launcher `extern "C" cudaError_t <name>_cuda(..., cudaStream_t)`.
/// Files and C functions are named after the TE_GENERATOR name, whatever name the
/// LoweredFuncs were lowered with.
///
/// The command line of a generator (what te_add_kernels runs):
///     gen -o DIR [--cpu NAME]... [--cuda NAME]...   writes those files into DIR
///     gen ... [--target TRIPLE] [--mcpu CPU] [--mattr FEATURES]   objects for that target
///     gen -o DIR                                    writes every file of every kernel
///     gen --list                                    prints the kernels' names
/// Asking for a kernel that does not exist, or for a part a kernel lacks, is an error
/// naming what there is; so is a schedule that fails to lower or compile.
#pragma once
#include <string>
#include <vector>
#include <utility>

#include "te/auto_schedule.h"
#include "te/autotune/measure.h"
#include "te/export.h"
#include "te/target.h"
#include "te/te.h"  // a generator's file needs nothing else

namespace te {

/// What a TE_GENERATOR returns: the kernel's CPU and/or GPU lowering (at least one).
struct TE_API GeneratedKernel {
  LoweredFunc cpu;           ///< `<name>.o` and `<name>.h`; none when cpu.body is undefined
  LoweredFunc cuda;          ///< `<name>.cu` and `<name>_cuda.h`; none when cuda.body is undefined
  BuildOptions cpu_options;  ///< How the CPU function is compiled.
  CudaOptions cuda_options;  ///< How the CUDA source is generated.
  /// The functions that lay out the inputs `cpu` takes pretransformed (lower_pretransform,
  /// one per Schedule::pretransform), written beside it as files of their own names
  /// (`<f.name>.o`, `.h`), compiled as `cpu` is.
  std::vector<LoweredFunc> cpu_pretransforms;
  /// The same for `cuda` (`<f.name>.cu` and `<f.name>_cuda.h`).
  std::vector<LoweredFunc> cuda_pretransforms;
};

/// A kernel's definition: the function a TE_GENERATOR body becomes.
using GeneratorFunction = GeneratedKernel (*)();

/// Adds a kernel to the program's registry (TE_GENERATOR does this before main runs).
/// A name registered twice is reported by generator_main. Returns true.
TE_API bool register_generator(const char* name, GeneratorFunction fn);
/// The registered names, sorted.
TE_API std::vector<std::string> registered_generators();

/// Runs the generator `name` and writes the requested parts into dir (created if needed);
/// returns the paths written. te::Error when the kernel or a part does not exist, or when
/// lowering or compiling fails.
TE_API std::vector<std::string> generate_kernel(const std::string& name, const std::string& dir, bool cpu, bool cuda);

/// Runs the generator `name` (this process's registry): te::Error naming the kernels there
/// are when none is called so, or when it returns neither a cpu nor a cuda function.
TE_API GeneratedKernel run_generator(const std::string& name);

/// Where generate_kernel compiles the CPU part: the kernel's own cpu_options, with the
/// fields of `target` that are set (triple, cpu, features, vector_bits) replacing its own.
struct TE_API GenerateOptions {
  /// e.g. "aarch64-linux-gnu", "llvm -mcpu=x86-64-v3"; "llvm" (nothing set): the kernel's own.
  /// An LLVM target (te::Error for "cuda": the CUDA part is target independent).
  Target target;
  bool library = false;  ///< also `<name>.so` (te::export_library)
};

/// generate_kernel with the CPU part compiled for options' target.
TE_API std::vector<std::string> generate_kernel(const std::string& name, const std::string& dir, bool cpu, bool cuda,
                                                const GenerateOptions& options);

/// Writes the parts of kernel k as generate_kernel does, named `name`; returns the paths.
TE_API std::vector<std::string> write_kernel(const std::string& name, const GeneratedKernel& k, const std::string& dir,
                                             bool cpu, bool cuda, const GenerateOptions& options = {});

/// The kernel `name` of this process's registries: a TE_GENERATOR's; a TE_TUNING_TASK's
/// CPU function with the best config of its key for cpu_target in records_path (its
/// reference schedule without a file); or a TE_COMPUTE auto-scheduled by the rules for
/// cpu_target's CPU and for CUDA (the CPU part from the best config of records_path when
/// given: the records `te auto-schedule --trials N` wrote). te::Error naming the kernels
/// there are when no registry has it, when records_path is given for a TE_GENERATOR
/// (which has no knobs), and when cpu_target is not an LLVM target.
TE_API GeneratedKernel find_kernel(const std::string& name, const std::string& records_path = "",
                                   const Target& cpu_target = {});

/// Loads a generator library (a shared library of TE_GENERATOR and TE_TUNING_TASK
/// definitions linked with te::te): its definitions join this process's registries, as
/// `te list gen.so` reads them. te::Error when it cannot be loaded (dlerror's reason) or
/// defines nothing.
TE_API void load_generator_library(const std::string& path);

/// What a TE_TUNING_TASK body returns: a tunable kernel (see te/autotune/measure.h).
using TuningTaskFunction = autotune::Task (*)();
/// Adds a tuning task to the registry (TE_TUNING_TASK does this). Returns true.
TE_API bool register_tuning_task(const char* name, TuningTaskFunction fn);
/// The registered tuning tasks' names, sorted.
TE_API std::vector<std::string> registered_tuning_tasks();
/// The task `name`; te::Error naming the tasks there are when none is called so.
TE_API autotune::Task tuning_task(const std::string& name);

/// What a TE_COMPUTE body returns: a kernel's computation alone, without a schedule; te
/// makes the schedule (te::auto_schedule) when the kernel is built.
struct TE_API ComputeDefinition {
  ComputeDefinition() = default;
  /// `return {{A, B, C}};` or `return {{A, B, C, D}, {C, D}};`
  ComputeDefinition(std::vector<Tensor> args_, std::vector<Tensor> outputs_ = {})
      : args(std::move(args_)), outputs(std::move(outputs_)) {}
  /// The kernel's tensors in parameter order, as lower(schedule, args, name) takes them.
  std::vector<Tensor> args;
  /// The tensors the schedule computes; empty: the last of args.
  std::vector<Tensor> outputs;
};
/// What a TE_COMPUTE body becomes.
using ComputeFunction = ComputeDefinition (*)();
/// Adds a computation to the registry (TE_COMPUTE does this). Returns true.
TE_API bool register_compute(const char* name, ComputeFunction fn);
/// The registered computations' names, sorted.
TE_API std::vector<std::string> registered_computes();
/// The computation `name`; te::Error naming the ones there are when none is called so, or
/// when it has no args or an output that is not among them.
TE_API ComputeDefinition compute_definition(const std::string& name);
/// The TE_COMPUTE `name` scheduled by te::auto_schedule with options and lowered with its
/// args: the cpu part for options.target "llvm", the cuda part for "cuda". With
/// options.trials > 0 this measures (a search: see te/auto_schedule.h).
/// `constant_inputs` names inputs (placeholders among its args) that the caller sets once,
/// a model's weights (AutoScheduleOptions::constant_inputs): where the schedule takes one
/// pretransformed, the part's pretransforms hold the function that lays it out, named
/// `<name>_pretransform_<input>`. te::Error naming the inputs there are for a name that
/// is not one, and for options.constant_inputs given as well.
TE_API GeneratedKernel auto_schedule_kernel(const std::string& name, const AutoScheduleOptions& options,
                                            const std::vector<std::string>& constant_inputs = {});

/// The main() of a generator program (command line above). Returns 0, or 1 after printing
/// the error to stderr, or 2 for a malformed command line.
TE_API int generator_main(int argc, char** argv);

}  // namespace te

/// Defines the tuning task `name` (a C identifier): the braced body that follows returns
/// its te::autotune::Task, which `te tune` tunes (records by the task's key).
#define TE_TUNING_TASK(name)                                            \
  static ::te::autotune::Task te_tuning_task_##name();                  \
  [[maybe_unused]] static const bool te_tuning_task_registered_##name = \
      ::te::register_tuning_task(#name, &te_tuning_task_##name);        \
  static ::te::autotune::Task te_tuning_task_##name()

/// Defines the computation `name` (a C identifier): the braced body that follows returns
/// its te::ComputeDefinition, which te schedules itself (`te auto-schedule`, or the rules
/// when `te build`/te_add_kernels build it):
///
///     TE_COMPUTE(matmul) {
///       Tensor A = placeholder({256, 64}, Float(32), "A");
///       Tensor B = placeholder({64, 128}, Float(32), "B");
///       IterVar k = reduce_axis({0, 64}, "k");
///       Tensor C = compute({256, 128}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
///       return {{A, B, C}};
///     }
#define TE_COMPUTE(name)                                                                                               \
  static ::te::ComputeDefinition te_compute_##name();                                                                  \
  [[maybe_unused]] static const bool te_compute_registered_##name = ::te::register_compute(#name, &te_compute_##name); \
  static ::te::ComputeDefinition te_compute_##name()

/// Defines the kernel `name` (a C identifier): the braced body that follows returns its
/// GeneratedKernel.
#define TE_GENERATOR(name)                                            \
  static ::te::GeneratedKernel te_generator_##name();                 \
  [[maybe_unused]] static const bool te_generator_registered_##name = \
      ::te::register_generator(#name, &te_generator_##name);          \
  static ::te::GeneratedKernel te_generator_##name()
