// A user's CUDA program built with plain nvcc: it calls the launchers te generated at
// build time (vadd.cu, matmul.cu, te_kernels.h) and links nothing of te.
// Exit status: 0 results correct, 1 wrong results or a CUDA error, 77 no GPU (skipped).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "te_kernels.h"

namespace {

bool ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  return false;
}

// Milliseconds per call of f, averaged over `runs` calls after one warm-up call.
template <typename F>
float time_ms(F f, int runs) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  f();
  cudaEventRecord(start);
  for (int r = 0; r < runs; ++r) f();
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / static_cast<float>(runs);
}

bool run_vadd() {
  const int n = (1 << 24) + 3;  // not a multiple of the block size
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i % 1000) * 0.5f;
    b[i] = static_cast<float>(i % 77) - 3.0f;
  }
  size_t bytes = sizeof(float) * n;
  float *da, *db, *dc;
  if (!ok(cudaMalloc(&da, bytes), "cudaMalloc") || !ok(cudaMalloc(&db, bytes), "cudaMalloc") ||
      !ok(cudaMalloc(&dc, bytes), "cudaMalloc"))
    return false;
  cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice);
  bool good = ok(vadd(da, db, dc, n, nullptr), "vadd") && ok(cudaDeviceSynchronize(), "vadd kernel");
  cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost);
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += c[i] != a[i] + b[i];
  float ms = time_ms([&] { vadd(da, db, dc, n, nullptr); }, 50);
  std::printf("vadd   n = %d: %s, %.3f ms, %.1f GB/s\n", n, wrong ? "WRONG" : "correct", ms, 3.0 * bytes / (ms * 1e6));
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  return good && wrong == 0;
}

bool run_matmul() {
  const int n = kMatmulSize;
  std::vector<float> a(n * n), b(n * n), c(n * n);
  for (int i = 0; i < n * n; ++i) {
    a[i] = static_cast<float>((i * 7) % 13) / 13.0f - 0.5f;
    b[i] = static_cast<float>((i * 5) % 11) / 11.0f - 0.5f;
  }
  size_t bytes = sizeof(float) * n * n;
  float *da, *db, *dc;
  if (!ok(cudaMalloc(&da, bytes), "cudaMalloc") || !ok(cudaMalloc(&db, bytes), "cudaMalloc") ||
      !ok(cudaMalloc(&dc, bytes), "cudaMalloc"))
    return false;
  cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice);
  bool good = ok(matmul(da, db, dc, nullptr), "matmul") && ok(cudaDeviceSynchronize(), "matmul kernel");
  cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost);
  double max_error = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double ref = 0;
      for (int k = 0; k < n; ++k) ref += static_cast<double>(a[i * n + k]) * b[k * n + j];
      max_error = std::fmax(max_error, std::fabs(ref - c[i * n + j]));
    }
  bool close = max_error < 1e-3;
  float ms = time_ms([&] { matmul(da, db, dc, nullptr); }, 20);
  std::printf("matmul %d x %d: %s (max error %.2g), %.3f ms, %.1f GFLOP/s\n", n, n, close ? "correct" : "WRONG",
              max_error, ms, 2.0 * n * n * n / (ms * 1e6));
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  return good && close;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: the program was built, nothing to run\n");
    return 77;
  }
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  std::printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
  bool good = run_vadd();
  good = run_matmul() && good;
  return good ? 0 : 1;
}
