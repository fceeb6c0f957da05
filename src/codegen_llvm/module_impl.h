// What a Module holds: each function's interface and its entry point in loaded code.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "codegen_llvm/compiler.h"
#include "codegen_llvm/signature.h"
#include "te/module.h"

namespace te::detail {

struct FunctionEntry {
  LoweredFunc func;
  codegen::KernelSignature sig;
  std::vector<bool> param_written;  // per parameter: a buffer the body stores into
  codegen::PackedFn packed = nullptr;
};

struct ModuleImpl {
  std::vector<FunctionEntry> functions;
  std::shared_ptr<codegen::LoadedCode> code;  // keeps the entry points loaded
};

}  // namespace te::detail

namespace te::codegen {

// A checked argument list, ready to hand to a packed entry point any number of times.
class PreparedCall {
 public:
  PreparedCall(const detail::FunctionEntry& entry, const std::vector<Argument>& args);
  PreparedCall(const PreparedCall&) = delete;
  PreparedCall& operator=(const PreparedCall&) = delete;
  // Runs the kernel; te::Error with the kernel's message if it fails.
  void invoke() const;

 private:
  const detail::FunctionEntry& entry_;
  std::vector<NDArray> arrays_;  // keeps the storage alive during the call
  std::vector<uint64_t> slots_;  // one 8-byte value per kernel argument
  std::vector<void*> pointers_;  // &slots_[k]
};

}  // namespace te::codegen
