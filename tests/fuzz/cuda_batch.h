// GPU-bound fuzz cases through the CUDA backend: build_cuda() on each case's function,
// all of a batch compiled into one CPU program by tests/cuda_emulation/harness.h (each
// GPU thread a real thread, __shared__ per block, __syncthreads() a barrier), each
// launcher run on the case's inputs and compared with interpret().
#pragma once
#include <vector>

#include "fuzz_case.h"

namespace te::fuzz {

class CudaBatch {
 public:
  // Adds a case that is GPU-bound and was generated without failure or rejection.
  void add(const FuzzCase& c) { cases_.push_back(&c); }
  size_t size() const { return cases_.size(); }
  // Compiles and runs every case; one result per case, in the order added.
  std::vector<CaseResult> run();

 private:
  std::vector<const FuzzCase*> cases_;
};

}  // namespace te::fuzz
