// The te kernels the benchmarks time: each defined, scheduled and lowered here, so that the
// compile-latency cases time exactly what the speed cases run.
#pragma once
#include <te/te.h>

#include <cstdint>
#include <string>

namespace te_bench {

// C[i] = A[i] + B[i] over n floats: chunks of 64 Ki elements in parallel, each a loop of
// vectors of the host's width.
te::LoweredFunc te_vadd(int n);

// C = A x B (row-major): the definition as written (naive) or examples/matmul_schedule.h's
// fastest schedule.
te::LoweredFunc te_sgemm(int M, int N, int K, bool best);

// grid_sample bilinear / zeros / align_corners = false, NCHW, scheduled by
// te::ops::schedule_grid_sample_cpu. Parameters: data, grid, output.
te::LoweredFunc te_grid_sample(int64_t N, int64_t C, int64_t H, int64_t W, int64_t Ho, int64_t Wo);

// Lowers and builds one of "vadd", "sgemm", "grid_sample" (the shapes the speed cases use,
// sgemm with its best schedule) with the compile caches off, so every call compiles; with
// use_cache, through them (the persistent one when TE_CACHE_DIR and TE_CACHE=1 say so).
te::Module compile_kernel(const std::string& kernel, bool use_cache = false);

}  // namespace te_bench
