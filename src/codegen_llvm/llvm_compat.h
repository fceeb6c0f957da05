// Every difference between the LLVM versions te builds with (14 through 19) lives here.
// LLVM 14 keeps typed pointers (opaque pointers stay off there); 15+ use opaque ones.
#pragma once
#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/CodeGen.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/TypeSize.h>

#if LLVM_VERSION_MAJOR >= 17
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>
#else
#include <llvm/ADT/Triple.h>
#include <llvm/Support/Host.h>
#endif
#include <llvm/MC/MCSubtargetInfo.h>

#include <optional>
#include <vector>

#include <cstdint>
#include <string>

namespace te::codegen::compat {

// A pointer to elements of type elem (typed on LLVM 14, opaque later).
inline llvm::PointerType* pointer_to(llvm::Type* elem) {
#if LLVM_VERSION_MAJOR < 15
  return llvm::PointerType::getUnqual(elem);
#else
  return llvm::PointerType::getUnqual(elem->getContext());
#endif
}

inline llvm::Function* intrinsic(llvm::Module* m, llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Type*> types = {}) {
#if LLVM_VERSION_MAJOR >= 20
  return llvm::Intrinsic::getOrInsertDeclaration(m, id, types);
#else
  return llvm::Intrinsic::getDeclaration(m, id, types);
#endif
}

// The size in bytes (or bits) of a fixed-size type: getFixedSize() is gone in LLVM 18+.
inline uint64_t fixed_size(llvm::TypeSize size) {
#if LLVM_VERSION_MAJOR >= 16
  return size.getFixedValue();
#else
  return size.getFixedSize();
#endif
}

// "+avx2,+fma,-avx512f,...": the host's CPU features in LLVM's spelling.
inline std::string host_cpu_features() {
  std::string out;
#if LLVM_VERSION_MAJOR >= 19
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
#else
  llvm::StringMap<bool> features;
  llvm::sys::getHostCPUFeatures(features);
#endif
  for (const auto& f : features) {
    if (!out.empty()) out += ",";
    out += (f.second ? "+" : "-") + f.first().str();
  }
  return out;
}

// The names of every feature a target's CPUs can have ("avx2", "neon", ...); nullopt
// where LLVM cannot list them (before LLVM 19's MCSubtargetInfo::getAllProcessorFeatures).
inline std::optional<std::vector<std::string>> target_feature_names(const llvm::MCSubtargetInfo& sti) {
#if LLVM_VERSION_MAJOR >= 19
  std::vector<std::string> names;
  for (const llvm::SubtargetFeatureKV& f : sti.getAllProcessorFeatures()) names.push_back(f.Key);
  return names;
#else
  (void)sti;
  return std::nullopt;
#endif
}

#if LLVM_VERSION_MAJOR >= 18
constexpr auto kObjectFile = llvm::CodeGenFileType::ObjectFile;
constexpr auto kAssemblyFile = llvm::CodeGenFileType::AssemblyFile;
using CodeGenOptLevel = llvm::CodeGenOptLevel;
#else
constexpr auto kObjectFile = llvm::CGFT_ObjectFile;
constexpr auto kAssemblyFile = llvm::CGFT_AssemblyFile;
using CodeGenOptLevel = llvm::CodeGenOpt::Level;
#endif

inline CodeGenOptLevel codegen_opt_level(int level) {
#if LLVM_VERSION_MAJOR >= 18
  using L = llvm::CodeGenOptLevel;
#else
  using L = llvm::CodeGenOpt::Level;
#endif
  switch (level) {
    case 0: return L::None;
    case 1: return L::Less;
    case 2: return L::Default;
    default: return L::Aggressive;
  }
}

// An exported, callable symbol at a host address, for absoluteSymbols().
#if LLVM_VERSION_MAJOR >= 17
inline llvm::orc::ExecutorSymbolDef absolute_symbol(const void* address) {
  return {llvm::orc::ExecutorAddr::fromPtr(address), llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
}
#else
inline llvm::JITEvaluatedSymbol absolute_symbol(const void* address) {
  return llvm::JITEvaluatedSymbol(static_cast<llvm::JITTargetAddress>(reinterpret_cast<uintptr_t>(address)),
                                  llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
}
#endif

// The host address of a looked-up symbol (LLJIT::lookup's result).
#if LLVM_VERSION_MAJOR >= 15
inline uint64_t address_of(const llvm::orc::ExecutorAddr& a) { return a.getValue(); }
#else
inline uint64_t address_of(const llvm::JITEvaluatedSymbol& s) { return s.getAddress(); }
#endif

}  // namespace te::codegen::compat
