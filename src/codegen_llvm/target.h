// The host target: LLVM initialisation, TargetMachines, the optimisation pipeline and
// machine-code emission.
#pragma once
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <string>

#include "te/build.h"

namespace te::codegen {

struct HostTarget {
  std::string triple, cpu, features;
};
// Initialises LLVM's native target once; te::Error if the host is not supported.
const HostTarget& host_target();

// What one compilation targets: BuildOptions' te::Target resolved (target_spec.cpp).
struct TargetSpec {
  std::string triple, cpu, features;
  int vector_bits = 0;    // Target::vector_bits: LLVM's "prefer-vector-width"; 0: the CPU's
  bool host_arch = true;  // the host's architecture and OS: the JIT may run it
};
// The target of options: the host (its CPU and features) unless the options name a
// triple, CPU or features; a foreign triple starts from its generic CPU, never the
// host's features. te::Error for a triple, CPU or feature LLVM does not know.
TargetSpec resolve_target(const BuildOptions& options);
// The features the code is generated with: spec's, with x86's AVX512-FP16 turned off
// (see target.cpp).
std::string codegen_features(const TargetSpec& spec);
// The widest vector of spec's CPU in bits (spec.vector_bits when set): 512 with
// AVX-512F, 256 with AVX, 128 otherwise.
int widest_vector_bits(const TargetSpec& spec);
// te::Error unless code for spec can run in this process: the host's architecture and
// no feature the host lacks (an illegal instruction at the call otherwise). api begins
// the message ("build").
void check_runs_on_host(const TargetSpec& spec, const std::string& api);

// BuildOptions::streaming_store_min_bytes resolved for the target: 0 becomes the
// last-level cache size (8 MiB where the system does not say), and -1 (never) where the
// target is not x86 (the fence that orders streamed stores is x86's sfence).
int64_t streaming_threshold(const TargetSpec& spec, int64_t requested);

// A TargetMachine for spec at opt_level (0..3); each compilation takes its own, as a
// TargetMachine is not safe to share between threads.
std::unique_ptr<llvm::TargetMachine> make_target_machine(const TargetSpec& spec, int opt_level);

// LLVM's default pipeline for opt_level (new pass manager, with the TargetMachine's
// cost model), as clang -O3 runs it, except where te made vector code itself: then, as
// Halide does, LLVM's loop unroller, loop vectorizer and SLP vectorizer stay off (the
// loop vectorizer still runs for loops te marked for it). They would only grow what te
// already unrolled and vectorized: sgemm's code was 2.7x larger and twice as slow to
// compile with them, and no faster (bench/README.md, "Compile latency").
void optimize(llvm::Module& m, llvm::TargetMachine& tm, int opt_level);

// An object file (or assembly text) of m.
std::string emit_machine_code(llvm::Module& m, llvm::TargetMachine& tm, bool assembly);

}  // namespace te::codegen
