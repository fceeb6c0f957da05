// Halide 14 as a peer (only when CMake finds it: TE_BENCH_HALIDE): the same kernels with
// schedules written as well as we could. Halide's headers stay inside halide_peer.cpp.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace te_bench::halide {

// The target Halide JIT-compiles for ("x86-64-linux-avx-avx2-avx512-...").
std::string target();

// Each builds and JIT-compiles a pipeline over the given arrays (row-major, as te's) and
// returns a call that runs it once.
std::function<void()> vadd(const float* a, const float* b, float* c, int64_t n);
std::function<void()> sgemm(const float* A, const float* B, float* C, int M, int N, int K);
std::function<void()> grid_sample(const float* data, const float* grid, float* out, int N, int C, int H, int W, int Ho,
                                  int Wo);

// A suite kernel of bench_auto_schedule.cpp ("sgemm_1024", "conv2d_...", ...) written in
// Halide without a schedule, scheduled by one of Halide's autoschedulers ("Adams2019",
// "Mullapudi2016") for `threads` threads and JIT-compiled: a call that runs it once on
// the given arrays (row-major, te's shapes). Throws when the plugin does not load or the
// kernel has no Halide algorithm here.
std::function<void()> auto_scheduled(const std::string& scheduler, const std::string& kernel,
                                     const std::vector<const float*>& inputs,
                                     const std::vector<std::vector<int64_t>>& input_shapes, float* out,
                                     const std::vector<int64_t>& out_shape, int threads);

// Defines and JIT-compiles a fresh pipeline for "vadd", "sgemm" or "grid_sample" (the
// shapes of the compile cases) and returns the seconds it took.
double compile_seconds(const std::string& kernel);

}  // namespace te_bench::halide
