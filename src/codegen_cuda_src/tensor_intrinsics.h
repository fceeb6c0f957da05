// Tensor intrinsics (Stage::tensorize) in CUDA modules.
#pragma once
#include "te/ir.h"

namespace te::cuda {

// te::Error naming the function, the intrinsic and the target for the first tensor
// intrinsic that has no CUDA implementation. No intrinsic has one yet (the emitters of
// mma.sync / ldmatrix will register here, under the name the intrinsic's "cuda"
// implementation gives); until then every tensorized function is refused.
void check_tensor_intrinsics(const LoweredFunc& f);

}  // namespace te::cuda
