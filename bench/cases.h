// The benchmark cases, registered in the order they run: within each group the baselines
// first, then te (see bench_util.h).
#pragma once
#include <string>

#include "peak.h"

namespace te_bench {

void register_peak(const Peak& peak);
void register_vadd();
void register_sgemm(const Peak& peak);
// int8 GEMM with the tensorize intrinsic against te's float32 sgemm (bench_gemm_int8.cpp).
void register_gemm_int8();
void register_grid_sample();
void register_bev_pool();
// Forward + backward (grid_sample, bev_pool_v2) against PyTorch's autograd.
void register_backward();
// Scaled dot-product attention (bench_attention.cpp) against PyTorch and a C++ loop.
void register_attention(const Peak& peak);
// cse/*: kernels lowered with common-subexpression elimination off (baseline) and on.
void register_cse();
// Compile latency; each cold sample runs a child process (te_compile_once next to
// self_exe for te, self_exe --compile_once=<peer>:<kernel> for a peer).
void register_compile(const std::string& self_exe);
// Auto-tuning (bench_tune.cpp): default vs hand-written vs tuned; tunes at registration,
// before any kernel of the run executes.
void register_tune();
// The auto-scheduling suite (bench_auto_schedule.cpp): default vs rules vs searched vs hand
// and peers; searches at registration, as register_tune tunes.
void register_auto_schedule();

// The child side of a peer's cold compile case: compiles one kernel in this fresh process,
// prints the wall and CPU milliseconds it took and returns the exit code.
// who_kernel: "halide:sgemm"...
int compile_once(const std::string& who_kernel);

}  // namespace te_bench
