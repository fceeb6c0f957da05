// One bench entry of the GPU kit (tests/gpu_kit/make_gpu_kit.cpp writes it, scripts/gpu_check.py
// times it against PyTorch on the GPU machine).
#pragma once
#include <te/cuda.h>
#include <te/lower.h>

#include <nlohmann/json.hpp>
#include <string>

namespace te {

// A kernel timed at a large shape: its .cu in dir, how to make its arguments on the GPU,
// which PyTorch call it is compared with, and the bytes / FLOPs one call moves / does.
struct BenchCase {
  std::string name;
  LoweredFunc func;
  std::string reference;  // scripts/gpu_check.py's name for the PyTorch call
  // per launcher buffer, in order: shape, role and (default float32) dtype
  nlohmann::json shapes;
  // Per launcher scalar, in order; or an object of values by the scalars' names.
  nlohmann::json scalars = nlohmann::json::array();
  double bytes = 0, flops = 0;
  std::string sass;  // an instruction the kernel's SASS must have (cuobjdump on the GPU machine)
  CudaOptions options{};
  // The reference's parameters (a convolution's strides, layouts...), when it has any.
  nlohmann::json reference_args = nlohmann::json::object();
};

}  // namespace te
