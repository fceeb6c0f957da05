// The Ansor operator suite (bench/ansor_suite.h, at the paper's shapes) as GPU kit bench
// entries: each kernel auto-scheduled for CUDA (the rules, trials = 0), against PyTorch's
// CUDA operator (cuDNN's convolutions, cuBLAS's matmul) on the same layouts.
#pragma once
#include <string>
#include <vector>

#include "gpu_kit/bench_case.h"

namespace te {

// The suite's kernels at the paper's shapes, auto-scheduled for CUDA, with their PyTorch calls.
std::vector<BenchCase> ansor_bench_cases();

// How scripts/gpu_check.py computes the suite kernel `name` in PyTorch:
// {"reference": ..., "reference_args": {...}}.
nlohmann::json ansor_torch_call(const std::string& name);

}  // namespace te
