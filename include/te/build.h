/// \file
/// build(): LoweredFuncs to native code for the host CPU through LLVM (ORC JIT), and
/// ahead-of-time objects, shared libraries and C headers.
///
/// Code generation notes:
///  - Parallel loops run on te's thread pool (te/runtime/c_runtime_api.h; TE_NUM_THREADS
///    sets its size). A parallel loop inside another runs serially in its chunk.
///  - ThreadBinding loops (GPU axes) run as serial loops; a function with a Barrier
///    cannot run on the CPU and is rejected.
///  - Vectorized loops the lowering left as loops are emitted as loops with a
///    vectorization hint; Ramp/Broadcast vectors are emitted as LLVM vector IR.
///  - Float arithmetic may be contracted into fused multiply-adds (BuildOptions).
///  - Buffers are `noalias`: arrays given to one call must not overlap an array that the
///    function writes (calls through Function check this; AOT callers must ensure it).
///  - Allocations of a constant size up to 32 KiB live on the stack, others on the heap
///    (te_alloc); both start zero-filled.
///  - On x86, vector stores into an output the function never reads and that is at least
///    as large as the last-level cache are non-temporal (they do not read each line
///    before writing it) when the output is aligned to the vector
///    (BuildOptions::streaming_store_min_bytes).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "te/export.h"
#include "te/ir.h"
#include "te/module.h"
#include "te/target.h"

namespace te {

/// Options of build() and the export functions.
struct TE_API BuildOptions {
  int opt_level = 3;            ///< 0..3: LLVM's O0..O3
  bool fma_contraction = true;  ///< allow a * b + c to become one fused multiply-add
  /// Vector exp of float32, float16 and bfloat16 (softmax, sigmoid) as te's own
  /// polynomial, within 2 ulp of libm's expf (exact at 0, infinities and NaN; underflow
  /// and overflow where expf has them), instead of one libm call per lane (about 5x
  /// slower). false: libm, lane by lane, as scalar code and interpret() compute it.
  bool fast_vector_math = true;
  /// Reuse the code of an identical earlier build: one this process still holds, or one
  /// in the persistent compile cache (TE_CACHE_DIR; TE_CACHE=0 turns that off; see the
  /// README's "The compile cache"). export_object / export_library use the persistent one
  /// whatever this says.
  bool use_cache = true;
  /// Indices read from memory (gathers, te::scatter positions, data-dependent reduction
  /// bounds) are checked at run time: the call fails with a te::Error naming the buffer.
  /// false drops those checks, for inputs the caller has validated (for bev_pool,
  /// ops::check_bev_pool_inputs): an index outside its buffer then reads or writes
  /// outside it, as in C. Indices from loop variables never need a check.
  bool check_data_indices = true;
  /// Streaming (non-temporal) stores, x86: a vector store into an output the function
  /// never reads bypasses the caches when that output has at least this many bytes and
  /// the store's address is aligned to the vector (checked at run time), so writing an
  /// output larger than the caches costs no read of each line first. 0: the host's
  /// last-level cache size; negative: never.
  int64_t streaming_store_min_bytes = 0;
  /// What the code is compiled for: an LLVM target (te::Target; "llvm", the host, by
  /// default). Its triple is export_object / export_library / assembly's ("aarch64-linux-gnu",
  /// any triple LLVM knows; empty: the host's); build() (the JIT) only accepts the host's
  /// architecture. Its cpu and features pick the CPU (see te::Target); its vector_bits
  /// caps the vectors LLVM's own vectorizers make. A "cuda" target is a te::Error here
  /// (build_cuda() makes CUDA C).
  Target target;
  /// Shared libraries the functions of call_extern come from: a path ("/opt/lib/libmy.so",
  /// "./libmy.so"), or a bare file name ("libmy.so.1") that the dynamic loader's search
  /// path finds. build() loads them (te::Error naming one that does not load, and why)
  /// and resolves each extern name in them, in order, then in the process; a name found
  /// nowhere is a te::Error at build time. A Module keeps its libraries loaded while it
  /// lives. export_library links the library it writes against them (a path directly,
  /// with its folder in the rpath; a bare name as `-l:name`), so loading it loads them;
  /// names no library defines stay undefined there, for the process that loads it.
  /// export_object ignores them (link the object with them yourself), and nothing is
  /// loaded for a foreign triple.
  std::vector<std::string> extern_libraries;
};

/// JIT-compiles for the host CPU (its name and features, e.g. AVX2/AVX-512), or for the
/// options' target CPU and features when the host has every feature they need
/// (te::Error naming the missing features otherwise, rather than an illegal instruction
/// at the call). Function
/// names must be C identifiers and distinct. Building a kernel identical to one whose
/// Module is still alive reuses that code (see jit_stats). Every call_extern function is
/// resolved here (BuildOptions::extern_libraries, then the process): te::Error naming
/// the first one that is not found.
TE_API Module build(const LoweredFunc& func, const BuildOptions& options = {});
/// One Module holding several functions.
TE_API Module build(const std::vector<LoweredFunc>& funcs, const BuildOptions& options = {});

// ---- Ahead of time ----
/// Each function becomes the C function of c_prototype(): raw pointers to the buffers in
/// parameter order, then every symbolic variable (shape variables and scalar parameters)
/// in order of first appearance, returning 0 on success or nonzero with the message in
/// te_get_last_error(). Objects are compiled for the options' target (the host's CPU by
/// default; see BuildOptions::target) and need only
/// libte_runtime (for parallel loops, errors and heap allocations) at link time, and
/// the functions of call_extern, which stay undefined symbols of their C names.
TE_API void export_object(const LoweredFunc& func, const std::string& path, const BuildOptions& options = {});
/// Several functions in one object file.
TE_API void export_object(const std::vector<LoweredFunc>& funcs, const std::string& path,
                          const BuildOptions& options = {});
/// A shared library, linked by the system C compiler (`cc`, or $CC); for a foreign
/// target triple, by `<triple>-gcc` (or $CC). For the host it names libte_runtime
/// (DT_NEEDED: the one this process loaded) with the RUNPATH `$ORIGIN:<that runtime's
/// folder>`, so a plain dlopen of it works, from the build tree or the install, or with
/// libte_runtime copied next to it. For a foreign triple, link it with that target's
/// runtime yourself (TE_RUNTIME_ONLY in cross_compilation.md).
TE_API void export_library(const LoweredFunc& func, const std::string& path, const BuildOptions& options = {});
/// Several functions in one shared library.
TE_API void export_library(const std::vector<LoweredFunc>& funcs, const std::string& path,
                           const BuildOptions& options = {});
/// The link step of export_library alone: the shared library of an object export_object
/// wrote with the same options, without compiling the functions again (`te build`
/// writes KERNEL.o, then KERNEL.so from it).
TE_API void link_library(const std::string& object_path, const std::string& path, const BuildOptions& options = {});
/// TVM's "system module", for programs that may not load code at run time: the functions
/// in one object (as export_object) with a table of them, `const te_kernel_entry
/// <module_name>_kernels[]` ({name, function, prototype}, ended by a NULL name), and a
/// header (the prototypes, the table and `<module_name>_lookup(name)`, which finds a
/// kernel by name). Link the object with the program; no dlopen. te::Error when
/// module_name is not a C identifier or no function is given.
TE_API void export_system_module(const std::vector<LoweredFunc>& funcs, const std::string& module_name,
                                 const std::string& object_path, const std::string& header_path,
                                 const BuildOptions& options = {});
/// A C header (C and C++) with the prototypes and te_get_last_error.
TE_API void export_header(const LoweredFunc& func, const std::string& path);
/// The prototypes of several functions in one header.
TE_API void export_header(const std::vector<LoweredFunc>& funcs, const std::string& path);
/// The C prototype of the exported function, e.g.
/// "int32_t vadd(float* A, float* B, float* C, int32_t n)".
TE_API std::string c_prototype(const LoweredFunc& func);
/// The text export_header writes, with include guard `guard`.
TE_API std::string c_header(const std::vector<LoweredFunc>& funcs, const std::string& guard);

// ---- Inspection ----
/// LLVM IR of the function, before or after optimization.
TE_API std::string llvm_ir(const LoweredFunc& func, bool optimized = true, const BuildOptions& options = {});
/// The host assembly of the function.
TE_API std::string assembly(const LoweredFunc& func, const BuildOptions& options = {});
/// The target the options compile for: "triple, cpu CPU, features F" (the resolved
/// triple, CPU and features). te::Error for a triple, CPU or feature LLVM does not know.
TE_API std::string describe_target(const BuildOptions& options = {});
/// target with its triple, CPU and features as LLVM resolves them (the host's where it
/// names none; a foreign triple's generic CPU) and vector_bits the CPU's widest vector
/// unless it names one. te::Error for a cuda target, or a triple, CPU or feature LLVM
/// does not know.
TE_API Target resolved_target(const Target& target);
/// te::Error, its message begun by api ("tune 'sgemm'"), unless code compiled for target
/// runs on this machine, as build()'s JIT requires: an LLVM target of the host's
/// architecture whose CPU and features the host has ("llvm -mcpu=x86-64-v3" on an
/// AVX-512 host does; "llvm -mcpu=skylake-avx512" on an AVX2 host does not).
TE_API void check_runs_on_host(const Target& target, const std::string& api);
/// The host CPU LLVM compiles for ("skylake-avx512", ...).
TE_API std::string host_cpu();
/// The host CPU's enabled features ("+avx2,+fma,...").
TE_API std::string host_cpu_features();

/// Counters of the process's JIT: actual compilations, builds answered from the cache,
/// and compiled code objects currently loaded.
struct TE_API JitStats {
  uint64_t compilations = 0;       ///< Builds that compiled code.
  uint64_t cache_hits = 0;         ///< Builds that reused the code of a live Module.
  uint64_t live_code_objects = 0;  ///< Compiled code objects currently loaded.
  uint64_t disk_cache_hits = 0;    ///< Builds whose code came from the on-disk compile cache.
};
/// The JIT's counters now.
TE_API JitStats jit_stats();

}  // namespace te
