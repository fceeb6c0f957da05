#include "codegen_llvm/target.h"

#include <fmt/format.h>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/PassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetOptions.h>

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

std::unique_ptr<llvm::TargetMachine> make_target_machine(int opt_level) {
  const HostTarget& host = host_target();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(host.triple, error);
  if (target == nullptr)
    throw Error(
        fmt::format("build: LLVM has no target for this host ({}): {}", host.triple, error));
  llvm::TargetOptions options;
  // Contraction is decided per instruction (the `contract` flag CodeGen sets).
  options.AllowFPOpFusion = llvm::FPOpFusion::Standard;
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(host.triple, host.cpu, host.features, options, llvm::Reloc::PIC_,
                                  llvm::CodeModel::Small, compat::codegen_opt_level(opt_level)));
  if (!tm)
    throw Error(
        fmt::format("build: LLVM cannot make a target machine for {} ({})", host.triple, host.cpu));
  return tm;
}

void optimize(llvm::Module& m, llvm::TargetMachine& tm, int opt_level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = opt_level >= 2;
  tuning.SLPVectorization = opt_level >= 2;
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
  if (tm.addPassesToEmitFile(pm, os, nullptr,
                             assembly ? compat::kAssemblyFile : compat::kObjectFile))
    throw Error("build: LLVM cannot emit machine code for this host");
  pm.run(m);
  return std::string(buffer.data(), buffer.size());
}

}  // namespace te::codegen
