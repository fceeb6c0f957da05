/* \file
 * The CUDA kernels that te_add_torch_extension(<name> ... CUDA) compiles into a PyTorch
 * extension: a table generated at build time (docs/pytorch.md, "CUDA"), which
 * TE_TORCH_LIBRARY hands to te::torch::register_op. Plain C, so that the generated table
 * needs neither libtorch nor CUDA headers. Not for use outside te_torch and its generator.
 */
#ifndef TE_TORCH_CUDA_KERNELS_H_
#define TE_TORCH_CUDA_KERNELS_H_
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One kernel of the table: an operator's forward or backward. */
typedef struct te_torch_cuda_kernel {
  /** "ns::op" or "ns::op_backward". */
  const char* op;
  /** FNV-1a (64 bits) of the CUDA source te generated for it: registration regenerates the
   *  source from the definition and refuses a table compiled from another one. */
  uint64_t source_hash;
  /** Launches te's kernels on `device` and `stream` (a cudaStream_t): `buffers` are the
   *  device pointers in the kernel's parameter order (inputs, then outputs), `values` its
   *  scalar parameters (the shape variables) in order. Returns the cudaError_t. */
  int (*launch)(void* const* buffers, const int64_t* values, int device, void* stream);
} te_torch_cuda_kernel;

/** The table of one extension. */
typedef struct te_torch_cuda_kernels {
  const te_torch_cuda_kernel* kernels; /**< count entries */
  int count;                           /**< number of kernels */
  /** cudaGetErrorString of the runtime the kernels were linked with. */
  const char* (*error_string)(int error);
  /** How the kernels were compiled: "nvcc -gencode ..." or "host C++ (CUDA emulation)". */
  const char* compiled_with;
} te_torch_cuda_kernels;

#ifdef __cplusplus
}
#endif
#endif /* TE_TORCH_CUDA_KERNELS_H_ */
