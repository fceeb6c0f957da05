#include "codegen_llvm/target.h"

#include <fmt/format.h>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetOptions.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <mutex>

#include "codegen_llvm/llvm_compat.h"
#include "te/error.h"

namespace te::codegen {

const HostTarget& host_target() {
  static const HostTarget target = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    HostTarget t;
    t.triple = llvm::sys::getProcessTriple();
    t.cpu = llvm::sys::getHostCPUName().str();
    t.features = compat::host_cpu_features();
    return t;
  }();
  return target;
}

namespace {

// The largest data cache one core sees, as Linux describes it (sysconf's L3 figure can
// be the whole package's: 384 MiB for this EPYC's 32 MiB per core complex).
int64_t last_level_cache_bytes() {
  int64_t best = 0;
  for (int index = 0; index < 8; ++index) {
    std::string dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", index);
    std::ifstream type_file(dir + "type"), size_file(dir + "size");
    std::string type, size;
    if (!(type_file >> type) || !(size_file >> size) || type == "Instruction") continue;
    char* end = nullptr;
    int64_t v = std::strtoll(size.c_str(), &end, 10);
    if (end != nullptr && (*end == 'K' || *end == 'k')) v <<= 10;
    if (end != nullptr && (*end == 'M' || *end == 'm')) v <<= 20;
    best = std::max(best, v);
  }
  if (best <= 0) best = int64_t{8} << 20;
  return best;
}

}  // namespace

int64_t streaming_threshold(const TargetSpec& spec, int64_t requested) {
  const bool x86 = llvm::Triple(spec.triple).isX86();
  if (!x86 || requested < 0) return -1;
  static const int64_t llc = last_level_cache_bytes();
  return requested == 0 ? llc : requested;
}

// With AVX512-FP16 on, LLVM 14 and 19 alike mix up the lanes of a float16 vector compare
// combined with another mask (seen on Sapphire Rapids; pinned by tests/test_llvm_arith.cpp).
// te's float16 arithmetic is float arithmetic rounded to half, which that extension does
// not speed up: it stays off, whatever the CPU (the last of repeated features wins).
std::string codegen_features(const TargetSpec& spec) {
  if (!llvm::Triple(spec.triple).isX86()) return spec.features;
  return spec.features.empty() ? "-avx512fp16" : spec.features + ",-avx512fp16";
}

std::unique_ptr<llvm::TargetMachine> make_target_machine(const TargetSpec& spec, int opt_level) {
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(spec.triple, error);
  if (target == nullptr) throw Error(fmt::format("build: LLVM has no target for {}: {}", spec.triple, error));
  llvm::TargetOptions options;
  // Contraction is decided per instruction (the `contract` flag CodeGen sets).
  options.AllowFPOpFusion = llvm::FPOpFusion::Standard;
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(spec.triple, spec.cpu, codegen_features(spec), options, llvm::Reloc::PIC_,
                                  llvm::CodeModel::Small, compat::codegen_opt_level(opt_level)));
  if (!tm) throw Error(fmt::format("build: LLVM cannot make a target machine for {} ({})", spec.triple, spec.cpu));
  return tm;
}

namespace {

// Whether te emitted vector code (an instruction of vector type) into m.
bool has_vector_code(const llvm::Module& m) {
  for (const llvm::Function& f : m)
    for (const llvm::BasicBlock& b : f)
      for (const llvm::Instruction& i : b)
        if (i.getType()->isVectorTy()) return true;
  return false;
}

// Whether a loop of m carries llvm.loop.vectorize.enable: a loop te could not vectorize
// itself and left to LLVM (src/lower/vectorize.cpp).
bool has_vectorize_hint(const llvm::Module& m) {
  for (const llvm::Function& f : m)
    for (const llvm::BasicBlock& b : f) {
      const llvm::MDNode* loop = b.getTerminator() ? b.getTerminator()->getMetadata("llvm.loop") : nullptr;
      if (loop == nullptr) continue;
      for (const llvm::MDOperand& op : loop->operands()) {
        const auto* property = llvm::dyn_cast_or_null<llvm::MDNode>(op.get());
        if (property == nullptr || property->getNumOperands() == 0) continue;
        const auto* name = llvm::dyn_cast_or_null<llvm::MDString>(property->getOperand(0).get());
        if (name != nullptr && name->getString() == "llvm.loop.vectorize.enable") return true;
      }
    }
  return false;
}

}  // namespace

void optimize(llvm::Module& m, llvm::TargetMachine& tm, int opt_level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  const bool te_vectorized = has_vector_code(m);
  tuning.LoopVectorization = opt_level >= 2 && (!te_vectorized || has_vectorize_hint(m));
  tuning.SLPVectorization = opt_level >= 2 && !te_vectorized;
  tuning.LoopUnrolling = !te_vectorized;
  tuning.LoopInterleaving = !te_vectorized;
  llvm::PassBuilder pb(&tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = opt_level <= 0   ? llvm::OptimizationLevel::O0
                                  : opt_level == 1 ? llvm::OptimizationLevel::O1
                                  : opt_level == 2 ? llvm::OptimizationLevel::O2
                                                   : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm =
      opt_level <= 0 ? pb.buildO0DefaultPipeline(level) : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(m, mam);
}

std::string emit_machine_code(llvm::Module& m, llvm::TargetMachine& tm, bool assembly) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, assembly ? compat::kAssemblyFile : compat::kObjectFile))
    throw Error(fmt::format("build: LLVM cannot emit machine code for {}", tm.getTargetTriple().str()));
  pm.run(m);
  return std::string(buffer.data(), buffer.size());
}

}  // namespace te::codegen
