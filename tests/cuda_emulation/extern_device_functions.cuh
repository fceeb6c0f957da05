// __device__ functions that the CUDA tests call through call_extern, given to build_cuda
// in CudaOptions::extern_headers. The tests also include this file on the host (with
// __device__ defined empty) as the functions interpret() calls: one definition for both.
#pragma once

// x above 0, slope * x below.
__device__ inline float ext_leaky_relu(float x, float slope) { return x > 0.0f ? x : slope * x; }

// |a - b|, wrapped to int32 (unsigned arithmetic: defined for every input).
__device__ inline int32_t ext_absdiff(int32_t a, int32_t b) {
  return (int32_t)(a > b ? (uint32_t)a - (uint32_t)b : (uint32_t)b - (uint32_t)a);
}

// Whether x lies in [0, 1].
__device__ inline bool ext_in_unit(double x) { return x >= 0.0 && x <= 1.0; }

// v clamped to int8's range.
__device__ inline int8_t ext_clamp_i8(int32_t v) { return (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v); }
