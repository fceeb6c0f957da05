// Plain C++ baselines, compiled with -O3 for the host CPU (-march=native): what a user
// would write by hand instead of using te. Each runs on the run's threads (te's pool).
#pragma once
#include <cstddef>
#include <cstdint>

namespace te_bench {

// C = A x B, row-major, as the triple loop anyone writes (i, k, j: the inner loop runs
// along rows of B and C, so the compiler vectorizes it). Rows are split over the threads.
void sgemm_loop(const float* A, const float* B, float* C, int M, int N, int K);

// memcpy of n bytes, split into one contiguous part per thread.
void copy_bytes(void* dst, const void* src, size_t n);

// grid_sample, bilinear, zeros padding, align_corners = false, NCHW, scalar code: for each
// output pixel, its four taps and weights once, then every channel. Output rows are split
// over the threads.
void grid_sample_scalar(const float* data, const float* grid, float* out, int64_t N, int64_t C, int64_t H, int64_t W,
                        int64_t Ho, int64_t Wo);

// BEVDet's bev_pool_v2 as a plain loop (its CPU reference's structure): zero the output,
// then per interval, per point, out row += depth * feature row.
void bev_pool_loop(const float* depth, const float* feat, const int32_t* ranks_depth, const int32_t* ranks_feat,
                   const int32_t* ranks_bev, const int32_t* interval_starts, const int32_t* interval_lengths,
                   int n_intervals, int channels, float* out, size_t out_size);

}  // namespace te_bench
