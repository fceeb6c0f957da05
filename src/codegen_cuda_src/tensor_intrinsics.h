// Tensor intrinsics (Stage::tensorize) in CUDA modules: the CUDA implementations te has
// (the tensor-core intrinsics of include/te/tensorize.h), their operands' kinds, and the
// statement each call prints as.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "codegen_cuda_src/helpers.h"
#include "te/ir.h"

namespace te::cuda {

// What an intrinsic's operand is: a region of memory (a pointer and a row stride), a
// warp fragment (a "warp" buffer that each lane holds part of, in the layout named), a
// warpgroup's wgmma accumulator ("warpgroup"), a K-major tile of a swizzled shared
// buffer (wgmma's operands: rows of exactly the swizzle's width), or an MN-major one
// (wgmma's B as K x N: whole column blocks of the swizzle's width).
enum class Fragment : uint8_t { Memory, A, B, C, WgmmaA, WgmmaD, KMajorShared, MNMajorShared };

// A fragment's tile and the elements each thread of its group (a warp: 32; a warpgroup:
// 128) holds.
struct FragmentShape {
  int rows = 0, cols = 0, per_lane = 0;
};
const char* fragment_name(Fragment f);  // "a", "b", "c", "wgmma accumulator" (or "memory")
// The memory scope a fragment kind lives in (Warp or Warpgroup; Global for memory kinds).
MemoryScope fragment_scope(Fragment f);

// The first slot of a thread's part of the fragment of shape s holding element `offset`
// of a warp or warpgroup buffer with rows of `row` elements: the thread's array holds the
// buffer's fragments in row-major order of fragments, per_lane elements each.
Expr fragment_slot(const FragmentShape& s, const Expr& offset, int64_t row);

// A CUDA implementation: its operands' kinds (the declaration's inputs, then its output)
// with the tile of each fragment, and how many threads run it together (a warp's 32 or a
// warpgroup's 128).
struct CudaIntrinsic {
  std::vector<Fragment> operands;
  std::vector<FragmentShape> shapes;  // per operand; rows == 0 for memory
  int threads = 32;
};

// The implementation n's intrinsic names for target "cuda", or nullptr when te has none
// of that name.
const CudaIntrinsic* cuda_intrinsic(const TensorIntrinsicCallNode* n);

// Whether n is a wgmma that the helper leaves in flight: the kernel must wait for it
// before each barrier (te_wgmma_wait_all).
bool issues_async_wgmma(const TensorIntrinsicCallNode* n);

// The register fragment an in-flight wgmma of n reads as A (cuda_wgmma_m64nNk16_rs):
// nothing may write it until the wgmma completes. Null for every other call.
const BufferNode* wgmma_register_operand(const TensorIntrinsicCallNode* n);

// The GPU architecture n's CUDA instructions need: compute capability times 10 (0: none,
// plain code), whether arch-specific ("a"), and the instruction, in words.
struct ArchNeed {
  int number = 0;
  bool specific = false;
  std::string instruction;
};
ArchNeed arch_needed(const TensorIntrinsicCallNode* n);

// Every tensor intrinsic call of f (of s), in order.
std::vector<const TensorIntrinsicCallNode*> tensor_intrinsic_calls(const LoweredFunc& f);
std::vector<const TensorIntrinsicCallNode*> tensor_intrinsic_calls(const Stmt& s);

// te::Error naming the function, the intrinsic and the target for the first tensor
// intrinsic that has no CUDA implementation te knows.
void check_tensor_intrinsics(const LoweredFunc& f);

// Prints the call n (a warp's intrinsic inside a kernel): lines that check at run time
// what the code generator could not prove (a fragment's offset on a fragment boundary),
// then the helper's call. print: an index expression as C; buffer: a buffer's C name.
std::vector<std::string> print_tensor_intrinsic(const TensorIntrinsicCallNode* n,
                                                const std::function<std::string(const Expr&)>& print,
                                                const std::function<std::string(const Buffer&)>& buffer,
                                                HelperSet& helpers);

}  // namespace te::cuda
