#include "codegen_cuda_src/tensor_intrinsics.h"

#include <fmt/format.h>

#include "te/error.h"
#include "te/tensorize.h"

namespace te::cuda {

namespace {

class FindIntrinsics : public IRVisitor {
 public:
  const TensorIntrinsicCallNode* first = nullptr;

 protected:
  void visit_tensor_intrinsic_call(const TensorIntrinsicCallNode* n) override {
    if (first == nullptr) first = n;
  }
};

std::string implementation_list(const TensorIntrinsicNode& in) {
  std::string out;
  for (const auto& [target, impl] : in.implementations) out += (out.empty() ? "" : ", ") + target;
  return out.empty() ? "none" : out;
}

}  // namespace

void check_tensor_intrinsics(const LoweredFunc& f) {
  FindIntrinsics find;
  find.visit(f.body);
  if (find.first == nullptr) return;
  const TensorIntrinsicNode& in = *find.first->intrinsic;
  // The CUDA backend has no emitter yet: an implementation named for "cuda" is refused
  // as well, rather than printed as something nvcc would have to resolve.
  throw Error(fmt::format("build_cuda: function '{}' calls tensor intrinsic '{}', which has no implementation "
                          "for target 'cuda' (it has: {}); tensorize with a CUDA intrinsic or build for llvm",
                          f.name, in.name, implementation_list(in)));
}

}  // namespace te::cuda
