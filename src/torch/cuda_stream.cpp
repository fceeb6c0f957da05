// PyTorch's current CUDA stream, for te's CUDA kernels (cuda_kernel.h). cmake/torch.cmake
// defines TE_TORCH_WITH_CUDA where the libtorch that te_torch links has CUDA (c10_cuda).
#include "torch/cuda_kernel.h"

#ifdef TE_TORCH_WITH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

namespace te::torch::detail {

void* current_cuda_stream(c10::DeviceIndex device) {
#ifdef TE_TORCH_WITH_CUDA
  return c10::cuda::getCurrentCUDAStream(device).stream();
#else
  (void)device;
  TORCH_CHECK(false,
              "te::torch: te_torch was built with a libtorch without CUDA (no c10_cuda), so it cannot launch on "
              "PyTorch's current CUDA stream: build te against the CUDA libtorch that runs the extension");
#endif
}

}  // namespace te::torch::detail
