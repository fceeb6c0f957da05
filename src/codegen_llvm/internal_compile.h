// Shared between compile.cpp and jit.cpp: the LLVM module of a CompileInput.
#pragma once
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <string>

#include "codegen_llvm/compiler.h"

namespace te::codegen {

// Generates and verifies the module; external symbols get symbol_prefix, and the JIT's
// packed entry points are added when packed_entries is set.
std::unique_ptr<llvm::Module> generate_module(llvm::LLVMContext& ctx, const CompileInput& in,
                                              const std::string& symbol_prefix, bool packed_entries,
                                              llvm::TargetMachine& tm);

}  // namespace te::codegen
