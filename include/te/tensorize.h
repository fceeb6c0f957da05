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
  /// For a reduction: the intrinsic that replaces the stage's init nest under the same
  /// axis (TVM's reduce_init: a fragment's zeroing, which only the hardware's layout can
  /// do), or null when te's own init loop stays (see TensorIntrinsic::with_init).
  std::shared_ptr<const TensorIntrinsicNode> init;
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
  /// This reduction intrinsic with `init` as its init: where a stage is tensorized with
  /// it, the stage's init nest under the tensorized axis (te's store of the reducer's
  /// identity, over the same data-parallel loops) is matched against init's declaration
  /// and replaced by it as well. init's declaration must be a compute without a
  /// reduction, of the shape and dtype of this one's output. te::Error otherwise.
  TensorIntrinsic with_init(const TensorIntrinsic& init) const;

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

/// `T[i, j] = S[j, i]` over an n x n block of t (any scalar type of 8, 16, 32 or 64 bits; n
/// a power of two from 2 to 64), S and T rows of any stride (blocks of larger tensors):
/// the LLVM implementation loads S's n rows as n vectors, transposes them in registers
/// (log2(n) rounds of n two-vector shuffles) and stores T's n rows, where a loop would
/// move one element at a time. auto_schedule uses it for a copy that transposes (an
/// NCHW result computed with its channels innermost, copied back), with n the target's
/// vector lanes. te::Error for another type or n.
TE_API TensorIntrinsic transpose(DataType t, int n);

/// \name CUDA tensor cores (docs/tensor_cores.md)
/// A warp's 32 threads run these together: the tensorized stage is computed outside every
/// threadIdx.x loop, in a kernel whose threadIdx.x extent is 32 (each threadIdx.y/z is one
/// warp). Fragments are buffers in scope "warp" (cache_read / cache_write with "warp"),
/// which each lane holds a part of, as PTX's m16n8k16 figures lay them out; only these
/// intrinsics may access them. Every operand may be a tile of a larger buffer (strided).
/// Without a GPU, interpret() runs the declarations and the generated helpers have a
/// warp-shuffle path (any GPU; the CUDA emulation) with the same sums in the same order.
/// @{
/// `C[i, j] += sum_k float(A[i, k]) * float(B[k, j])`, A: ab[16, 16] (fragment "a"),
/// B: ab[16, 8] ("b"), C: float32[16, 8] ("c"), ab float16 or bfloat16: one
/// `mma.sync.aligned.m16n8k16.row.col.f32` (sm_80+). Its init is cuda_fill_16x8_f32().
TE_API TensorIntrinsic cuda_mma_m16n8k16(DataType ab);
/// `C[i, j] = 0.0f` over a float32[16, 8] accumulator fragment (mma's init).
TE_API TensorIntrinsic cuda_fill_16x8_f32();
/// `F[i, k] = S[i, k]`, S: t[16, 16] rows of any stride in shared (or global) memory, F
/// the "a" fragment: `ldmatrix.x4` from shared memory with 16-byte aligned rows (sm_75+),
/// else each lane loads its elements.
TE_API TensorIntrinsic cuda_load_matrix_a_16x16(DataType t);
/// `F[k, j] = S[k, j]`, S: t[16, 8] (k-major, as a row-major K x N matrix's tile), F the
/// "b" fragment: `ldmatrix.x2.trans` from shared memory, else each lane's loads.
TE_API TensorIntrinsic cuda_load_matrix_b_16x8(DataType t);
/// `F[k, j] = S[j, k]`, S: t[8, 16] rows of any stride, row j holding column j of B (k
/// contiguous: a tile of a linear layer's [out, in] weight or of attention's keys, copied
/// as they lie), F the "b" fragment: `ldmatrix.x2` (no transpose) from shared memory,
/// else each lane's loads. With it a B stored N x K needs no transposing copy.
TE_API TensorIntrinsic cuda_load_matrix_bt_8x16(DataType t);
/// `D[i, j] = F[i, j]`, F a float32[16, 8] accumulator fragment, D rows of any stride in
/// global or shared memory: each lane stores its two pairs (float2 where aligned).
TE_API TensorIntrinsic cuda_store_16x8_f32();
/// @}

/// \name Hopper warpgroup MMA (sm_90a; docs/tensor_cores.md)
/// A warpgroup's 128 threads (4 consecutive warps) run these together: the tensorized
/// stage is computed outside every threadIdx.x loop, in a kernel whose threadIdx.x extent
/// is 128 (each threadIdx.y/z one warpgroup). The accumulators are buffers in scope
/// "warpgroup" (cache_write with "warpgroup"), each thread holding its part as the ISA's
/// wgmma figures lay it out; the operands are K-major tiles of shared buffers swizzled by
/// their rows' width (cache_read with "shared", then Stage::swizzle(row bytes): 32, 64 or
/// 128). n: a multiple of 8 from 8 to 256 (te::Error otherwise).
/// @{
/// `C[i, j] += sum_k float(A[i, k]) * float(B[j, k])`, A: ab[64, 16], B: ab[n, 16] (K-major:
/// row j of B is column j of the product, as a weight [out, in] or attention's keys are;
/// a row-major K x N matrix is cache_read with storage order {1, 0}), C: float32[64, n],
/// ab float16 or bfloat16: one `wgmma.mma_async.sync.aligned.m64nNk16.f32` on sm_90a
/// (nvcc -arch=sm_90a), left in flight until the kernel's next barrier or the store;
/// elsewhere each thread sums its accumulators
/// from shared memory, k in order. Its init is cuda_wgmma_fill_f32(n).
TE_API TensorIntrinsic cuda_wgmma_m64nNk16(DataType ab, int n);
/// `C[i, j] += sum_k float(A[i, k]) * float(B[k, j])`, A: ab[64, 16] K-major as above, B:
/// ab[16, n] MN-major (a tile of a row-major K x N matrix's shared copy, cache_read with
/// "shared" and no reordering): one `wgmma.mma_async` with imm-trans-b on sm_90a. B's
/// shared buffer is swizzled (Stage::swizzle of W bytes) with rows of a multiple of W,
/// so the CUDA backend keeps it in column blocks of W / 2 elements (BufferNode::
/// swizzle_row; TMA fills such a buffer a block at a time); n is a multiple of W / 2 and
/// the tile starts a block's 8-row pattern. Init: cuda_wgmma_fill_f32(n).
TE_API TensorIntrinsic cuda_wgmma_m64nNk16_kn(DataType ab, int n);
/// A from registers: `F[i, k] = S[i, k]` over 64 x 16, S a K-major tile of a swizzled
/// shared buffer (as cuda_wgmma_m64nNk16's A), F an ab warpgroup fragment (scope
/// "warpgroup": each thread's 8 elements as the ISA's wgmma A register figure lays them
/// out, warp w holding rows 16w..16w+15). ab float16 or bfloat16.
TE_API TensorIntrinsic cuda_wgmma_load_a(DataType ab);
/// `C[i, j] += sum_k float(A[i, k]) * float(B[j, k])` as cuda_wgmma_m64nNk16 with A a
/// warpgroup fragment (cuda_wgmma_load_a, or any stage the warpgroup computes in that
/// layout): one `wgmma.mma_async` with A in registers on sm_90a; elsewhere each thread
/// sums its accumulators, A's elements by warp shuffles. Init: cuda_wgmma_fill_f32(n).
TE_API TensorIntrinsic cuda_wgmma_m64nNk16_rs(DataType ab, int n);
/// The same with B MN-major (ab[16, n], as cuda_wgmma_m64nNk16_kn's).
TE_API TensorIntrinsic cuda_wgmma_m64nNk16_rs_kn(DataType ab, int n);
/// `C[i, j] = 0.0f` over a float32[64, n] warpgroup accumulator (wgmma's init).
TE_API TensorIntrinsic cuda_wgmma_fill_f32(int n);
/// `D[i, j] = F[i, j]`, F a float32[64, n] warpgroup accumulator, D rows of any stride in
/// global or shared memory: each thread stores its pairs (float2 where aligned).
TE_API TensorIntrinsic cuda_wgmma_store_f32(int n);
/// @}

/// \name Hopper TMA (sm_90; docs/tensor_cores.md)
/// The whole block runs these together: one thread issues, every thread waits.
/// @{

/// `D[i, j] = S[i, j]` over a rows x cols box (t: any 1, 2, 4 or 8-byte type): one TMA
/// copy (`cp.async.bulk.tensor.2d`) of a tile of a global tensor into shared memory,
/// issued by one thread of the block and completing on an mbarrier that every thread
/// waits on before the barrier after which the kernel reads the tile. S is a tile of a
/// dense global buffer parameter, seen as a matrix of its last dimension's columns (the
/// launcher encodes its `CUtensorMap` with `cuTensorMapEncodeTiled`); D is a dense
/// rows x cols tile of a shared buffer (cache_read with "shared"); a swizzled one
/// (Stage::swizzle) has rows of the swizzle's width, or whole rows of a buffer kept in
/// column blocks (a box per block). The box may not depend on threadIdx nor sit under a
/// condition on it. cols * t's bytes is a multiple of 16, rows and cols at most 256
/// (te::Error otherwise). Elsewhere than sm_90 the block's threads copy the box.
TE_API TensorIntrinsic cuda_tma_load_2d(DataType t, int rows, int cols);
/// Whether `in` is one of cuda_tma_load_2d's intrinsics.
TE_API bool is_cuda_tma_load(const TensorIntrinsicNode& in);
/// @}
}  // namespace intrinsics

}  // namespace te
