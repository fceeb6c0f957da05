#include "baselines.h"

#include <te/runtime/c_runtime_api.h>

#include <cmath>
#include <cstring>

namespace te_bench {

namespace {

// Runs f(begin, end) over [0, n) in one chunk per thread of te's pool.
template <typename F>
void parallel_range(int64_t n, F&& f) {
  te_parallel_for(
      n,
      [](int64_t begin, int64_t end, void* closure) -> int32_t {
        (*static_cast<F*>(closure))(begin, end);
        return 0;
      },
      &f);
}

}  // namespace

void sgemm_loop(const float* A, const float* B, float* C, int M, int N, int K) {
  parallel_range(M, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      float* c = C + i * N;
      for (int j = 0; j < N; ++j) c[j] = 0;
      for (int k = 0; k < K; ++k) {
        const float a = A[i * K + k];
        const float* b = B + static_cast<int64_t>(k) * N;
        for (int j = 0; j < N; ++j) c[j] += a * b[j];
      }
    }
  });
}

void copy_bytes(void* dst, const void* src, size_t n) {
  const int64_t parts = te_num_threads();
  parallel_range(parts, [&](int64_t begin, int64_t end) {
    size_t lo = n * static_cast<size_t>(begin) / static_cast<size_t>(parts);
    size_t hi = n * static_cast<size_t>(end) / static_cast<size_t>(parts);
    std::memcpy(static_cast<char*>(dst) + lo, static_cast<const char*>(src) + lo, hi - lo);
  });
}

void grid_sample_scalar(const float* data, const float* grid, float* out, int64_t N, int64_t C, int64_t H, int64_t W,
                        int64_t Ho, int64_t Wo) {
  parallel_range(N * Ho, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / Ho, ho = row % Ho;
      for (int64_t wo = 0; wo < Wo; ++wo) {
        const float* g = grid + ((n * Ho + ho) * Wo + wo) * 2;
        const float x = ((g[0] + 1) * static_cast<float>(W) - 1) * 0.5f;
        const float y = ((g[1] + 1) * static_cast<float>(H) - 1) * 0.5f;
        const float fx = std::floor(x), fy = std::floor(y);
        const int64_t x0 = static_cast<int64_t>(fx), y0 = static_cast<int64_t>(fy);
        const float wx1 = x - fx, wy1 = y - fy, wx0 = 1 - wx1, wy0 = 1 - wy1;
        const bool in_x0 = x0 >= 0 && x0 < W, in_x1 = x0 + 1 >= 0 && x0 + 1 < W;
        const bool in_y0 = y0 >= 0 && y0 < H, in_y1 = y0 + 1 >= 0 && y0 + 1 < H;
        const float w00 = in_y0 && in_x0 ? wy0 * wx0 : 0, w01 = in_y0 && in_x1 ? wy0 * wx1 : 0;
        const float w10 = in_y1 && in_x0 ? wy1 * wx0 : 0, w11 = in_y1 && in_x1 ? wy1 * wx1 : 0;
        // Out-of-image taps have weight 0; their loads are clamped into the image.
        auto at = [&](int64_t yy, int64_t xx) {
          yy = yy < 0 ? 0 : (yy >= H ? H - 1 : yy);
          xx = xx < 0 ? 0 : (xx >= W ? W - 1 : xx);
          return yy * W + xx;
        };
        const int64_t o00 = at(y0, x0), o01 = at(y0, x0 + 1), o10 = at(y0 + 1, x0), o11 = at(y0 + 1, x0 + 1);
        for (int64_t c = 0; c < C; ++c) {
          const float* plane = data + (n * C + c) * H * W;
          out[((n * C + c) * Ho + ho) * Wo + wo] =
              w00 * plane[o00] + w01 * plane[o01] + w10 * plane[o10] + w11 * plane[o11];
        }
      }
    }
  });
}

void bev_pool_loop(const float* depth, const float* feat, const int32_t* ranks_depth, const int32_t* ranks_feat,
                   const int32_t* ranks_bev, const int32_t* interval_starts, const int32_t* interval_lengths,
                   int n_intervals, int channels, float* out, size_t out_size) {
  std::fill(out, out + out_size, 0.0f);
  for (int i = 0; i < n_intervals; ++i) {
    const int32_t s = interval_starts[i];
    float* o = out + size_t(ranks_bev[s]) * size_t(channels);
    for (int32_t j = 0; j < interval_lengths[i]; ++j) {
      const float d = depth[ranks_depth[s + j]];
      const float* f = feat + size_t(ranks_feat[s + j]) * size_t(channels);
      for (int c = 0; c < channels; ++c) o[c] += d * f[c];
    }
  }
}

}  // namespace te_bench
