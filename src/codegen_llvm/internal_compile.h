// Shared between compile.cpp and jit.cpp: the LLVM module of a CompileInput.
#pragma once
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <functional>
#include <memory>
#include <string>

#include "codegen_llvm/compiler.h"
#include "codegen_llvm/target.h"

namespace te::codegen {

// Generates and verifies the module for target (resolve_target(in.options), which tm was
// made for); external symbols get symbol_prefix, and the JIT's packed entry points are
// added when packed_entries is set.
std::unique_ptr<llvm::Module> generate_module(llvm::LLVMContext& ctx, const CompileInput& in,
                                              const std::string& symbol_prefix, bool packed_entries,
                                              const TargetSpec& target, llvm::TargetMachine& tm);

// compile_object, with `extend` adding to the module before it is optimized (the system
// module's registry).
std::string compile_object(const CompileInput& in, const std::function<void(llvm::Module&)>& extend);

}  // namespace te::codegen
