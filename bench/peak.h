// The machine's floating-point peak: fused multiply-adds with no memory access, many
// independent chains, on every thread of the run at once.
#pragma once
#include <string>

namespace te_bench {

struct Peak {
  int lanes = 0;             // float32 lanes of the widest vectors measured (0: not measured)
  double gflops = 0;         // float32 GFLOP/s of all threads together at that width
  double gflops_avx2 = 0;    // the same with 256-bit vectors (0: no AVX2 + FMA)
  double gflops_avx512 = 0;  // the same with 512-bit vectors (0: no AVX-512)
};

// Runs short bursts for about `seconds` on `threads` threads at once (each thread timing
// its own bursts) and keeps each thread's fastest burst: on a shared
// machine, the fastest burst is the one another tenant did not slow down.
Peak measure_peak(int threads, double seconds);

// One line describing the processor (from /proc/cpuinfo where there is one).
std::string cpu_model();

}  // namespace te_bench
