// Tensor intrinsics (Stage::tensorize): the node becomes its LLVM implementation, called
// on the start of each region.
#include <fmt/format.h>

#include "codegen_llvm/codegen.h"
#include "codegen_llvm/llvm_compat.h"
#include "codegen_llvm/tensor_intrinsics.h"
#include "te/tensorize.h"

namespace te::codegen {

void CodeGen::emit_tensor_intrinsic(const TensorIntrinsicCallNode* n) {
  const TensorIntrinsicNode& in = *n->intrinsic;
  auto it = in.implementations.find("llvm");
  if (it == in.implementations.end())
    fail_build(
        fmt::format("tensor intrinsic '{}' has no implementation for target 'llvm'; interpret() runs "
                    "its declaration, a backend needs an implementation",
                    in.name));
  TensorIntrinsicEmitter emitter = find_tensor_intrinsic_emitter(it->second);
  if (emitter == nullptr)
    fail_build(
        fmt::format("tensor intrinsic '{}': the LLVM backend has no implementation named '{}'", in.name, it->second));
  TensorIntrinsicRegions regions;
  for (size_t i = 0; i < n->buffers.size(); ++i) {
    const BufferInfo& info = buffer(n->buffers[i]);
    llvm::Type* elem = memory_type(n->buffers[i].dtype());
    regions.ptrs.push_back(b_.CreateInBoundsGEP(elem, info.ptr, to_i64(emit(n->offsets[i]), n->offsets[i].dtype())));
    std::vector<llvm::Value*> strides;
    for (const Expr& s : n->strides[i]) strides.push_back(to_i64(emit(s), s.dtype()));
    regions.strides.push_back(strides);
    regions.types.push_back(elem);
    const Tensor& decl = i < in.inputs.size() ? in.inputs[i] : in.output;
    std::vector<int64_t> shape;
    for (const Expr& e : decl.shape()) shape.push_back(*as_const_int(e));
    regions.shapes.push_back(shape);
  }
  TensorIntrinsicTarget target{&module_, options_.subtarget, options_.cpu};
  emitter(b_, regions, target,
          [&](const std::string& why) { fail_build(fmt::format("tensor intrinsic '{}': {}", in.name, why)); });
}

TensorIntrinsicEmitter find_tensor_intrinsic_emitter(const std::string& name) {
  struct Entry {
    const char* name;
    TensorIntrinsicEmitter emit;
  };
  static const Entry kEmitters[] = {
      {"x86_dot_16x4_u8s8", emit_x86_dot_16x4_u8s8},
      {"x86_vnni_dot_16x4_u8s8", emit_x86_vnni_dot_16x4_u8s8},
      {"transpose", emit_transpose},
  };
  for (const Entry& e : kEmitters)
    if (name == e.name) return e.emit;
  return nullptr;
}

bool TensorIntrinsicTarget::has(const char* arch, const char* feature) const {
  if (subtarget == nullptr) return false;
  llvm::Triple triple(module->getTargetTriple());
  if (std::string(arch) == "x86" && !triple.isX86()) return false;
  return subtarget->checkFeatures(std::string("+") + feature);
}

}  // namespace te::codegen
