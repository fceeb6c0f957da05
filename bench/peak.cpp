#include "peak.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <thread>
#include <vector>

namespace te_bench {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// 12 independent FMA chains (enough to cover a 4-cycle latency on 2 or 3 FMA pipes), in
// assembly so that no compiler can shorten or spill them. R is "ymm" or "zmm".
// (Not laid out by clang-format: the chains read as a table.)
// clang-format off
#define TE_BENCH_FMA(R, k) "vfmadd231ps %%" R "13, %%" R "14, %%" R #k "\n\t"
#define TE_BENCH_FMA12(R)                                                                 \
  TE_BENCH_FMA(R, 0) TE_BENCH_FMA(R, 1) TE_BENCH_FMA(R, 2) TE_BENCH_FMA(R, 3)             \
  TE_BENCH_FMA(R, 4) TE_BENCH_FMA(R, 5) TE_BENCH_FMA(R, 6) TE_BENCH_FMA(R, 7)             \
  TE_BENCH_FMA(R, 8) TE_BENCH_FMA(R, 9) TE_BENCH_FMA(R, 10) TE_BENCH_FMA(R, 11)
#define TE_BENCH_FMA_LOOP(R)                                                              \
  __asm__ volatile("vxorps %%xmm13, %%xmm13, %%xmm13\n\t"                                 \
                   "vxorps %%xmm14, %%xmm14, %%xmm14\n\t"                                 \
                   "1:\n\t" TE_BENCH_FMA12(R) "dec %0\n\t"                                \
                   "jnz 1b\n\t"                                                           \
                   : "+r"(iterations)                                                     \
                   :                                                                      \
                   : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", \
                     "xmm9", "xmm10", "xmm11", "xmm13", "xmm14", "cc")
// clang-format on

static void fma_ymm(int64_t iterations) { TE_BENCH_FMA_LOOP("ymm"); }
static void fma_zmm(int64_t iterations) { TE_BENCH_FMA_LOOP("zmm"); }

struct Burst {
  int lanes;
  int64_t iterations;
  int bursts;
  std::vector<double> best;  // per thread: seconds of its fastest burst
};

static int32_t run_bursts(int64_t begin, int64_t end, void* closure) {
  auto* b = static_cast<Burst*>(closure);
  for (int64_t t = begin; t < end; ++t) {
    double best = 1e30;
    for (int i = 0; i < b->bursts; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      if (b->lanes == 16)
        fma_zmm(b->iterations);
      else
        fma_ymm(b->iterations);
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    b->best[static_cast<size_t>(t)] = best;
  }
  return 0;
}

static double peak_at(int lanes, int threads, double seconds) {
  // Bursts of 960 000 FMA instructions (about 0.1 ms at 16 lanes): short enough to fit
  // between other tenants' time slices.
  Burst b{lanes, 80000, std::max(1, static_cast<int>(seconds / 1e-4)), std::vector<double>(size_t(threads))};
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t) workers.emplace_back(run_bursts, t, t + 1, &b);
  run_bursts(0, 1, &b);
  for (std::thread& w : workers) w.join();
  double flops_per_burst = 12.0 * 2 * lanes * static_cast<double>(b.iterations);
  double total = 0;
  for (double s : b.best) total += flops_per_burst / s;
  return total * 1e-9;
}

Peak measure_peak(int threads, double seconds) {
  Peak p;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    p.gflops_avx2 = peak_at(8, threads, seconds / 2);
    p.lanes = 8;
    p.gflops = p.gflops_avx2;
  }
  if (__builtin_cpu_supports("avx512f")) {
    p.gflops_avx512 = peak_at(16, threads, seconds / 2);
    p.lanes = 16;
    p.gflops = p.gflops_avx512;
  }
  return p;
}
#else
Peak measure_peak(int, double) { return Peak{}; }
#endif

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  return "unknown processor";
}

}  // namespace te_bench
