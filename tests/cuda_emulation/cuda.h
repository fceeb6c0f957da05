// Emulation stand-in for the CUDA driver API's header: what te's Hopper launchers use
// (tensor maps, tensor_map.h), and the runtime's way to the driver's functions
// (cudaGetDriverEntryPoint*, which the runtime declares: te's launchers include cuda.h
// first, so the emulation's are here).
#pragma once
#include "cuda_emulation.h"
#include "tensor_map.h"

enum cudaDriverEntryPointQueryResult {
  cudaDriverEntryPointSuccess = 0,
  cudaDriverEntryPointSymbolNotFound = 1,
  cudaDriverEntryPointVersionNotSufficent = 2,
};
enum { cudaEnableDefault = 0 };

// The emulation's driver has one function: cuTensorMapEncodeTiled (since CUDA 12.0).
inline cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** function, unsigned int version,
                                                    unsigned long long flags,
                                                    cudaDriverEntryPointQueryResult* status = nullptr) {
  if (symbol == nullptr || function == nullptr || flags != cudaEnableDefault) return cudaErrorInvalidValue;
  *function = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (std::strcmp(symbol, "cuTensorMapEncodeTiled") == 0) {
    found = version >= 12000 ? cudaDriverEntryPointSuccess : cudaDriverEntryPointVersionNotSufficent;
    if (found == cudaDriverEntryPointSuccess) *function = reinterpret_cast<void*>(&cuTensorMapEncodeTiled);
  }
  if (status != nullptr) *status = found;
  return cudaSuccess;
}
inline cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** function, unsigned long long flags,
                                           cudaDriverEntryPointQueryResult* status = nullptr) {
  return cudaGetDriverEntryPointByVersion(symbol, function, CUDART_VERSION, flags, status);
}
