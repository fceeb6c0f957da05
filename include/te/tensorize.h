/// \file
/// Tensor intrinsics: a hardware instruction (or a hand-written micro-kernel) declared as
/// a TE compute over its own placeholders, so that Stage::tensorize can replace a matching
/// loop nest by it (docs/tensorize.md).
///
/// The declaration is the intrinsic's meaning: lower() matches a stage's loop nest against
/// it, interpret() runs it, and each backend that has an implementation of the intrinsic
/// emits that instead. A backend without one refuses the function (te::Error naming the
/// intrinsic and the target).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "te/export.h"
#include "te/tensor.h"

namespace te {

/// The data of a TensorIntrinsic (see tensor_intrinsic()).
struct TE_API TensorIntrinsicNode {
  std::string name;            ///< A C identifier, for messages and printing.
  std::vector<Tensor> inputs;  ///< The declaration's placeholders, in the order the output reads them.
  Tensor output;               ///< The declaration: a compute over inputs.
  /// Per target ("llvm", later "cuda"): the name of the backend's implementation (an
  /// emitter that the backend registers). A target missing here refuses the intrinsic.
  std::map<std::string, std::string> implementations;
  /// Per declaration tensor (the inputs, then the output): whether the strides of its
  /// outer dimensions are free (found by the matcher, passed to the implementation) rather
  /// than those of its dense row-major shape. The innermost dimension is contiguous.
  std::vector<bool> free_strides;
};

/// A shared handle to an immutable TensorIntrinsicNode.
class TE_API TensorIntrinsic {
 public:
  /// An undefined intrinsic.
  TensorIntrinsic() = default;
  /// A handle to n.
  explicit TensorIntrinsic(std::shared_ptr<const TensorIntrinsicNode> n) : node_(std::move(n)) {}
  /// Whether there is a node.
  bool defined() const { return node_ != nullptr; }
  /// The node.
  const TensorIntrinsicNode* operator->() const { return node_.get(); }
  /// The shared node.
  const std::shared_ptr<const TensorIntrinsicNode>& node() const { return node_; }
  /// The name.
  const std::string& name() const { return node_->name; }
  /// The implementation's name for target, or "" when the target has none.
  std::string implementation(const std::string& target) const;

 private:
  std::shared_ptr<const TensorIntrinsicNode> node_;
};

/// Declares an intrinsic: `output` is a compute (usually a sum reduction) over
/// placeholders of constant shapes, each read with indices affine in the compute's axes;
/// `implementations` maps a target to its backend's implementation name. The buffers the
/// implementation receives are the placeholders' and the output's regions, each at a base
/// pointer: row-major and dense (the element strides the shapes imply), except for the
/// tensors listed in `strided` (placeholders of the declaration or `output`), whose outer
/// dimensions may have any strides (a tile of a larger matrix: the matcher finds them from
/// the stage's accesses and passes them on); their innermost dimension stays contiguous.
/// te::Error when the declaration breaks a rule (which one, and where).
TE_API TensorIntrinsic tensor_intrinsic(const std::string& name, const Tensor& output,
                                        const std::map<std::string, std::string>& implementations,
                                        const std::vector<Tensor>& strided = {});

/// te's built-in intrinsics.
namespace intrinsics {
/// 16 int32 accumulators, each adding the dot product of 4 uint8 with 4 int8 (x86's
/// vpdpbusd on a zmm register, as TVM's int8 dense uses it):
/// `C[i] += sum_k int32(A[k]) * int32(B[i, k])`, A: uint8[4], B: int8[16, 4], C: int32[16].
/// The LLVM implementation uses avx512vnni where the build's target CPU has it and
/// otherwise an equivalent sequence of generic vector IR, so the same schedule runs on any
/// CPU. Products and sums wrap as int32 (vpdpbusd does not saturate).
TE_API TensorIntrinsic x86_dot_16x4_u8s8();
/// The same declaration, whose LLVM implementation requires avx512vnni: building for a CPU
/// without it is a te::Error instead of a fallback (for code that must be the instruction).
TE_API TensorIntrinsic x86_vnni_dot_16x4_u8s8();
}  // namespace intrinsics

}  // namespace te
