// The device functions that implement te's CUDA tensor-core intrinsics (text a .cu file
// defines before its kernels). Each takes the lane's part of its fragments as arrays
// (the layouts of PTX's m16n8k16 figures) and a memory region as a pointer and a row
// stride in elements. The lane is threadIdx.x (the kernel's threadIdx.x extent is 32).
#pragma once
#include <optional>
#include <string>

#include "codegen_cuda_src/helpers.h"
#include "te/dtype.h"

namespace te::cuda {

enum class TensorCoreHelper : uint8_t {
  Mma,         // c += a * b (16-bit inputs, float accumulators)
  LoadA,       // the "a" fragment, each lane loading its elements
  LdmatrixA,   // the same from shared memory through ldmatrix.x4 (sm_75+), else LoadA
  LoadB,       // the "b" fragment from a k-major tile
  LdmatrixB,   // the same through ldmatrix.x2.trans
  LoadBT,      // the "b" fragment from a tile stored transposed (a row per column of b)
  LdmatrixBT,  // the same through ldmatrix.x2
  StoreC,      // the "c" fragment to memory
  FillC,       // the "c" fragment set to 0
};

// The helper that loads what `lane_loads` (LoadA, LoadB, LoadBT) loads through ldmatrix,
// falling back to it; nullopt for another helper.
std::optional<TensorCoreHelper> ldmatrix_helper(TensorCoreHelper lane_loads);

// Registers helper h (and the helpers it calls) for the 16-bit type t (ignored for
// StoreC and FillC) and returns its name.
std::string use_tensor_core_helper(HelperSet& helpers, TensorCoreHelper h, DataType t);

}  // namespace te::cuda
