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

// What an intrinsic's operand is: a region of memory (a pointer and a row stride), or a
// warp fragment (a "warp" buffer that each lane holds part of, in the layout named).
enum class Fragment : uint8_t { Memory, A, B, C };

// A fragment's tile and the elements each of the 32 lanes holds.
struct FragmentShape {
  int rows = 0, cols = 0, per_lane = 0;
};
FragmentShape fragment_shape(Fragment f);
const char* fragment_name(Fragment f);  // "a", "b", "c" (or "memory")

// A CUDA implementation: its operands' kinds (the declaration's inputs, then its output).
// Every one te has runs in a whole warp.
struct CudaIntrinsic {
  std::vector<Fragment> operands;
};

// The implementation n's intrinsic names for target "cuda", or nullptr when te has none
// of that name.
const CudaIntrinsic* cuda_intrinsic(const TensorIntrinsicCallNode* n);

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
