// te_compile_once KERNEL [cached]: the child of te_bench's cold compile-latency cases. In
// a fresh process that links only te, defines, schedules, lowers and JIT-compiles one
// kernel of te_kernels.h ("vadd", "sgemm" or "grid_sample") and prints the wall and CPU
// milliseconds; with "cached", through te's caches (the persistent one: TE_CACHE_DIR).
#include <chrono>
#include <cstdio>
#include <ctime>
#include <exception>
#include <string>

#include "te_kernels.h"

static double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

int main(int argc, char** argv) {
  const bool cached = argc == 3 && std::string(argv[2]) == "cached";
  if (argc != 2 && !cached) {
    std::fprintf(stderr, "usage: te_compile_once vadd|sgemm|grid_sample [cached]\n");
    return 2;
  }
  try {
    double cpu0 = cpu_seconds();
    auto t0 = std::chrono::steady_clock::now();
    te_bench::compile_kernel(argv[1], cached);
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%.3f %.3f\n", wall * 1e3, (cpu_seconds() - cpu0) * 1e3);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "te_compile_once: %s\n", e.what());
    return 1;
  }
  return 0;
}
