/// \file
/// Generators: kernels compiled ahead of time during a build, as with Halide's generators.
///
/// A generator is a small program: each TE_GENERATOR defines one kernel by returning its
/// lowered schedules, and te::generator_main (the program's main) writes the files:
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
///    te::export_object and te::export_header), compiled for the building machine's CPU;
///  - `<name>.cu` and `<name>_cuda.h`: the CUDA source of the `cuda` function (te::build_cuda)
///    with the host launcher `extern "C" cudaError_t <name>_cuda(..., cudaStream_t)`.
/// Files and C functions are named after the TE_GENERATOR name, whatever name the
/// LoweredFuncs were lowered with.
///
/// The command line of a generator (what te_add_kernels runs):
///     gen -o DIR [--cpu NAME]... [--cuda NAME]...   writes those files into DIR
///     gen -o DIR                                    writes every file of every kernel
///     gen --list                                    prints the kernels' names
/// Asking for a kernel that does not exist, or for a part a kernel lacks, is an error
/// naming what there is; so is a schedule that fails to lower or compile.
#pragma once
#include <string>
#include <vector>

#include "te/export.h"
#include "te/te.h"  // a generator's file needs nothing else

namespace te {

/// What a TE_GENERATOR returns: the kernel's CPU and/or GPU lowering (at least one).
struct TE_API GeneratedKernel {
  LoweredFunc cpu;   ///< `<name>.o` and `<name>.h`; none when cpu.body is undefined
  LoweredFunc cuda;  ///< `<name>.cu` and `<name>_cuda.h`; none when cuda.body is undefined
  BuildOptions cpu_options;  ///< How the CPU function is compiled.
  CudaOptions cuda_options;  ///< How the CUDA source is generated.
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
TE_API std::vector<std::string> generate_kernel(const std::string& name, const std::string& dir,
                                                bool cpu, bool cuda);

/// The main() of a generator program (command line above). Returns 0, or 1 after printing
/// the error to stderr, or 2 for a malformed command line.
TE_API int generator_main(int argc, char** argv);

}  // namespace te

/// Defines the kernel `name` (a C identifier): the braced body that follows returns its
/// GeneratedKernel.
#define TE_GENERATOR(name)                                                        \
  static ::te::GeneratedKernel te_generator_##name();                             \
  [[maybe_unused]] static const bool te_generator_registered_##name =              \
      ::te::register_generator(#name, &te_generator_##name);                      \
  static ::te::GeneratedKernel te_generator_##name()
