// te's benchmarks: one run at the thread count TE_NUM_THREADS gives (scripts/bench.sh runs
// 1 and 2). Google Benchmark's flags work as usual; besides them:
//   --summary_out=FILE     also write the Markdown summary table to FILE
//   --compile_once=WHO:K   (internal) the child of a cold compile-latency case
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <te/te.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "bench_util.h"
#include "cases.h"
#include "peak.h"
#ifdef TE_BENCH_HALIDE
#include "halide_peer.h"
#endif
#ifdef TE_BENCH_OPENBLAS
#include <cblas.h>
#endif

namespace te_bench {

// The peak measured at start-up (the fractions of peak use it), measured once more here.
void register_peak(const Peak& peak) {
  add(
      "peak", "fma",
      [peak](benchmark::State& st) {
        Peak again;
        for (auto _ : st) st.SetIterationTime(time_call([&] { again = measure_peak(threads(), 0.5); }));
        if (peak.gflops_avx2 > 0) st.counters["avx2_GFLOP/s"] = std::max(peak.gflops_avx2, again.gflops_avx2);
        if (peak.gflops_avx512 > 0) st.counters["avx512_GFLOP/s"] = std::max(peak.gflops_avx512, again.gflops_avx512);
        st.SetLabel(peak.lanes ? fmt::format("{}-lane FMA", peak.lanes) : "not measured on this CPU");
      },
      1);
}

}  // namespace te_bench

// On one thread, the process (te, OpenBLAS, Halide, and the PyTorch and C++ peers it
// starts, which inherit the mask) stays on the CPU it started on: on a shared VM one vCPU
// can run memory-bound code 20-25% slower than the other for minutes while its FMA peak is
// the same (a neighbour on the core's other hyperthread), so a ratio is only fair when
// both sides ran on the same one. TE_BENCH_NO_PIN=1 leaves the scheduler free. Returns the
// CPU, or -1 when not pinned.
static int pin_to_current_cpu() {
  if (std::getenv("TE_BENCH_NO_PIN")) return -1;
  const int cpu = sched_getcpu();
  if (cpu < 0) return -1;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return sched_setaffinity(0, sizeof(one), &one) == 0 ? cpu : -1;
}

static std::string self_exe(const char* argv0) {
  std::vector<char> buf(4096);
  ssize_t len = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  return len > 0 ? std::string(buf.data(), size_t(len)) : std::string(argv0);
}

int main(int argc, char** argv) {
  std::string summary_out;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strncmp(a, "--compile_once=", 15) == 0) return te_bench::compile_once(a + 15);
    if (std::strncmp(a, "--summary_out=", 14) == 0)
      summary_out = a + 14;
    else
      args.push_back(argv[i]);
  }
  int nargs = static_cast<int>(args.size());

#if defined(TE_BENCH_OPENBLAS) && defined(__x86_64__)
  // OpenBLAS 0.3.21 does not know AMD Zen 4/5 as AVX-512 CPUs (and this environment sets
  // OPENBLAS_CORETYPE=Haswell): its AVX2 kernels run at half of what the CPU can do. On an
  // AVX-512 CPU the bench asks for its AVX-512 (SkylakeX) kernels so that te is compared
  // with OpenBLAS at its best; OpenBLAS picks its kernels when it is loaded, hence the
  // restart. TE_BENCH_KEEP_OPENBLAS_CORETYPE=1 keeps the environment's choice.
  __builtin_cpu_init();
  const char* core = std::getenv("OPENBLAS_CORETYPE");
  const std::string core_name = core ? core : "";
  if (__builtin_cpu_supports("avx512f") && !std::getenv("TE_BENCH_KEEP_OPENBLAS_CORETYPE") && core_name != "SkylakeX" &&
      core_name != "Cooperlake" && core_name != "SapphireRapids") {
    setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
    execv("/proc/self/exe", argv);
  }
#endif

  const int threads = te_bench::threads();
  const int pinned_cpu = threads == 1 ? pin_to_current_cpu() : -1;
  // Peers use the run's threads too.
  setenv("HL_NUM_THREADS", std::to_string(threads).c_str(), 1);
  te_bench::Peak peak = te_bench::measure_peak(threads, 1.0);

  benchmark::Initialize(&nargs, args.data());
  if (benchmark::ReportUnrecognizedArguments(nargs, args.data())) return 1;
  std::string machine = fmt::format("{}; te compiles for {}; {} thread(s); FMA peak {:.0f} GFLOP/s ({}-lane)",
                                    te_bench::cpu_model(), te::host_cpu(), threads, peak.gflops, peak.lanes);
  if (pinned_cpu >= 0) machine += fmt::format("; pinned to CPU {}", pinned_cpu);
  benchmark::AddCustomContext("te_machine", machine);
#ifdef TE_BENCH_HALIDE
  benchmark::AddCustomContext("halide_target", te_bench::halide::target());
  machine += "; Halide target " + te_bench::halide::target();
#endif
#ifdef TE_BENCH_OPENBLAS
  benchmark::AddCustomContext("openblas_core", openblas_get_corename());
  machine += std::string("; OpenBLAS kernels ") + openblas_get_corename();
#endif

  te_bench::register_peak(peak);
  te_bench::register_vadd();
  te_bench::register_sgemm(peak);
  te_bench::register_gemm_int8();
  te_bench::register_grid_sample();
  te_bench::register_bev_pool();
  te_bench::register_backward();
  te_bench::register_attention(peak);
  te_bench::register_cse();
  te_bench::register_compile(self_exe(argv[0]));
  te_bench::register_tune();
  te_bench::register_auto_schedule();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  std::string table = te_bench::results().markdown();
  std::cout << "\n" << machine << "\n\n" << table;
  if (!summary_out.empty()) std::ofstream(summary_out) << machine << "\n\n" << table;
  return 0;
}
