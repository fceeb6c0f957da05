// The LLVM implementations of tensor intrinsics: one emitter per implementation name (the
// "llvm" entry of TensorIntrinsicNode::implementations), registered here.
#pragma once
#include <llvm/IR/IRBuilder.h>
#include <llvm/MC/MCSubtargetInfo.h>

#include <functional>
#include <string>
#include <vector>

namespace te::codegen {

// What an emitter gets besides the builder at the point of the call and the regions: the
// target, to choose instructions by.
struct TensorIntrinsicTarget {
  llvm::Module* module;
  const llvm::MCSubtargetInfo* subtarget;  // may be null: no features beyond the baseline
  std::string cpu;
  // Whether the target CPU has the feature (LLVM's spelling, "avx512vnni"); false for
  // triples of another architecture than `arch` ("x86").
  bool has(const char* arch, const char* feature) const;
};

// The regions an emitter works on, one per declaration tensor (the inputs, then the
// output): a pointer to the first element (of the element's memory type) and the element
// stride of each dimension (i64; constants where the declaration's strides are dense).
// Each region's element type (as stored in memory) and its declaration's shape come
// with it, for emitters that serve a family of declarations (intrinsics::transpose).
struct TensorIntrinsicRegions {
  std::vector<llvm::Value*> ptrs;
  std::vector<std::vector<llvm::Value*>> strides;
  std::vector<llvm::Type*> types;
  std::vector<std::vector<int64_t>> shapes;
};

// Emits the intrinsic; te::Error (via fail) when the target cannot run it.
using TensorIntrinsicEmitter = void (*)(llvm::IRBuilder<>& b, const TensorIntrinsicRegions& regions,
                                        const TensorIntrinsicTarget& target,
                                        const std::function<void(const std::string&)>& fail);

// The emitter registered under name, or null.
TensorIntrinsicEmitter find_tensor_intrinsic_emitter(const std::string& name);

// The emitters (tensor_intrinsics_x86.cpp, tensor_intrinsic_transpose.cpp).
void emit_x86_dot_16x4_u8s8(llvm::IRBuilder<>& b, const TensorIntrinsicRegions& regions,
                            const TensorIntrinsicTarget& target, const std::function<void(const std::string&)>& fail);
void emit_x86_vnni_dot_16x4_u8s8(llvm::IRBuilder<>& b, const TensorIntrinsicRegions& regions,
                                 const TensorIntrinsicTarget& target,
                                 const std::function<void(const std::string&)>& fail);
void emit_transpose(llvm::IRBuilder<>& b, const TensorIntrinsicRegions& regions, const TensorIntrinsicTarget& target,
                    const std::function<void(const std::string&)>& fail);

}  // namespace te::codegen
