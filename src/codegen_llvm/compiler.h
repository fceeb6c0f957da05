// The LLVM-free face of the LLVM backend, for build.cpp, export.cpp and the call path:
// compile LoweredFuncs to an object file, to text, or into the process's JIT.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codegen_llvm/signature.h"
#include "te/build.h"

namespace te::codegen {

// One compilation unit: the functions and their signatures (from kernel_signature).
struct CompileInput {
  std::vector<LoweredFunc> funcs;
  std::vector<KernelSignature> sigs;
  BuildOptions options;
};

// Validates the functions (distinct names, kernel_signature) into a CompileInput.
CompileInput compile_input(const std::vector<LoweredFunc>& funcs, const BuildOptions& options);

enum class TextKind { UnoptimizedIR, OptimizedIR, Assembly };

// An ELF object for the host CPU with the kernels under their own names.
std::string compile_object(const CompileInput& in);
std::string compile_text(const CompileInput& in, TextKind kind);

// Packed entry points of functions loaded into the JIT; the code is unloaded when this
// is destroyed.
using PackedFn = int32_t (*)(void**);
class LoadedCode {
 public:
  virtual ~LoadedCode() = default;
  virtual PackedFn packed(size_t func_index) const = 0;
};
std::shared_ptr<LoadedCode> jit_compile(const CompileInput& in);

// Everything that decides the compiled code: the IR (with variable identity), the options,
// LLVM's version and the host target. The in-memory and the on-disk caches' key.
std::string cache_key(const CompileInput& in);

// What the code depends on besides the IR: LLVM's version and the host target.
std::string target_fingerprint();
std::string host_cpu_name();
// Whether options name a triple of another architecture or OS than the host's.
bool foreign_target(const BuildOptions& options);
// describe_target(): the resolved triple, CPU and features of options.
std::string describe(const BuildOptions& options);
std::string host_cpu_feature_string();

// Writes bytes to path; te::Error naming `what` (the public function) when it cannot.
void write_file(const std::string& path, const std::string& bytes, const char* what);

// Process-wide counters behind te::jit_stats().
void note_cache_hit();
JitStats current_jit_stats();

}  // namespace te::codegen
